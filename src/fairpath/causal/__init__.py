"""Causal fairness analysis in the Standard Fairness Model: the SFM, data preparation, and the
counterfactual decomposition TV = Ctf-DE − Ctf-IE − Ctf-SE with confidence intervals."""

from fairpath._validation import MIN_GROUP_ROWS_PER_FOLD
from fairpath.causal._data import PreparedData, prepare_data, resolve_level
from fairpath.causal._decompose import NON_ESTIMABLE_SHARE, check_fold_group_sizes, decompose
from fairpath.causal._learners import PRESETS, EarlyStoppingGBM, StackedLearner, fit_predict, make_learner
from fairpath.causal._measures import DESCRIPTIONS, MEASURE_TERMS, MEASURES, PATHWAYS, combine_terms
from fairpath.causal._methods import METHODS
from fairpath.causal._result import CausalDecomposition
from fairpath.causal._sfm import SFM, check_sfm

__all__ = [
    "SFM", "decompose", "CausalDecomposition", "prepare_data", "PreparedData", "MEASURES", "MEASURE_TERMS",
    "PATHWAYS", "DESCRIPTIONS", "METHODS", "MIN_GROUP_ROWS_PER_FOLD", "NON_ESTIMABLE_SHARE", "PRESETS", "EarlyStoppingGBM",
    "StackedLearner", "make_learner", "fit_predict", "resolve_level", "combine_terms", "check_sfm", "check_fold_group_sizes",
]
