"""Reproductions of the paper's studies: ``reproduce_theorem1`` (Appendix A.2, Figures 7–8, Corollary 1)."""

from fairpath.reproduce._theorem1 import (
    LinearCheck,
    Theorem1Settings,
    Theorem1Study,
    check_linear_case,
    fit_boosted_predictor,
    reproduce_theorem1,
)

__all__ = [
    "LinearCheck",
    "Theorem1Settings",
    "Theorem1Study",
    "check_linear_case",
    "fit_boosted_predictor",
    "reproduce_theorem1",
]
