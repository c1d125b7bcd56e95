"""Data sets: COMPAS and Census loaders, and synthetic causal models with known ground truth."""

from fairpath.datasets._loaders import (
    COMPAS_SFM,
    GOV_CENSUS_SFM,
    TabularDataset,
    compas_from_raw,
    compas_raw_path,
    load_compas,
    load_gov_census,
)
from fairpath.datasets._synthetic import (
    StructuralModel,
    SyntheticData,
    make_appendix_a2,
    make_binary_sfm,
    make_confounded_sfm,
    make_count_sfm,
    make_linear_sfm,
    make_mixed_sfm,
    make_multilevel_sfm,
)

__all__ = [
    "TabularDataset", "load_compas", "load_gov_census", "compas_from_raw", "compas_raw_path", "COMPAS_SFM",
    "GOV_CENSUS_SFM", "SyntheticData", "StructuralModel", "make_appendix_a2", "make_binary_sfm",
    "make_confounded_sfm", "make_count_sfm", "make_linear_sfm", "make_mixed_sfm",
    "make_multilevel_sfm",
]
