"""Checks of arguments and tables shared by every entry point (Python API and command line).

Each check raises :class:`FairpathInputError` naming the argument, column, value or file and saying
what to do. Conventions:

- Counts (folds, draws, repeats, bins) must be Python or NumPy integers. Booleans are refused, and
  so are floats, even integral ones such as ``2.0``: a float count is nearly always a mistake
  upstream (a division, a config value written as ``5.0``), and refusing it keeps one meaning.
- Seeds are integers in [0, 2**32 − 1] (NumPy's range); ``None`` is refused, because every fairpath
  result is seeded (pass ``0``, the default everywhere, for the usual run).
- Bootstrap draws: 0 (no interval, where allowed) or ``MIN_DRAWS`` … ``MAX_BOOTSTRAP_DRAWS``.
- Column values (``check_finite``): a text column of which at least ``NUMERIC_SHARE`` of the
  non-missing cells are numbers is dirty numeric data, not a category, and is refused naming the
  token, its count and first row; columns whose role is numeric (outcome, predictor) must hold
  numbers only. A text (categorical) column holding a token that means "missing" in many files but
  is not read as missing (``MISSING_LIKE``: ``?``, ``-``, a cell of spaces, ``na``) is refused the
  same way, until the token is declared missing or the column categorical.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import numbers
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._remedies import remedy

# The floor on the rows of each compared group for a group mean (``prepare_data``, predictive parity).
MIN_GROUP_ROWS = 2
# The floor for every estimator that fits models per group (decompose's cross-fitting when Z or W is
# non-empty, the adaptation, fair, constrained and baseline predictors). A training part then holds
# ≥ 10·(K−1) rows of the group (≥ 5·(K−1) in the halves of decompose's nested and medDML fits) and
# every test fold ≈ 10 rows of it. Below that, fits on a handful of rows return arbitrary numbers
# (Ctf-IE = −493 for a 0/1 outcome with 3 rows in a group), so the estimators refuse instead.
# Without Z and W every nuisance is a group mean: MIN_GROUP_ROWS do.
MIN_GROUP_ROWS_PER_FOLD = 10
# NumPy's seeds (SeedSequence entropy of one word, RandomState) lie in [0, 2**32 - 1].
MAX_SEED = 2**32 - 1
# Bootstrap draws: one draw gives a zero-width "interval" (the upper bound is MAX_BOOTSTRAP_DRAWS below).
MIN_DRAWS = 2
# A text column with at least this share of numbers among its non-missing cells is numeric data with
# a few unrecognised tokens (`?`, `-`, `1,000`), not a category: coding it as categories in text order
# (0, 1, 10, 11, ...) would silently change every estimate.
NUMERIC_SHARE = 0.9
# pandas' default missing-value markers (``pandas._libs.parsers.STR_NA_VALUES``) but "None" (a level's name in real
# data: the README's list is an empty cell, NA, N/A, null, nan), which every column of a CSV file reads as missing
# (fairpath._io), spelled out so that one column can leave the empty string out.
MISSING_MARKERS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "n/a", "nan", "null",
})
# Text that means "missing" in many files but is not a marker above: UCI's `?`, a dash, a cell of spaces, and the
# markers in another case (`na`, `none`, `Null`), compared stripped and case-folded. In a text column each would
# silently become a category of its own, so it is refused until declared missing or the column categorical.
MISSING_LIKE = frozenset({marker.casefold() for marker in MISSING_MARKERS} | {"none", "?", "-", "--", "."})
# The quadratic GLMs multiply two values and square the products when scaling them: (1e50)^4 = 1e200
# stays finite; 1e308 overflows to inf (and then NaN) inside the learners.
MAX_ABS_VALUE = 1e50
# Upper bounds on draws, far above any real run (the paper's analyses use 500 bootstrap draws, 999
# permutations, 1000 samples per prompt); a number beyond them is nearly always a typo that would run
# for days. Stated in the README ("Bounds") and in each error.
MAX_BOOTSTRAP_DRAWS = 100_000  # n_boot, nboot1, nboot2
MAX_PERMUTATIONS = 1_000_000  # n_permutations (p-values resolve to 1e-6)
MAX_REPEATS = 10_000  # seeds of the frontier (repeats), cross-fitting splits (n_rep)
MAX_SAMPLES_PER_PROMPT = 100_000  # n_samples of text generation


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
        raise FairpathInputError(f"{name} must be an integer ≤ {maximum:,} (fairpath's bound), got {value:,}")
    return value


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
    """A seed: an integer in [0, ``MAX_SEED``] (``None`` is refused: every result is seeded)."""
    if value is None:
        raise FairpathInputError(f"{name} must be a non-negative integer, got None; fairpath results are always seeded (0 is the default)")
    value = check_int(name, value, minimum=0)
    if value > MAX_SEED:
        raise FairpathInputError(f"{name} must be an integer ≤ {MAX_SEED}, got {value}: NumPy's seeds lie in [0, 2**32 − 1]")
    return value


def check_draws(name: str, value, *, allow_zero: bool = False) -> int:
    """Bootstrap draws: ``MIN_DRAWS`` … ``MAX_BOOTSTRAP_DRAWS`` (or 0, no interval, with ``allow_zero``)."""
    value = check_int(name, value, minimum=0 if allow_zero else MIN_DRAWS, maximum=MAX_BOOTSTRAP_DRAWS)
    if 0 < value < MIN_DRAWS:
        raise FairpathInputError(f"{name} must be 0 (no interval) or an integer ≥ {MIN_DRAWS}, got {value}: "
                                 "one draw gives a zero-width interval")
    return value


def check_nonnegative(name: str, value) -> float:
    """A number ≥ 0 (``inf`` allowed: a penalty of infinite weight is a constraint)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not value >= 0:
        raise FairpathInputError(f"{name} must be a number ≥ 0, got {_describe(value)}")
    return float(value)


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


def check_columns_arg(name: str, value, item: str = "column name") -> list[str]:
    """Names (of columns, or ``item``s): one string is one name (never split into characters), else a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, (set, frozenset)):
        columns = sorted(value, key=str)  # a set has no order of its own; sorted, results do not depend on hashing
    elif isinstance(value, (pd.Index, pd.Series, np.ndarray, list, tuple)):
        columns = list(value)
    else:
        raise FairpathInputError(f"{name} must be a {item} or a list of {item}s, got {_describe(value)}")
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise FairpathInputError(f"{name} must hold {item}s (strings), got {bad[0]!r} ({type(bad[0]).__name__})")
    return columns


def check_column_name(name: str, value) -> str:
    """One column name (a string); a list is refused rather than read as several."""
    if not isinstance(value, str):
        raise FairpathInputError(f"{name} must be one column name (a string), got {_describe(value)}")
    return value


def check_list_arg(name: str, value, single: tuple[type, ...] = (str,), item: str = "name") -> list:
    """A list argument: one ``single`` item is a list of one (a string is one name, never its characters)."""
    if isinstance(value, single):
        return [value]
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        raise FairpathInputError(f"{name} must be a {item} or a list of them, got {_describe(value)}")
    return list(value)


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


def check_figure_file(path, what: str = "figure file", inputs=()) -> Path:
    """An output file (never one of ``inputs``) whose suffix names a format matplotlib writes (checked before any computation)."""
    from matplotlib.backend_bases import FigureCanvasBase

    path = check_output_file(path, what, inputs=inputs)
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if path.suffix.lstrip(".").lower() not in formats:
        raise FairpathInputError(f"{what} {str(path)!r} has no figure format as its suffix; end it with one of "
                                 f"{', '.join('.' + f for f in formats)}, e.g. {path.stem}.png")
    return path


def is_partitioned_frame(data) -> bool:
    """A Dask DataFrame (recognised without importing Dask)."""
    return type(data).__module__.startswith("dask") and hasattr(data, "npartitions") and hasattr(data, "to_delayed")


def check_frame(data, what: str = "data", partitioned: bool = False) -> pd.DataFrame:
    """A DataFrame with unique string column names; with ``partitioned`` a Dask DataFrame too."""
    if not isinstance(data, pd.DataFrame) and not (partitioned and is_partitioned_frame(data)):
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


def _first_row(index: pd.Index, mask) -> str:
    """Where the first flagged row is: its index label, and for the default integer index the data row and file line."""
    return _row_text(index[np.flatnonzero(np.asarray(mask))[0]])


def _row_text(label) -> str:
    if isinstance(label, numbers.Integral):
        return f"row {label} (data row {label + 1}, line {label + 2} of a CSV file with a header)"
    return f"row {label!r}"


_TYPE_HINT = ("declare the token a missing value (na_values= in read_table or the config, --na-values TOKEN on the command line) "
              "and impute or drop those rows, or fix the cells")


def column_type_census(values: pd.Series) -> dict:
    """What the type check of a column needs (:func:`check_column_type`), from ``values`` (the whole column or one
    part of it: censuses of parts add up with :func:`merged_census`): whether it is text, its non-missing cells, the
    cells that are not numbers (``bad``), their tokens with counts and the first one's row label."""
    if is_numeric_column(values) or isinstance(values.dtype, pd.CategoricalDtype):
        return {"name": values.name, "text": False, "present": int(values.notna().sum()), "bad": 0, "tokens": pd.Series(dtype="int64"),
                "first": None}
    present = values[values.notna()]
    # Each distinct text is parsed once (a column of 200,000 cells holds a few hundred): 20x faster.
    codes, distinct = pd.factorize(present)
    bad = pd.to_numeric(pd.Series(distinct, dtype=object).astype(str), errors="coerce").isna().to_numpy()[codes]
    looks_missing = np.array([_looks_missing(str(token)) for token in distinct], dtype=bool)[codes]
    return {"name": values.name, "text": True, "present": len(present), "bad": int(bad.sum()),
            "tokens": present[bad].astype(str).value_counts(), "first": present.index[np.flatnonzero(bad)[0]] if bad.any() else None,
            "missing_like": present[looks_missing].astype(str).value_counts(),
            "missing_like_first": present.index[np.flatnonzero(looks_missing)[0]] if looks_missing.any() else None}


def merged_census(parts: list[dict]) -> dict:
    """The census of a column from its parts' censuses, in the column's order."""
    def counts(key: str) -> pd.Series:
        tokens = pd.concat([part.get(key, pd.Series(dtype="int64")) for part in parts])
        return tokens.groupby(tokens.index, sort=False).sum().sort_values(ascending=False, kind="stable")

    def first(key: str):
        return next((part.get(key) for part in parts if part.get(key) is not None), None)

    return {"name": parts[0]["name"], "text": any(part["text"] for part in parts), "present": sum(part["present"] for part in parts),
            "bad": sum(part["bad"] for part in parts), "tokens": counts("tokens"), "first": first("first"),
            "missing_like": counts("missing_like"), "missing_like_first": first("missing_like_first")}


# The role of the protected attribute's columns in the type checks: a text column of levels names each level by its
# text (``None``, ``na``: fairpath._io reads them as text, and every level is reported by name), so no token of a
# categorical column of levels is refused as missing-like; a column of numbers with a few other tokens still is.
LEVELS_ROLE = "levels"


def check_column_type(census: dict, role: str | None) -> None:
    """A text column that is mostly numbers, or any text in a column whose role is numeric, is refused; so is a
    missing-like token in a categorical column, except in the protected attribute's (``LEVELS_ROLE``)."""
    present, bad = census["present"], census["bad"]
    if not census["text"] or not bad:
        return  # every cell a number (text codes such as zip codes)
    if role in (None, LEVELS_ROLE) and (present - bad) / present < NUMERIC_SHARE:
        if role is None:
            _check_missing_like(census)  # a genuinely categorical column
        return
    listed = ", ".join(f"{token!r} ({count}x)" for token, count in census["tokens"].head(5).items())
    where, name = _row_text(census["first"]), census["name"]
    if role in (None, LEVELS_ROLE):
        raise FairpathInputError(
            f"column {name!r} holds numbers in {present - bad} of {present} non-missing cells and the non-numeric token(s) {listed}, "
            f"the first in {where}; read as categories it would be coded in text order and change every estimate: "
            f"{_TYPE_HINT}, or if it really is categorical declare it so (categorical= in read_table, --categorical {name})"
        )
    raise FairpathInputError(
        f"{role} column {name!r} is not numeric: {bad} of {present} non-missing cells are not numbers, "
        f"token(s) {listed}, the first in {where}; encode it as 0/1 or a number first, or {_TYPE_HINT}"
    )


def _looks_missing(text: str) -> bool:
    """A token of :data:`MISSING_LIKE`; the empty string itself is not (a declared empty category keeps it)."""
    return text != "" and text.strip().casefold() in MISSING_LIKE


def _check_missing_like(census: dict) -> None:
    """A text column holding a token that means "missing" in many files is refused, naming it (see :data:`MISSING_LIKE`)."""
    tokens, column = census.get("missing_like", ()), census["name"]
    if not len(tokens):
        return
    listed = ", ".join(f"{token!r} ({count}x)" for token, count in tokens.head(5).items())
    raise FairpathInputError(
        f"text column {column!r} holds the token(s) {listed}, the first in {_row_text(census['missing_like_first'])}, which mean a missing "
        f"value in many files but are not read as one: each would become a category of its own and change every estimate. "
        f"If it means missing, {_TYPE_HINT}; if it is a real category, declare the "
        f"column categorical (categorical= in read_table or the config, --categorical {column} on the command line, or a pandas "
        "'category' column)"
    )


def check_finite(frame: pd.DataFrame, numeric_roles: dict[str, str] | None = None, *, types: bool = True, levels=()) -> None:
    """Values every learner can use: the column types (see the module docstring; ``numeric_roles`` maps
    the columns whose role is numeric to that role's name, ``levels`` names the protected attribute's columns, whose
    text is their levels' names; ``types`` False where the caller checked them on the whole table,
    :func:`check_column_type`), no missing value (NaN/None), no infinite or overflowing value, with counts per column."""
    roles = {**(numeric_roles or {}), **dict.fromkeys(levels, LEVELS_ROLE)}
    for column in frame.columns if types else ():
        check_column_type(column_type_census(frame[column]), roles.get(column))
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
    for column in numeric.columns:
        huge = np.abs(numeric[column].to_numpy(dtype=float)) > MAX_ABS_VALUE
        if huge.any():
            raise FairpathInputError(
                f"column {column!r} holds {int(huge.sum())} value(s) beyond ±{MAX_ABS_VALUE:g} (e.g. {float(numeric[column][huge].iloc[0]):g}, "
                f"first in {_first_row(numeric.index, huge)}), which overflow the learners; rescale the column or drop these rows"
            )


def is_numeric_column(values: pd.Series) -> bool:
    """Numbers and booleans are numeric data; everything else is text or categories."""
    return pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)


def check_comparable_scales(outcome: str, outcome_values, predictor: str, predictor_values) -> None:
    """A predictor's effects are compared with the outcome's, so both must be on one scale.

    Refused: predictions outside the outcome's range widened by its span on each side (a 0/1 outcome
    against a 0/100 score), and a two-valued outcome not coded 0/1 (−1/+1, 0/100) against predictions
    in [0, 1] that are not the outcome's own values.
    """
    y = np.asarray(outcome_values, dtype=float)
    p = np.asarray(predictor_values, dtype=float)
    levels = np.unique(y)
    low, high = float(y.min()), float(y.max())
    span = high - low
    beyond = p.min() < low - span or p.max() > high + span
    probabilities = p.min() >= 0 and p.max() <= 1 and not np.isin(p, levels).all()
    recoded = len(levels) == 2 and set(levels) != {0.0, 1.0} and probabilities
    if beyond or recoded:
        scale = f"values {{{levels[0]:g}, {levels[1]:g}}}" if len(levels) == 2 else f"range [{low:g}, {high:g}]"
        raise FairpathInputError(
            f"predictor column {predictor!r} (range [{p.min():g}, {p.max():g}]) is not on the scale of outcome column {outcome!r} "
            f"({scale}); their causal effects are compared, so put both on one scale: code a binary outcome 0/1 with "
            "predictions in [0, 1] (probabilities or 0/1 decisions), or rescale the predictor to the outcome's units"
        )


def python_value(value):
    """A NumPy scalar as the Python value it holds (its repr in a message is ``1``, not NumPy 2's ``np.int64(1)``)."""
    return value.item() if isinstance(value, np.generic) else value


def _fewer_folds_or_more_data() -> str:
    fewer = remedy("use fewer folds", "--folds", "use fewer folds (--folds)")
    return f"{fewer} or more data" if fewer else "use more data"


def _more_data_or_merged_levels() -> str:
    merge = remedy("merge levels", "--merge", "merge levels (--merge)")
    return f"use more data or {merge}" if merge else "use more data"


def check_group_sizes(counts: dict, column: str, minimum: int, purpose: str = "") -> None:
    """Each level of ``column`` (``counts``: level -> rows) has at least ``minimum`` rows; with more than
    two levels every small one is listed (``check_level_sizes``)."""
    reason = f" {purpose}" if purpose else ""
    if len(counts) > 2:
        check_level_sizes(counts, column, minimum, reason=f"each level needs at least {minimum}{reason}")
    for level, count in counts.items():
        level = python_value(level)
        if count < minimum:
            raise FairpathInputError(
                f"group {column}={level!r} has {count} rows; at least {minimum} are needed{reason}; {_more_data_or_merged_levels()}"
            )


def check_fit_group_sizes(counts: dict, column: str, n_folds: int = 1, purpose: str = "") -> None:
    """Each level of ``column`` (``counts``: level -> rows) has ``MIN_GROUP_ROWS_PER_FOLD`` rows per fold.

    ``n_folds=1`` is a single fit on all rows. Every estimator that fits per group uses this one
    floor and message, so ``decompose``, ``FairAdapt``, ``FairPredictor`` and ``ConstrainedLearner``
    refuse the same data in the same words; with more than two levels every small one is listed
    (``check_level_sizes``).
    """
    needed = MIN_GROUP_ROWS_PER_FOLD * n_folds
    fitting = f"{n_folds}-fold cross-fitting" if n_folds > 1 else "fitting"
    reason = f" {purpose}" if purpose else ""
    if len(counts) > 2:
        per_fold = f" ({MIN_GROUP_ROWS_PER_FOLD} per fold; fewer folds need fewer)" if n_folds > 1 else ""
        check_level_sizes(counts, column, needed, reason=f"{fitting}{reason} needs at least {needed} rows per level{per_fold}")
    per = "per fold and group" if n_folds > 1 else "per group"
    advice = _fewer_folds_or_more_data() if n_folds > 1 else _more_data_or_merged_levels()
    for level, count in counts.items():
        level = python_value(level)
        if count < needed:
            raise FairpathInputError(
                f"group {column}={level!r} has {count} rows; {fitting}{reason} needs at least {needed} "
                f"({MIN_GROUP_ROWS_PER_FOLD} {per}): {advice}"
            )


def check_level_sizes(counts: dict, column: str, minimum: int, *, reason: str) -> None:
    """Every level of ``column`` (``counts``: level -> rows) has at least ``minimum`` rows, else one error
    lists every smaller level with its rows (fewest first), says why (``reason``: why the floor exists,
    e.g. "each cross-fitting fold needs 10 rows per level") and names the remedies in the caller's words
    (:func:`remedy`): merge the levels, or drop their rows explicitly. Level names are
    the cells' text, as ``fairpath._levels.recode_levels`` and ``--merge`` / ``--drop-levels`` take them.
    """
    small = sorted(((count, str(python_value(level))) for level, count in counts.items() if count < minimum),
                   key=lambda item: (item[0], item[1]))
    if not small:
        return
    names = [name for _, name in small]
    listed = ", ".join(f"{name!r} ({count} row{'' if count == 1 else 's'})" for count, name in small)
    merged = {name: "other" for name in names}
    merge = remedy(f"merge={merged}", "--merge", f"--merge \"{','.join(f'{name}=other' for name in names)}\"")
    drop = remedy(f"drop_levels={names}", "--drop-levels", f"--drop-levels \"{','.join(names)}\"")
    ways = [way for way in (merge and f"merge each into another level ({merge})", drop and f"drop their rows explicitly ({drop})") if way]
    advice = " or ".join(ways) or "use more data"
    raise FairpathInputError(
        f"column {column!r} has {len(small)} level{'s' if len(small) > 1 else ''} with fewer than {minimum} rows: {listed}; "
        f"{reason}. {advice[0].upper()}{advice[1:]}"
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
                f"(one per fold): {_fewer_folds_or_more_data()}"
            )


# -- declared parameters ------------------------------------------------------------------------------
# Each public function and estimator declares its parameters once, as constraint objects, with
# ``validate_params``; the command line derives its flag types from the same objects (``flag_type``), so
# the API and the CLI accept and refuse the same values in the same words. Each constraint also lists
# values it refuses (``invalid``), which tests/test_public_functions.py feeds to every declared parameter.


class Constraint:
    """A rule for one argument: ``check(name, value)`` raises :class:`FairpathInputError` naming ``name``."""

    # how the command line's text is converted before ``check``, and what that text must be
    parse = staticmethod(str)
    kind = "a valid value"

    def check(self, name: str, value) -> None:
        raise NotImplementedError

    def invalid(self) -> tuple:
        """Values this constraint refuses."""
        raise NotImplementedError


class Integer(Constraint):
    """An integer (not a bool, not a float) in [minimum, maximum]."""

    parse = staticmethod(int)
    kind = "an integer"

    def __init__(self, minimum: int | None = None, maximum: int | None = None):
        self.minimum, self.maximum = minimum, maximum

    def check(self, name, value):
        check_int(name, value, self.minimum, self.maximum)

    def invalid(self):
        bounds = (self.minimum - 1,) if self.minimum is not None else ()
        bounds += (self.maximum + 1,) if self.maximum is not None else ()
        return ("5", 2.5, True, None, *bounds)


class Real(Constraint):
    """A finite number (ints accepted, bools not) in the interval from ``low`` to ``high``."""

    parse = staticmethod(float)
    kind = "a number"

    def __init__(self, low: float | None = None, high: float | None = None, *, open_low: bool = False, open_high: bool = False):
        self.low, self.high, self.open_low, self.open_high = low, high, open_low, open_high

    def check(self, name, value):
        check_float(name, value, self.low, self.high, open_low=self.open_low, open_high=self.open_high)

    def invalid(self):
        bounds = (self.low if self.open_low else self.low - 1,) if self.low is not None else ()
        bounds += (self.high if self.open_high else self.high + 1,) if self.high is not None else ()
        return ("0.5", True, None, float("nan"), float("inf"), *bounds)


class Probability(Real):
    """A number in (0, 1) (or [0, 1] with ``open_ends=False``): a level, a quantile, an alpha."""

    def __init__(self, open_ends: bool = True):
        super().__init__(0.0, 1.0, open_low=open_ends, open_high=open_ends)
        self.open_ends = open_ends

    def check(self, name, value):
        check_probability(name, value, open_ends=self.open_ends)


class NonNegative(Real):
    """A number ≥ 0, ``inf`` included (a penalty of infinite weight is a constraint)."""

    def __init__(self):
        super().__init__(0.0)

    def check(self, name, value):
        check_nonnegative(name, value)

    def invalid(self):
        return ("0.5", True, None, float("nan"), -1.0)


class Seed(Integer):
    """A seed: an integer in [0, ``MAX_SEED``]."""

    def __init__(self):
        super().__init__(0, MAX_SEED)

    def check(self, name, value):
        check_seed(value, name)


class Draws(Integer):
    """Bootstrap draws: ``MIN_DRAWS`` … ``MAX_BOOTSTRAP_DRAWS``, or 0 (no interval) with ``allow_zero``."""

    def __init__(self, allow_zero: bool = False):
        super().__init__(0 if allow_zero else MIN_DRAWS, MAX_BOOTSTRAP_DRAWS)
        self.allow_zero = allow_zero

    def check(self, name, value):
        check_draws(name, value, allow_zero=self.allow_zero)

    def invalid(self):
        return (*super().invalid(), *((1,) if self.allow_zero else ()))


class AutoInteger(Integer):
    """``"auto"`` (the callee chooses, e.g. by the data's size) or an integer in [minimum, maximum]."""

    parse = staticmethod(lambda text: text if text == "auto" else int(text))
    kind = "'auto' or an integer"

    def check(self, name, value):
        if isinstance(value, str):
            if value != "auto":
                raise FairpathInputError(f"{name} must be 'auto' or an integer ≥ {self.minimum}, got {value!r}")
            return
        super().check(name, value)

    def invalid(self):
        return ("many", *super().invalid())


class Splits(AutoInteger):
    """``"auto"`` or an integer in [1, ``MAX_REPEATS``] (cross-fitting splits, processes)."""

    def __init__(self):
        super().__init__(1, MAX_REPEATS)


class Folds(AutoInteger):
    """``"auto"`` or an integer ≥ 2 (cross-fitting folds)."""

    def __init__(self):
        super().__init__(2)


# Local Dask workers (--workers N): each is a process; beyond a few hundred a machine only thrashes (100,000 started
# workers until the run was killed).
MAX_LOCAL_WORKERS = 256


def local_workers() -> "Integer":
    """The declaration of a number of local Dask workers: 1 to :data:`MAX_LOCAL_WORKERS`."""
    return Integer(1, MAX_LOCAL_WORKERS)


class Jobs(Integer):
    """Threads: an integer ≥ 1, or -1 for one per core."""

    def __init__(self):
        super().__init__(1)

    def check(self, name, value):
        if value != -1 or isinstance(value, (bool, float)):
            try:
                check_int(name, value, minimum=1)
            except FairpathInputError:
                raise FairpathInputError(f"{name} must be a positive integer or -1 (one thread per core), got {_describe(value)}") from None

    def invalid(self):
        return ("5", 2.5, True, None, 0, -2)


class Boolean(Constraint):
    """A real boolean (the string ``"false"`` is not one)."""

    def check(self, name, value):
        check_bool(name, value)

    def invalid(self):
        return ("false", 1, None)


class Options(Constraint):
    """One of ``choices``."""

    def __init__(self, choices):
        self.choices = tuple(choices)

    def check(self, name, value):
        check_choice(name, value, self.choices)

    def invalid(self):
        return ("no-such-choice", 3, [self.choices[0]])


class Text(Constraint):
    """A non-empty string (a label, a name); ``purpose`` says what it names, in the error."""

    def __init__(self, purpose: str = ""):
        self.purpose = purpose

    def check(self, name, value):
        if not isinstance(value, str) or not value.strip():
            raise FairpathInputError(f"{name} must be a non-empty string{' ' + self.purpose if self.purpose else ''}; got {value!r}")

    def invalid(self):
        return ("", "  ", 3, None)


class Columns(Constraint):
    """Column names: one string or a list of strings (``check_columns_arg``)."""

    def check(self, name, value):
        check_columns_arg(name, value)

    def invalid(self):
        return (3, [1, 2], {"a": 1})


class ColumnName(Constraint):
    """One column name (a string; a list is refused rather than read as several)."""

    def check(self, name, value):
        check_column_name(name, value)

    def invalid(self):
        return (3, ["a", "b"], None)


class Frame(Constraint):
    """A pandas DataFrame with unique column names (or a Dask DataFrame, with ``partitioned``)."""

    def __init__(self, partitioned: bool = False):
        self.partitioned = partitioned

    def check(self, name, value):
        check_frame(value, name, self.partitioned)

    def invalid(self):
        return (np.zeros((2, 2)), [[1, 2]], None)


# A Dask scheduler's address: SCHEME://HOST[:PORT] (Dask's default port 8786 where it is left out) or HOST:PORT (tcp).
_SCHEDULER_ADDRESS = re.compile(r"(?:(?:tcp|tls|ws|wss|ucx)://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>\d{1,5}))?"
                                r"|(?P<bare_host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<bare_port>\d{1,5}))")


def check_scheduler(name: str, value) -> None:
    """``value`` is a Dask scheduler: a ``distributed.Client``, or an address (:data:`_SCHEDULER_ADDRESS`), checked before
    anything connects, so that a malformed one is an error saying what an address looks like, not a network attempt."""
    if type(value).__name__ == "Client" and type(value).__module__.split(".")[0] == "distributed":
        return
    match = _SCHEDULER_ADDRESS.fullmatch(value) if isinstance(value, str) else None
    port = match and (match["port"] or match["bare_port"])
    if match is None or (port and not 1 <= int(port) <= 65535):
        local = remedy("workers=N", "--workers", "--workers N")
        raise FairpathInputError(
            f"{name} must be a Dask scheduler's address, tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786; tls://, ws://, wss:// and "
            f"ucx:// too; HOST:PORT means tcp://), or a distributed.Client; got {_describe(value)}. `dask scheduler` prints the "
            f"address of the scheduler it starts{f'; {local} runs a local cluster instead' if local else ''}")


class SchedulerAddress(Constraint):
    """A Dask scheduler: its address (``tcp://10.0.0.5:8786``) or a ``distributed.Client`` (:func:`check_scheduler`)."""

    kind = "a Dask scheduler address such as tcp://10.0.0.5:8786"

    def check(self, name, value):
        check_scheduler(name, value)

    def invalid(self):
        return ("not a url", "http://10.0.0.5:8786", "", "tcp://10.0.0.5:99999", "scheduler.json", 8786)


class Optional(Constraint):
    """``None`` or a value that ``inner`` accepts."""

    def __init__(self, inner: Constraint):
        self.inner = inner
        self.parse, self.kind = inner.parse, inner.kind

    def check(self, name, value):
        if value is not None:
            self.inner.check(name, value)

    def invalid(self):
        return tuple(value for value in self.inner.invalid() if value is not None)


def validate_params(constraints: dict[str, Constraint], on: str = "fit"):
    """Declare and check the parameters of a function, or of a class: checked on the attributes of the same
    names when its method ``on`` starts (an estimator's ``fit``, as scikit-learn does, so that ``set_params``
    is checked too; a dataclass's ``__post_init__``).

    The arguments are checked as given, never converted, so an accepted value reaches the function unchanged.
    The declaration is readable as ``parameter_constraints``.
    """

    def decorate(target):
        if isinstance(target, type):
            _declare_class(target, constraints, on)
            return target
        signature = inspect.signature(target)
        unknown = set(constraints) - set(signature.parameters)
        if unknown:  # a declaration that names no parameter is a programming error, caught at import
            raise TypeError(f"{target.__qualname__} has no parameter(s) {sorted(unknown)}")

        @functools.wraps(target)
        def checked(*args, **kwargs):
            given = signature.bind(*args, **kwargs).arguments
            for name, constraint in constraints.items():
                if name in given:
                    constraint.check(name, given[name])
            return target(*args, **kwargs)

        checked.parameter_constraints = MappingProxyType(dict(constraints))
        return checked

    return decorate


def _declare_class(cls: type, constraints: dict[str, Constraint], on: str) -> None:
    unknown = set(constraints) - set(inspect.signature(cls.__init__).parameters)
    if unknown:
        raise TypeError(f"{cls.__qualname__} has no parameter(s) {sorted(unknown)}")
    method = getattr(cls, on)

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        for name, constraint in constraints.items():
            constraint.check(name, getattr(self, name))
        return method(self, *args, **kwargs)

    setattr(cls, on, checked)
    cls.parameter_constraints = MappingProxyType(dict(constraints))


def declared(function, name: str) -> Constraint:
    """The constraint ``function`` (or estimator class) declares for its parameter ``name``."""
    return function.parameter_constraints[name]


def flag_type(flag: str, constraint: Constraint):
    """An argparse ``type`` for ``flag``: the text converted and checked by ``constraint``, so that a flag refuses
    what the API refuses, naming the flag (``five``, ``-1``, ``nan`` or a number beyond the bounds)."""

    def parse(text: str):
        try:
            value = constraint.parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be {constraint.kind}, got {text!r}") from None
        try:
            constraint.check(flag, value)
        except FairpathInputError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return value

    parse.constraint = constraint  # read by the generated flag tests
    return parse
