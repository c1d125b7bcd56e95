"""Validation and numeric encoding of a DataFrame for the causal estimators."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fairpath._encoding import CategoryEncoder
from fairpath._exceptions import FairpathInputError
from fairpath._validation import (
    MIN_GROUP_ROWS, Integer, validate_params, python_value, check_columns_present, check_finite, check_fit_group_sizes, check_frame, check_group_sizes,
    check_outcome_varies,
)
from fairpath._sfm import SFM, check_sfm

@dataclass
class PreparedData:
    """Numeric arrays for the estimators, aligned row by row with ``index``."""

    x: np.ndarray  # the code of each row's level: its position in ``levels`` (0 for x0, 1 for x1); an integer type that holds them
    z: np.ndarray  # (n, p_z) float
    w: np.ndarray  # (n, p_w) float
    outcomes: dict[str, np.ndarray]
    index: pd.Index  # the rows of the input that were kept
    z_names: list[str]
    w_names: list[str]
    n_excluded: int  # rows whose X is neither x0 nor x1
    # X's levels in code order: (x0, x1), or with every level analysed (SFM x1=None) x0 then the others
    levels: tuple = (0, 1)
    # predictor column -> {x: f(x, Z, W) per row} for predictors whose function is known (see _known.py)
    known: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)
    # A partitioned table (fairpath.causal._distributed): the future of the whole PreparedData on the
    # Dask workers, which the cross-fitting tasks read; here z and w are then RemoteColumns.
    remote: object = None

    @property
    def n(self) -> int:
        return len(self.x)

    def binary(self, outcome: str) -> bool:
        values = self.outcomes[outcome]
        return bool(np.isin(values, (0.0, 1.0)).all())

    @validate_params({"n_folds": Integer(2)})
    def check_fold_sizes(self, column: str, n_folds: int) -> None:
        """Refuse, before anything is fitted, a level of X (``column``) with fewer than ``MIN_GROUP_ROWS_PER_FOLD`` rows
        per cross-fitting fold, where the propensities of Z and W are fitted (without Z and W there are none)."""
        if self.z.shape[1] or self.w.shape[1]:
            check_fit_group_sizes({level: int((self.x == code).sum()) for code, level in enumerate(self.levels)}, column, n_folds)


def _check_columns(data: pd.DataFrame, sfm: SFM, outcomes: list[str]) -> None:
    check_frame(data)
    check_columns_present(data, [sfm.x, *sfm.z, *sfm.w, *outcomes])
    roles = sfm.roles()
    for column in outcomes[1:]:
        if column in roles and column != sfm.y:
            raise FairpathInputError(
                f"predictor column {column!r} is also the model's {roles[column]} column; a column may play one role"
            )
        if column in sfm.x_parts:
            raise sfm.part_of_x_error(column, "predictor")
    duplicated = sorted({c for c in outcomes if outcomes.count(c) > 1})
    if duplicated:
        raise FairpathInputError(f"outcome column(s) {duplicated} listed twice")


def group_rows(data: pd.DataFrame, sfm: SFM) -> pd.Series:
    """The rows the estimators analyse: X is x0 or x1 (every row when ``x1`` is None: all levels)."""
    if not sfm.binary:
        return pd.Series(True, index=data.index)
    return (data[sfm.x] == sfm.x0) | (data[sfm.x] == sfm.x1)


def ordered_levels(sfm: SFM, values) -> tuple:
    """X's levels in code order: (x0, x1), or x0 then the other levels of ``values`` sorted (by value when
    they compare, else by their text), for an SFM with ``x1`` None."""
    if sfm.binary:
        return (sfm.x0, sfm.x1)
    others = {python_value(v) for v in pd.unique(values)} - {sfm.x0}
    try:
        others = sorted(others)
    except TypeError:
        others = sorted(others, key=str)
    return (sfm.x0, *others)


def check_levels_present(sfm: SFM, levels: list, counts: dict) -> None:
    """Both levels of X occur (``levels``: X's levels in order of appearance, ``counts``: rows per x0, x1)."""
    absent = [level for level in (sfm.x0, sfm.x1) if not counts[level]]
    if absent:
        raise FairpathInputError(
            f"protected attribute {sfm.x!r} has no rows with level(s) {absent}; its levels are {levels[:20]}"
        )


def warn_excluded(sfm: SFM, n_excluded: int, others) -> None:
    """Say that ``n_excluded`` rows with X at another level (``others``) are left out."""
    if n_excluded:
        warnings.warn(
            f"{n_excluded} rows excluded because {sfm.x!r} is neither {sfm.x0!r} nor {sfm.x1!r} (levels {sorted(others)})",
            stacklevel=4,
        )


def _select_groups(data: pd.DataFrame, sfm: SFM) -> tuple[pd.DataFrame, np.ndarray, int, tuple]:
    column = data[sfm.x]
    if not sfm.binary:
        return _all_levels(data, sfm)
    keep = group_rows(data, sfm)
    x = (column[keep] == sfm.x1).to_numpy(dtype=np.int8)
    check_levels_present(sfm, pd.unique(column).tolist(), {sfm.x0: int((x == 0).sum()), sfm.x1: int((x == 1).sum())})
    n_excluded = int((~keep).sum())
    warn_excluded(sfm, n_excluded, {str(v) for v in column[~keep].unique()})
    return data.loc[keep], x, n_excluded, (sfm.x0, sfm.x1)


def _all_levels(data: pd.DataFrame, sfm: SFM) -> tuple[pd.DataFrame, np.ndarray, int, tuple]:
    """Every row, X coded by its level's position in :func:`ordered_levels` (the reference x0 first)."""
    column = data[sfm.x]
    levels = ordered_levels(sfm, column)
    if not (column == sfm.x0).any():
        raise FairpathInputError(
            f"protected attribute {sfm.x!r} has no rows with the reference level {sfm.x0!r}; its levels are {list(levels[1:])[:20]}"
        )
    if len(levels) < 2:
        raise FairpathInputError(f"protected attribute {sfm.x!r} has one level ({sfm.x0!r}) only: there is nothing to compare")
    codes = pd.Categorical(column, categories=list(levels)).codes  # int8 up to 127 levels, int16 up to 32,767, …
    return data, codes, 0, levels


def encode_covariates(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Encode covariates as floats (see :class:`fairpath._encoding.CategoryEncoder`) and name the columns."""
    encoder = CategoryEncoder(frame.columns).fit(frame)
    return encoder.transform(frame), encoder.feature_names_


def _check_constant(frame: pd.DataFrame, role: str) -> None:
    for column in frame.columns:
        if frame[column].nunique(dropna=False) < 2:
            raise FairpathInputError(
                f"{role} column {frame[column].name!r} is constant ({frame[column].iloc[0]!r}) among the analysed rows; "
                "it carries no information: remove it from the model"
            )


def _outcome_values(frame: pd.DataFrame, column: str, is_y: bool) -> np.ndarray:
    values = frame[column]
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float)
    if not pd.api.types.is_numeric_dtype(values):
        kind = "outcome" if is_y else "predictor"
        example = values.iloc[0]
        raise FairpathInputError(
            f"{kind} column {column!r} is not numeric (dtype {values.dtype}, e.g. {example!r}); "
            "encode it as 0/1 or a number first"
        )
    return values.to_numpy(dtype=float)


def prepare_data(data: pd.DataFrame, sfm: SFM, outcomes: list[str] | None = None) -> PreparedData:
    """Validate ``data`` against ``sfm`` and return numeric arrays.

    ``outcomes`` lists the outcome columns (Y first, then predictors). Raises
    :class:`FairpathInputError` for anything the estimators cannot use, naming the column.
    """
    check_sfm(sfm)
    outcomes = list(outcomes or [sfm.y])
    _check_columns(data, sfm, outcomes)
    used = list(dict.fromkeys([sfm.x, *sfm.z, *sfm.w, *outcomes]))
    check_finite(data[used], {c: "outcome" if c == sfm.y else "predictor" for c in outcomes}, levels=[sfm.x])
    kept, x, n_excluded, levels = _select_groups(data[used], sfm)
    check_group_sizes(level_counts(x, levels), sfm.x, MIN_GROUP_ROWS)
    _check_constant(kept[list(sfm.z)], "confounder (Z)")
    _check_constant(kept[list(sfm.w)], "mediator (W)")
    values = {c: _outcome_values(kept, c, c == sfm.y) for c in outcomes}
    check_outcome_varies(pd.Series(values[sfm.y]), sfm.y)
    z, z_names = encode_covariates(kept[list(sfm.z)])
    w, w_names = encode_covariates(kept[list(sfm.w)])
    return PreparedData(x=x, z=z, w=w, outcomes=values, index=kept.index, z_names=z_names, w_names=w_names, n_excluded=n_excluded,
                        levels=levels)


def level_counts(x: np.ndarray, levels: tuple) -> dict:
    """Rows per level ({level: count}) of codes ``x``."""
    counts = np.bincount(x, minlength=len(levels))
    return {level: int(count) for level, count in zip(levels, counts)}
