"""Checks of arguments and tables shared by every entry point (Python API and command line).

Each check raises :class:`FairpathInputError` naming the argument, column, value or file and saying
what to do. Conventions:

- Counts (folds, draws, repeats, bins) must be Python or NumPy integers. Booleans are refused, and
  so are floats, even integral ones such as ``2.0``: a float count is nearly always a mistake
  upstream (a division, a config value written as ``5.0``), and refusing it keeps one meaning.
- Seeds are non-negative integers; ``None`` is refused, because every fairpath result is seeded
  (pass ``0``, the default everywhere, for the usual run).
"""

from __future__ import annotations

import numbers
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError

# The floor on the rows of each compared group for a group mean (``prepare_data``, predictive parity).
MIN_GROUP_ROWS = 2
# The floor for every estimator that fits models per group (decompose's cross-fitting when Z or W is
# non-empty, the adaptation, fair, constrained and baseline predictors). A training part then holds
# ≥ 10·(K−1) rows of the group (≥ 5·(K−1) in the halves of decompose's nested and medDML fits) and
# every test fold ≈ 10 rows of it. Below that, fits on a handful of rows return arbitrary numbers
# (Ctf-IE = −493 for a 0/1 outcome with 3 rows in a group), so the estimators refuse instead.
# Without Z and W every nuisance is a group mean: MIN_GROUP_ROWS do.
MIN_GROUP_ROWS_PER_FOLD = 10


def _describe(value) -> str:
    return f"{value!r} ({type(value).__name__})"


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int: an integer (not a bool, not a float) within [minimum, maximum]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        hint = f"; pass {int(value)}" if isinstance(value, float) and value.is_integer() else ""
        raise FairpathInputError(f"{name} must be an integer, got {_describe(value)}{hint}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise FairpathInputError(f"{name} must be an integer ≥ {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise FairpathInputError(f"{name} must be an integer ≤ {maximum}, got {value}")
    return value


def check_n_rep(value, name: str = "n_rep"):
    """``"auto"`` or an integer ≥ 1 (the cross-fitting splits of the debiasing decomposition)."""
    if isinstance(value, str):
        if value != "auto":
            raise FairpathInputError(f"{name} must be 'auto' or an integer ≥ 1, got {value!r}")
        return value
    return check_int(name, value, minimum=1)


def check_float(name: str, value, low: float | None = None, high: float | None = None, *, open_low: bool = False,
                open_high: bool = False) -> float:
    """``value`` as a finite float (ints accepted, bools not) within the given bounds."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise FairpathInputError(f"{name} must be a number, got {_describe(value)}")
    value = float(value)
    below = low is not None and (value <= low if open_low else value < low)
    above = high is not None and (value >= high if open_high else value > high)
    if not np.isfinite(value) or below or above:
        interval = f"{'(' if open_low else '['}{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}{')' if open_high else ']'}"
        raise FairpathInputError(f"{name} must lie in {interval}, got {value!r}")
    return value


def check_probability(name: str, value, *, open_ends: bool = True) -> float:
    """A number in (0, 1) (or [0, 1] with ``open_ends=False``): a level, a quantile, an alpha."""
    return check_float(name, value, 0.0, 1.0, open_low=open_ends, open_high=open_ends)


def check_seed(value, name: str = "seed") -> int:
    """A seed: a non-negative integer (``None`` is refused: every result is seeded)."""
    if value is None:
        raise FairpathInputError(f"{name} must be a non-negative integer, got None; fairpath results are always seeded (0 is the default)")
    return check_int(name, value, minimum=0)


def check_bool(name: str, value) -> bool:
    """A real boolean (the string ``"false"`` is not one)."""
    if not isinstance(value, (bool, np.bool_)):
        hint = " (a string: write it without quotes)" if isinstance(value, str) else ""
        raise FairpathInputError(f"{name} must be true or false, got {_describe(value)}{hint}")
    return bool(value)


def check_choice(name: str, value, choices) -> object:
    """``value`` must be one of ``choices``."""
    choices = tuple(choices)
    try:
        known = value in choices
    except TypeError:  # an unhashable or incomparable value
        known = False
    if not known:
        raise FairpathInputError(f"unknown {name} {value!r}; use one of {', '.join(map(str, choices))}")
    return value


def check_columns_arg(name: str, value) -> list[str]:
    """Column names: one string is one column (never split into characters), else a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, (pd.Index, pd.Series, np.ndarray, list, tuple)):
        columns = list(value)
    else:
        raise FairpathInputError(f"{name} must be a column name or a list of column names, got {_describe(value)}")
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise FairpathInputError(f"{name} must hold column names (strings), got {bad[0]!r} ({type(bad[0]).__name__})")
    return columns


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):  # the folder itself, else the closest ancestor that exists
        if candidate.exists():
            return candidate
    return Path.cwd()


def _check_creatable(folder: Path, path: Path, what: str) -> None:
    """``folder`` (which will hold ``path``) exists as a writable folder or can be created."""
    existing = _nearest_existing(folder)
    if not existing.is_dir():
        raise FairpathInputError(f"cannot create {what} {str(path)!r}: {str(existing)!r} is a file, not a folder; choose another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise FairpathInputError(f"cannot write {what} {str(path)!r}: folder {str(existing)!r} is not writable; choose another path")


def _special_kind(path: Path) -> str | None:
    """What an existing ``path`` is when it is not a plain file or folder (``lstat``: a link is not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # nothing there (yet)
        return None
    kinds = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
    return next((kind for test, kind in kinds if test(mode)), None)


def check_replaceable(path, what: str = "output file") -> Path:
    """A path that is free or a plain file: fairpath never replaces a symbolic link (its target's owner would lose
    the link), never opens a pipe (a write blocks until someone reads) and never writes to a socket or device."""
    path = Path(path)
    kind = _special_kind(path)
    if kind is not None:
        raise FairpathInputError(f"{what} {str(path)!r} is {kind}, not a regular file; fairpath writes only regular files: "
                                 "choose another path")
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: compare where they would be
        return a.resolve() == b.resolve()


def check_not_input(path, inputs, what: str = "output file") -> Path:
    """``path`` is none of the ``inputs`` (files read by the same run): writing it would replace the data."""
    path = Path(path)
    for source in inputs:
        if source is not None and _same_file(path, Path(source)):
            raise FairpathInputError(f"{what} {str(path)!r} is the input file {str(source)!r}; writing it would replace "
                                     "your data: choose another path")
    return path


def check_output_dir(path, what: str = "output folder") -> Path:
    """A folder that exists and is writable, or can be created; not an existing file, link, pipe or device."""
    if path is None or str(path) == "":
        raise FairpathInputError(f"no {what} given; name a folder to write the results to")
    path = Path(path)
    kind = _special_kind(path)
    if kind is not None:
        raise FairpathInputError(f"{what} {str(path)!r} is {kind}, not a folder; fairpath writes only into real folders: "
                                 "choose another path")
    if path.exists() and not path.is_dir():
        raise FairpathInputError(f"{what} {str(path)!r} is an existing file, not a folder; choose a folder path")
    _check_creatable(path, path, what)
    return path


def check_output_file(path, what: str = "output file", *, inputs=()) -> Path:
    """A file path whose folder is writable or can be created; not an existing folder, link, pipe or device, and none
    of the ``inputs``."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise FairpathInputError(f"{what} {str(path)!r} is an existing folder; name a file")
    check_replaceable(path, what)
    check_not_input(path, inputs, what)
    _check_creatable(path.parent, path, what)
    return path


def check_frame(data, what: str = "data") -> pd.DataFrame:
    """A DataFrame with unique string column names."""
    if not isinstance(data, pd.DataFrame):
        hint = "; wrap it as pandas.DataFrame(array, columns=[...]) with named columns" if isinstance(data, np.ndarray) else ""
        raise FairpathInputError(f"{what} must be a pandas DataFrame, got {type(data).__name__}{hint}")
    duplicated = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
    if duplicated:
        raise FairpathInputError(f"{what} has duplicated column name(s) {duplicated}; rename them so that each column is unique")
    return data


def check_columns_present(data: pd.DataFrame, columns, what: str = "the data") -> None:
    """Every column in ``columns`` is in ``data``; the error lists the missing and the available ones."""
    missing = [c for c in dict.fromkeys(columns) if c not in data.columns]
    if missing:
        raise FairpathInputError(f"column(s) {missing} not found in {what}; available columns: {list(data.columns)}")


_MISSING_HINT = ("impute or drop these rows before the analysis (when read from a file, an empty cell, NA, N/A, null or nan is a "
                 "missing value; for a text column where the empty string is a real category, pass it as empty_category / "
                 "--empty-category COLUMN)")


def check_finite(frame: pd.DataFrame) -> None:
    """No missing value (NaN/None) and no infinite value in any column, with counts per column."""
    missing = frame.isna().sum()
    missing = missing[missing > 0]
    if len(missing):
        detail = ", ".join(f"{col!r}: {int(k)}" for col, k in missing.items())
        raise FairpathInputError(f"missing values (NaN) in used columns ({detail}); {_MISSING_HINT}")
    numeric = frame.select_dtypes(include="number")
    infinite = {c: int(np.isinf(numeric[c].to_numpy(dtype=float)).sum()) for c in numeric.columns}
    infinite = {c: k for c, k in infinite.items() if k}
    if infinite:
        detail = ", ".join(f"{col!r}: {k}" for col, k in infinite.items())
        raise FairpathInputError(f"infinite values (inf) in used columns ({detail}); replace or drop these rows before the analysis")


def check_group_sizes(counts: dict, column: str, minimum: int, purpose: str = "") -> None:
    """Each level of ``column`` (``counts``: level -> rows) has at least ``minimum`` rows."""
    for level, count in counts.items():
        if count < minimum:
            reason = f" {purpose}" if purpose else ""
            raise FairpathInputError(
                f"group {column}={level!r} has {count} rows; at least {minimum} are needed{reason}; use more data or merge levels"
            )


def check_fit_group_sizes(counts: dict, column: str, n_folds: int = 1, purpose: str = "") -> None:
    """Each level of ``column`` (``counts``: level -> rows) has ``MIN_GROUP_ROWS_PER_FOLD`` rows per fold.

    ``n_folds=1`` is a single fit on all rows. Every estimator that fits per group uses this one
    floor and message, so ``decompose``, ``FairAdapt``, ``FairPredictor`` and ``ConstrainedLearner``
    refuse the same data in the same words.
    """
    needed = MIN_GROUP_ROWS_PER_FOLD * n_folds
    fitting = f"{n_folds}-fold cross-fitting" if n_folds > 1 else "fitting"
    per = "per fold and group" if n_folds > 1 else "per group"
    remedy = "use fewer folds or more data" if n_folds > 1 else "use more data or merge levels"
    reason = f" {purpose}" if purpose else ""
    for level, count in counts.items():
        level = level.item() if isinstance(level, np.generic) else level
        if count < needed:
            raise FairpathInputError(
                f"group {column}={level!r} has {count} rows; {fitting}{reason} needs at least {needed} "
                f"({MIN_GROUP_ROWS_PER_FOLD} {per}): {remedy}"
            )


def check_outcome_varies(values: pd.Series, column: str) -> None:
    """The outcome takes at least two values (a constant outcome has no disparity to explain)."""
    if values.nunique(dropna=False) < 2:
        value = values.iloc[0]
        value = value.item() if isinstance(value, np.generic) else value
        raise FairpathInputError(f"outcome column {column!r} is constant ({value!r}); there is nothing to explain")


def check_class_sizes(counts: dict, column: str, n_folds: int) -> None:
    """Stratified K-fold cross-fitting of a 0/1 outcome needs each class in every fold: K rows per class."""
    for level, count in counts.items():
        level = level.item() if isinstance(level, np.generic) else level
        if count < n_folds:
            raise FairpathInputError(
                f"class {column}={level!r} has {count} rows; {n_folds}-fold cross-fitting needs at least {n_folds} "
                "(one per fold): use fewer folds or more data"
            )
