"""A protected attribute with several levels: the product of two or more columns (``race/sex``),
merged or explicitly dropped levels, and the contrasts compared (each level against the reference, or every pair)
with their names.

A level's name is its cells' text (``str``): what ``merge`` / ``--merge``, ``drop_levels`` /
``--drop-levels`` and ``--x0`` / ``--x1`` take and what every table shows. One rule for every name:
it is matched exactly as written, never parsed nor trimmed. ``01`` is not ``1``, ``1.0`` is not ``1``,
`` base`` (with its space) is not ``base`` (a name that differs from a level only by spaces is refused,
saying so), ``None`` and ``true`` are texts like any other (read from a CSV file, ``None`` is a level: the
missing-value tokens are an empty cell, NA, N/A, null and nan, see ``fairpath._io``). An integer a settings
file gives (``x0 = 0``) names the level written as that integer (``0``); a boolean (YAML's ``true``, ``yes``,
``on``), a decimal, and a YAML number written otherwise than it reads (``010`` reads as 8) are refused:
quote the level's text. Read the protected attribute's columns with ``read_table(levels=[...])`` (the
command line does) so that the file's texts are its levels.

Rows are removed only where a level is named in ``drop_levels``, and the counts removed are returned, so
that the caller can say so; a level with too few rows is refused by
``fairpath._validation.check_level_sizes``, which names both remedies.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._remedies import remedy
from fairpath._validation import (
    ColumnName, Columns, Frame, _first_row, check_columns_arg, check_columns_present, check_list_arg, python_value,
    validate_params,
)

# Joins the source columns' names and their levels' names: race/sex, black/female.
SEPARATOR = "/"


@dataclass(frozen=True)
class RecodedLevels:
    """What :func:`recode_levels` returns.

    Attributes
    ----------
    data : a new frame: the rows of the dropped levels removed (the other rows keep their index labels),
        the merged levels renamed.
    column : the recoded column.
    dropped : rows removed per dropped level, in the order ``drop_levels`` gave them ({} when none).
    """

    data: pd.DataFrame
    column: str
    dropped: dict[str, int]

    def describe(self) -> str:
        """The dropped rows in one sentence, for a log or a report ("" when none were dropped)."""
        if not self.dropped:
            return ""
        levels = ", ".join(f"{level!r} ({count} row{'' if count == 1 else 's'})" for level, count in self.dropped.items())
        rows = sum(self.dropped.values())
        return f"dropped {rows} row{'' if rows == 1 else 's'} of column {self.column!r}, level(s) {levels}"


def _check_complete(values: pd.Series, purpose: str) -> None:
    """No missing value in ``values`` (a level needs a name); the error names the column, its rows and the first."""
    missing = values.isna()
    if missing.any():
        raise FairpathInputError(
            f"column {values.name!r} has missing values in {int(missing.sum())} rows (the first: {_first_row(values.index, missing)}); "
            f"{purpose} needs a level in every row: impute or drop these rows first, or give the missing value a level "
            "of its own (e.g. fill them with 'unknown')"
        )


def _level_names(values: pd.Series) -> pd.Series:
    """The cells' text; two values with one text (1 and "1") would merge silently, so they are refused."""
    names = values.astype(str)
    distinct = pd.Series(pd.unique(values))
    clashes = distinct.groupby(distinct.astype(str).to_numpy()).size()
    clashes = clashes[clashes > 1]
    if len(clashes):
        raise FairpathInputError(
            f"column {values.name!r} holds different values written alike, {list(clashes.index)} (e.g. the number 1 and the text '1'); "
            "their rows would become one level: make the column's values one type first"
        )
    return names


@validate_params({"data": Frame(), "columns": Columns()})
def combine_attributes(data: pd.DataFrame, columns: list[str]) -> tuple[pd.DataFrame, str]:
    """The product attribute of two or more columns: a new column named ``"/".join(columns)`` whose level
    in a row joins the columns' values by "/" (race "black" and sex "female" give "black/female").

    Returns a new frame (``data`` is not modified) and the new column's name. Refused: fewer than two
    columns, a column given twice or missing from ``data``, a new column's name that ``data`` already
    has, a missing value in a source column, and a value containing "/" (its level's name would be
    ambiguous).
    """
    columns = check_columns_arg("columns", columns)
    if len(columns) < 2:
        raise FairpathInputError(f"combine_attributes needs at least two columns to combine, got {columns}; one column is already an attribute")
    repeated = [column for column, times in Counter(columns).items() if times > 1]
    if repeated:
        raise FairpathInputError(f"column(s) {repeated} given more than once in {columns}; name each column once")
    check_columns_present(data, columns)
    name = SEPARATOR.join(columns)
    if name in data.columns:
        raise FairpathInputError(f"the data already have a column {name!r}, the name of the combined attribute of {columns}; rename or drop it first")
    combined = None
    for column in columns:
        _check_complete(data[column], "combining attributes")
        names = _level_names(data[column])
        with_separator = sorted({value for value in names.unique() if SEPARATOR in value})
        if with_separator:
            raise FairpathInputError(
                f"column {column!r} has level(s) {with_separator} containing {SEPARATOR!r}, which separates the levels of the combined "
                f"attribute; rename them first, e.g. recode_levels(data, {column!r}, merge={{{with_separator[0]!r}: "
                f"{with_separator[0].replace(SEPARATOR, '-')!r}}})"
            )
        combined = names if combined is None else combined + SEPARATOR + names
    return data.assign(**{name: combined}), name


def _unknown_levels(names, levels: list[str], column: str, argument: str) -> None:
    unknown = [name for name in names if name not in levels]
    if unknown:
        raise FairpathInputError(f"{argument} names level(s) {unknown} that column {column!r} does not have"
                                 f"{_spacing_hint(unknown, levels)}; its levels are {levels}")


def _check_merge(merge, levels: list[str], column: str) -> dict[str, str]:
    if not isinstance(merge, dict):
        raise FairpathInputError(f"merge must be a dict of level names to new names, e.g. {{'asian': 'other'}}, got {type(merge).__name__}")
    for old, new in merge.items():
        if not isinstance(old, str) or not isinstance(new, str) or not new.strip():
            raise FairpathInputError(
                f"merge must map level names (strings) to new non-empty names (strings), got {old!r} -> {new!r}; "
                "a level's name is its cells' text, e.g. '1' for the number 1"
            )
    _unknown_levels(merge, levels, column, "merge")
    return merge


def _check_drop(drop_levels, levels: list[str], column: str, merge: dict) -> list[str]:
    drop = check_list_arg("drop_levels", drop_levels, item="level name")
    bad = [name for name in drop if not isinstance(name, str)]
    if bad:
        raise FairpathInputError(f"drop_levels must hold level names (strings), got {bad[0]!r} ({type(bad[0]).__name__}); "
                                 "a level's name is its cells' text, e.g. '1' for the number 1")
    repeated = [name for name, times in Counter(drop).items() if times > 1]
    if repeated:
        raise FairpathInputError(f"drop_levels names level(s) {repeated} more than once; name each level once")
    _unknown_levels(drop, levels, column, "drop_levels")
    both = [name for name in drop if name in merge or name in merge.values()]
    if both:
        raise FairpathInputError(f"level(s) {both} are both merged (from or into) and dropped; choose one for each")
    return drop


@validate_params({"data": Frame(), "column": ColumnName()})
def recode_levels(data: pd.DataFrame, column: str, *, merge: dict[str, str] | None = None,
                  drop_levels: list[str] | None = None) -> RecodedLevels:
    """Merge and drop levels of ``column``.

    ``merge`` maps existing level names (the cells' text, e.g. "1" for the number 1) to new names;
    several may map to one, and a new name may be an existing level's (``{"asian": "other"}`` adds the
    asian rows to "other"). With ``merge`` the column holds the levels' names (text) afterwards;
    without it the values keep their type. ``drop_levels`` lists the levels whose rows are removed:
    only those, and the counts are returned (``RecodedLevels.dropped``, ``describe()``). Unknown level
    names, a level both merged and dropped, and a result with fewer than two levels are refused.
    Returns a :class:`RecodedLevels`; ``data`` is not modified.
    """
    check_columns_present(data, [column])
    _check_complete(data[column], "recoding levels")
    names = _level_names(data[column])
    levels = sorted(names.unique())
    merge = _check_merge(merge if merge is not None else {}, levels, column)
    drop = _check_drop(drop_levels if drop_levels is not None else [], levels, column, merge)
    dropped_rows = names.isin(drop).to_numpy()  # positions: the index may repeat labels
    kept = sorted({merge.get(name, name) for name in levels if name not in drop})
    if len(kept) < 2:
        changes = " and ".join([f"merging {merge}"] * bool(merge) + [f"dropping {drop}"] * bool(drop))
        result = f"{changes} in column {column!r} leaves" if changes else f"column {column!r} holds"
        raise FairpathInputError(f"{result} {len(kept)} level(s) {kept}; a comparison needs at least two (its levels: {levels})")
    recoded = data[~dropped_rows].copy()
    if merge:
        kept_names = names[~dropped_rows]
        recoded[column] = kept_names.where(~kept_names.isin(list(merge)), kept_names.map(merge)).to_numpy()
    elif isinstance(recoded[column].dtype, pd.CategoricalDtype):  # a dropped level must not stay behind as an empty category
        recoded[column] = recoded[column].cat.remove_unused_categories()
    counts = names[dropped_rows].value_counts()
    return RecodedLevels(data=recoded, column=column, dropped={name: int(counts[name]) for name in drop})


def _merge_entry_problem(parts: list[str]) -> str:
    """What is wrong with one ``--merge`` entry split at '=' ("" when nothing is)."""
    if len(parts) != 2:
        return "has no '='" if len(parts) == 1 else "has more than one '='"
    old, new = parts
    return "has no level name before '='" if not old else "has no new name after '='" if not new else ""


def merge_from_text(text: str | None) -> dict[str, str]:
    """Parse ``"asian=other,native=other"`` (the ``--merge`` flag, or a config file's ``merge`` text) into
    ``{"asian": "other", "native": "other"}`` (several levels may take one new name); an empty text or None gives an
    empty dict. Level names are taken exactly as written, spaces included (``" base=other"`` names the level
    ``" base"``). Malformed entries (``A=``, ``=B``, ``A=B=C``, ``A``) and a level given twice are refused."""
    merge: dict[str, str] = {}
    for entry in names_from_text(text):
        parts = entry.split("=")
        problem = _merge_entry_problem(parts)
        if problem:
            raise FairpathInputError(f"--merge entry {entry!r} {problem}; write LEVEL=NEW, comma-separated, "
                                     'e.g. --merge "asian=other,native=other"')
        old, new = parts
        if old in merge:
            raise FairpathInputError(f"--merge gives level {old!r} twice (into {merge[old]!r} and {new!r}); merge each level once")
        merge[old] = new
    return merge


def names_from_text(text: str | None) -> list[str]:
    """Level names from comma-separated text (``--drop-levels``, a config file's text), exactly as written, spaces
    included; an empty text or None gives none. An empty or blank entry (``a,,b``, ``a, ``) is refused."""
    if not text:
        return []
    names = text.split(",")
    blank = [name for name in names if not name.strip()]
    if blank:
        raise FairpathInputError(f"level list {text!r} has an empty entry {blank[0]!r}; write level names separated by single "
                                 "commas, e.g. \"asian,native\" (names are matched exactly as written, spaces included)")
    return names


def level_name(value) -> str:
    """The name of the level of a cell holding ``value``: its text (a number as Python writes it)."""
    return str(python_value(value))


def level_text(name) -> str:
    """The text a level is named by: ``name`` itself, or a settings file's integer as Python writes it (``0``, ``12``). A
    boolean (YAML reads ``true``, ``yes`` and ``on`` as one), a decimal (``1.50`` reads as 1.5) and anything else are
    refused: they do not say the cells' text."""
    if isinstance(name, str):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        return str(name)
    text = str(name).lower() if isinstance(name, bool) else str(name)
    raise FairpathInputError(f"a level is named by its cells' text, got {name!r} ({type(name).__name__}); write the level exactly as "
                             f"the data write it, quoted in a settings file (e.g. x0: '{text}' in YAML, x0 = \"{text}\" in TOML)")


def match_level(values: pd.Series, name):
    """The value of ``values`` (a column of levels) whose text is ``name`` (:func:`level_text`), exactly (see the module
    docstring). Refused, naming the levels: a name no level has (with a hint where it differs from one only by spaces),
    and two values written alike (the number 1 and the text '1')."""
    name = level_text(name)
    distinct = pd.unique(values.dropna())
    matches = [value for value in distinct if level_name(value) == name]
    if len(matches) > 1:
        raise FairpathInputError(f"column {values.name!r} holds different values written alike, {name!r} (e.g. the number 1 "
                                 "and the text '1'); make the column's values one type first")
    if not matches:
        levels = sorted({level_name(value) for value in distinct})
        raise FairpathInputError(f"level {name!r} does not occur in column {values.name!r}{_spacing_hint([name], levels)}; "
                                 f"its levels are {levels[:20]}" + (f" and {len(levels) - 20} more" if len(levels) > 20 else ""))
    return python_value(matches[0])


def _spacing_hint(names, levels: list[str]) -> str:
    """Where a name differs from a level only by spaces: a note that names are matched exactly as written."""
    near = {name: level for name in names for level in levels if name != level and name.strip() == level.strip()}
    if not near:
        return ""
    examples = ", ".join(f"{name!r} is not {level!r}" for name, level in near.items())
    return f" (level names are matched exactly as written, spaces included: {examples})"


# The most contrasts of one run: every pair of 46 levels. Beyond, a run takes hours (each contrast fits its own
# propensities) and a family-wise interval over thousands of contrasts says nothing; compare each level with the reference.
MAX_CONTRASTS = 1_035


def contrast_codes(n_levels: int, contrasts: str) -> tuple[tuple[int, int], ...]:
    """The contrasts as pairs of level codes: every level against the reference (code 0), or every pair (a < b)."""
    if contrasts == "pairs":
        if n_levels * (n_levels - 1) // 2 > MAX_CONTRASTS:
            instead = remedy('contrasts="reference"', "--contrasts", "--contrasts reference")
            merge = remedy("merge={...}", "--merge", '--merge "A=other,..."')
            raise FairpathInputError(
                f"every pair of {n_levels} levels is {n_levels * (n_levels - 1) // 2:,} contrasts, more than {MAX_CONTRASTS:,} (every "
                "pair of 46 levels), each with its own fits: compare each level with the reference"
                + (f" ({instead})" if instead else "") + (f", or merge levels ({merge})" if merge else ""))
        return tuple((a, b) for a in range(n_levels) for b in range(a + 1, n_levels))
    return tuple((0, b) for b in range(1, n_levels))


PAIR_SEPARATOR = " vs "


def _contrast_label(levels: tuple, code: tuple[int, int]) -> str:
    """A contrast's name: its level against the reference (``"black"``), or ``"b vs a"`` for a pair without the reference."""
    a, b = code
    return str(levels[b]) if a == 0 else f"{levels[b]}{PAIR_SEPARATOR}{levels[a]}"


def contrast_labels(column: str, levels: tuple, codes) -> list[str]:
    """The contrasts' names (:func:`_contrast_label`), one per contrast. Refused, before anything is fitted: two contrasts
    with one name, from a level whose text contains " vs " (``"c vs b"`` beside ``c`` and ``b``, compared in pairs) or two
    levels written alike (the number 1 and the text "1")."""
    labels = [_contrast_label(levels, code) for code in codes]
    if len(set(labels)) == len(labels):
        return labels
    times = Counter(labels)
    clash = next(label for label in labels if times[label] > 1)
    named = [f"{levels[b]!r} against {levels[a]!r}" for (a, b), label in zip(codes, labels) if label == clash]
    with_separator = [str(level) for level in levels if PAIR_SEPARATOR in str(level)]
    remedy = (f"rename the level(s) {with_separator} whose text contains {PAIR_SEPARATOR!r}, which separates a pair's levels, e.g. "
              f"merge={{{with_separator[0]!r}: {with_separator[0].replace(PAIR_SEPARATOR, '-')!r}}} (command line: --merge "
              f"\"{with_separator[0]}={with_separator[0].replace(PAIR_SEPARATOR, '-')}\")") if with_separator else \
        "make the column's values one type first (two levels are written alike)"
    raise FairpathInputError(f"two contrasts of column {column!r} would share the name {clash!r} ({' and '.join(named)}); {remedy}")
