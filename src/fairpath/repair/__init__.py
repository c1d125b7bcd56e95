"""Fair predictors for any business-necessity set: a learner on causal data adaptation's fair twins
(:mod:`fairpath.adaptation`), constrained learning (the paper's Appendix E), and the SPM–iPPM–AUC frontier across BN sets."""

from fairpath.repair._constrained import ConstrainedLearner, ConstrainedPath
from fairpath.repair._frontier import BN_OF_RESOLVING, FrontierResult, decision_spm, frontier, parse_bn_sets
from fairpath.repair._predictor import FairPredictor, encode_features, feature_encoder
from fairpath.repair._repair import RepairResult, repair
from fairpath.repair._report import frontier_section

__all__ = [
    "encode_features",
    "feature_encoder",
    "frontier_section",
    "BN_OF_RESOLVING",
    "ConstrainedLearner",
    "ConstrainedPath",
    "RepairResult",
    "FairPredictor",
    "FrontierResult",
    "decision_spm",
    "frontier",
    "parse_bn_sets",
    "repair",
]
