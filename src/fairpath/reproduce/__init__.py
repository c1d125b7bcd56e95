"""Reproductions of the papers' studies: ``reproduce_theorem1`` (Appendix A.2, Figures 7–8, Corollary 1),
``reproduce_compas`` (Figures 5 and 6), ``reproduce_census`` (Appendix F) and ``reproduce_huang`` (Huang et al. 2020:
debiasing by embedding and sentiment regularization)."""

from fairpath.reproduce._huang import HuangResult, HuangSettings, HuangStudy, check_record_folder, reproduce_huang

from fairpath.reproduce._census import CensusSettings, CensusResult, reproduce_census
from fairpath.reproduce._compas import FIGURE5_PAPER, CompasSettings, CompasResult, reproduce_compas
from fairpath.reproduce._theorem1 import (
    LinearCheck,
    Theorem1Settings,
    Theorem1Result,
    check_linear_case,
    fit_boosted_predictor,
    reproduce_theorem1,
)

__all__ = [
    "CensusSettings",
    "CensusResult",
    "CompasSettings",
    "CompasResult",
    "FIGURE5_PAPER",
    "HuangResult",
    "HuangSettings",
    "HuangStudy",
    "LinearCheck",
    "Theorem1Settings",
    "Theorem1Result",
    "check_linear_case",
    "check_record_folder",
    "fit_boosted_predictor",
    "reproduce_census",
    "reproduce_compas",
    "reproduce_huang",
    "reproduce_theorem1",
]
