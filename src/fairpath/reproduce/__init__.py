"""Reproductions of the papers' studies: ``reproduce_theorem1`` (Appendix A.2, Figures 7–8, Corollary 1)
and ``reproduce_huang`` (Huang et al. 2020: debiasing by embedding and sentiment regularization)."""

from fairpath.reproduce._huang import HuangResult, HuangSettings, HuangStudy, reproduce_huang

from fairpath.reproduce._theorem1 import (
    LinearCheck,
    Theorem1Settings,
    Theorem1Study,
    check_linear_case,
    fit_boosted_predictor,
    reproduce_theorem1,
)

__all__ = [
    "HuangResult",
    "HuangSettings",
    "HuangStudy",
    "LinearCheck",
    "Theorem1Settings",
    "Theorem1Study",
    "check_linear_case",
    "fit_boosted_predictor",
    "reproduce_huang",
    "reproduce_theorem1",
]
