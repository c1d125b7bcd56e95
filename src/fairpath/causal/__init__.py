"""Causal fairness analysis in the Standard Fairness Model: the SFM, data preparation, and the
counterfactual decomposition TV = Ctf-DE − Ctf-IE − Ctf-SE with confidence intervals."""

# The SFM, the measures' algebra and the learners live in the core (fairpath._sfm, _measures, _learners), where the
# packages above build on them; this package's public API is what a user of the decomposition passes in or reads.
from fairpath._learners import PRESETS
from fairpath._levels import combine_attributes, recode_levels
from fairpath._measures import DESCRIPTIONS, MEASURE_TERMS, MEASURES, PATHWAYS
from fairpath._sfm import SFM
from fairpath._validation import MIN_GROUP_ROWS_PER_FOLD
from fairpath.causal._data import PreparedData, prepare_data
from fairpath.causal._decompose import NON_ESTIMABLE_SHARE, decompose
from fairpath.causal._methods import METHODS
from fairpath.causal._contrast import ContrastDecomposition
from fairpath.causal._decomposition import CONTRASTS, CausalDecomposition
from fairpath.causal._sensitivity_result import SensitivityResult
from fairpath.causal._benchmarks import confounder_benchmarks

__all__ = [
    "SFM", "decompose", "CausalDecomposition", "ContrastDecomposition", "SensitivityResult",
    "confounder_benchmarks", "CONTRASTS", "prepare_data", "PreparedData", "MEASURES", "MEASURE_TERMS",
    "PATHWAYS", "DESCRIPTIONS", "METHODS", "MIN_GROUP_ROWS_PER_FOLD", "NON_ESTIMABLE_SHARE", "PRESETS", "EarlyStoppingGBM",
    "StackedLearner", "combine_attributes", "recode_levels",
]


def __getattr__(name: str):
    # The preset learners import scikit-learn and LightGBM (about a second): loaded on first use.
    if name in ("EarlyStoppingGBM", "StackedLearner"):
        from fairpath import _presets

        return getattr(_presets, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
