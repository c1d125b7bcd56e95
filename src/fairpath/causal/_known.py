"""Predictors whose function is known: their conditional mean is evaluated, not estimated.

If a predictor column ŷ is f(X, Z, W) for a function f the caller holds (the fitted model itself),
then μ(x, z, w) = E[ŷ | X = x, Z = z, W = w] = f(x, z, w): fairpath sets X to each level on every
analysed row and calls f, instead of fitting a regression of ŷ. In the one-step pseudo-outcomes
(``_pseudo.py``) the residual ŷ − μ(X, Z, W) is then 0 on every row, so the second-order remainder
that pairs the error of μ̂(x, z, w) with the error of the propensity odds is gone. For a predictor
without noise given (X, Z, W) that remainder is what the influence-function interval leaves out (its
SE carries only the fits' residuals): a predictor that never reads X, whose Ctf-DE is exactly 0, got
a DE estimate many SEs from 0 on Census 2018. With f known that DE is 0 on every row.

Still estimated: the propensities, μ(x, z) = E[f(x, Z, W) | X = x, Z = z] (when W is not empty) and
the nested means, which are regressions of f's values on Z. The estimand is the same; only its
nuisance μ(x, z, w) is exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath.causal._data import PreparedData, group_rows
from fairpath._sfm import SFM

# The function must reproduce the column it stands for: |f(data) − column| ≤ ATOL + RTOL·|column|.
RTOL, ATOL = 1e-6, 1e-9


def check_predictor_functions(functions: Mapping | None, predictors: list[str]) -> dict[str, Callable]:
    """``functions`` as a dict, refusing names that are not predictor columns and values that are not callable."""
    if functions is None:
        return {}
    if not isinstance(functions, Mapping):
        raise FairpathInputError(
            f"predictor_functions must map predictor columns to functions, got {type(functions).__name__}; "
            "e.g. predictor_functions={'score': lambda frame: model.predict_proba(frame[features])[:, 1]}"
        )
    for name, function in functions.items():
        if name not in predictors:
            raise FairpathInputError(
                f"predictor_functions names {name!r}, which is not among the predictors {predictors}; "
                "pass the column in predictors too (a function can only stand for a predictor column, never for Y)"
            )
        if not callable(function):
            raise FairpathInputError(
                f"predictor_functions[{name!r}] is a {type(function).__name__}, not a function; pass a callable "
                "that takes the data frame's rows and returns the predictor's values"
            )
    return dict(functions)


def _call(function: Callable, name: str, frame: pd.DataFrame, what: str) -> np.ndarray:
    try:
        values = np.asarray(function(frame), dtype=float).reshape(-1)
    except Exception as error:  # the caller's function: say which one failed and on what
        raise FairpathInputError(f"predictor_functions[{name!r}] failed on the data {what}: {type(error).__name__}: {error}") from error
    if values.shape != (len(frame),):
        raise FairpathInputError(
            f"predictor_functions[{name!r}] returned {values.size} values for {len(frame)} rows {what}; "
            "it must return one value per row"
        )
    if not np.isfinite(values).all():
        raise FairpathInputError(f"predictor_functions[{name!r}] returned non-finite values {what}")
    return values


def known_means(data: pd.DataFrame, sfm: SFM, prepared: PreparedData, functions: dict[str, Callable]) -> dict[str, dict[int, np.ndarray]]:
    """{predictor: {x: f(x, Z, W) on every analysed row}} (x the level's code: 0 for x0, 1 for x1, and so on for
    every level analysed), after checking that each f reproduces its column on the data as given."""
    rows = data.loc[group_rows(data, sfm)]
    known = {}
    for name, function in functions.items():
        observed = prepared.outcomes[name]
        values = _call(function, name, rows, "as given")
        wrong = ~np.isclose(values, observed, rtol=RTOL, atol=ATOL)
        if wrong.any():
            rows_wrong = np.flatnonzero(wrong)
            i = int(rows_wrong[np.argmax(np.abs(values - observed)[rows_wrong])])  # the largest miss among those out of tolerance
            raise FairpathInputError(
                f"predictor_functions[{name!r}] does not reproduce column {name!r}: it differs on {int(wrong.sum())} of "
                f"{len(rows)} rows (at row {rows.index[i]!r} it gives {values[i]:.6g}, the column holds {observed[i]:.6g}); "
                "pass the function that made the column, or leave it out to have its mean estimated"
            )
        known[name] = {code: _call(function, name, _with_level(rows, sfm.x, level), f"with {sfm.x} set to {level!r}")
                       for code, level in enumerate(prepared.levels)}
    return known


def _with_level(rows: pd.DataFrame, column: str, level) -> pd.DataFrame:
    """``rows`` with every value of ``column`` set to ``level``, keeping the column's dtype (a
    categorical stays categorical, so the caller's model sees what it was trained on)."""
    frame = rows.copy()
    frame[column] = pd.Series(level, index=frame.index, dtype=rows[column].dtype)
    return frame
