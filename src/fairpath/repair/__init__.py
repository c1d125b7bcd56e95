"""Fair predictors for any business-necessity set: causal data adaptation (fairadapt's algorithm),
constrained learning (the paper's Appendix E), and the SPM–iPPM–AUC frontier across BN sets."""

from fairpath.repair._adaptation import FairAdapt
from fairpath.repair._constrained import ConstrainedLearner, ConstrainedPath
from fairpath.repair._frontier import BN_OF_RESOLVING, FrontierResult, decision_spm, frontier, parse_bn_sets
from fairpath.repair._graph import CausalGraph, graph_from_sfm, parse_bn_set, resolving_for_bn
from fairpath.repair._predictor import FairPredictor
from fairpath.repair._quantile import ENGINES, ForestQuantileEngine, LinearQuantileEngine, make_engine

__all__ = [
    "BN_OF_RESOLVING",
    "CausalGraph",
    "ConstrainedLearner",
    "ConstrainedPath",
    "ENGINES",
    "FairAdapt",
    "FairPredictor",
    "ForestQuantileEngine",
    "FrontierResult",
    "LinearQuantileEngine",
    "decision_spm",
    "frontier",
    "graph_from_sfm",
    "make_engine",
    "parse_bn_set",
    "parse_bn_sets",
    "resolving_for_bn",
]
