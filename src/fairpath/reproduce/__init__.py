"""Reproductions of the paper's studies: ``reproduce_theorem1`` (Appendix A.2, Figures 7–8, Corollary 1),
``reproduce_compas`` (Figures 5 and 6) and ``reproduce_census`` (Appendix F)."""

from fairpath.reproduce._census import CensusSettings, CensusStudy, reproduce_census
from fairpath.reproduce._compas import FIGURE5_PAPER, CompasSettings, CompasStudy, reproduce_compas
from fairpath.reproduce._theorem1 import (
    LinearCheck,
    Theorem1Settings,
    Theorem1Study,
    check_linear_case,
    fit_boosted_predictor,
    reproduce_theorem1,
)

__all__ = [
    "FIGURE5_PAPER",
    "CensusSettings",
    "CensusStudy",
    "CompasSettings",
    "CompasStudy",
    "reproduce_census",
    "reproduce_compas",
    "LinearCheck",
    "Theorem1Settings",
    "Theorem1Study",
    "check_linear_case",
    "fit_boosted_predictor",
    "reproduce_theorem1",
]
