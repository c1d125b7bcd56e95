"""Predictive parity, the Business Necessity Cookbook (Plečko & Bareinboim, Algorithm 1), the paper's
baseline predictors, and the audit that combines them with the causal decomposition into a report."""

from fairpath.parity._audit import audit
from fairpath.parity._audit_result import AuditResult
from fairpath.parity._baselines import GroupThresholdPredictor, UnconstrainedPredictor, baseline_predictors
from fairpath.parity._config import AuditConfig, load_config
from fairpath.parity._contrast_audit import ContrastAudit
from fairpath.parity._oracles import ORACLE_SATISFIES, oracle_predictors
from fairpath._vocabulary import parse_bn
from fairpath.parity._cookbook import DOCTRINE, CookbookResult, business_necessity_cookbook, holm, tost_p_value
from fairpath.parity._ppm import Bins, PredictiveParity, predictive_parity, quantile_bins
from fairpath.parity._ppm_decomposition import PPMDecomposition, ppm_decomposition

__all__ = [
    "AuditConfig",
    "AuditResult",
    "Bins",
    "ContrastAudit",
    "CookbookResult",
    "DOCTRINE",
    "GroupThresholdPredictor",
    "ORACLE_SATISFIES",
    "PPMDecomposition",
    "PredictiveParity",
    "UnconstrainedPredictor",
    "audit",
    "baseline_predictors",
    "business_necessity_cookbook",
    "holm",
    "load_config",
    "oracle_predictors",
    "parse_bn",
    "ppm_decomposition",
    "predictive_parity",
    "quantile_bins",
    "tost_p_value",
]
