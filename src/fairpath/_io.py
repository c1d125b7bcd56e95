"""Reading tables and text files with clear errors, and writing result files atomically.

Reading: missing values are recognised in every column of a CSV file (an empty cell, ``NA``,
``N/A``, ``null``, ``nan`` and pandas' other default markers), so a numeric column with a blank
cell stays numeric and the blank is reported as a missing value where the column is used. Where the
empty string is a real category (the census' ``industry``), name the column in ``empty_category``.
The text ``None`` is not among them: it is a value (a level "None" of an insurance or a religion column);
where it means "missing", declare it. Other tokens that mean "missing" in a file (UCI's ``?``, a ``-``) are
declared with ``na_values``; columns that are categories although they look like numbers are declared with
``categorical``.

Levels are the cells' exact text. The columns named in ``categorical`` are read as text and become
categories (``01`` and ``1``, ``1`` and ``1.0``, ``true`` and ``True``, `` base`` and ``base`` stay apart),
ordered by number where every text is one and else by text. The columns named in ``levels`` (the
protected attribute's, on the command line) are read as text too; a column of levels keeps numbers only
where each number reads back as its cell's text (``0``, ``1``, ``2.5``), so that its levels sort as
numbers and no two texts become one level; one text that does not (``01``, ``1.0`` beside ``1``, ``true``)
keeps the whole column as text (in a partitioned table, :func:`read_partitioned`, a column of levels is text).

Duplicated headers (the header read as the parser reads it, also across a quoted newline), a header
without rows and files that are not UTF-8 are errors naming the file.

Settings files (specifications, audit configs) are read through one bounded parser: at most
:data:`MAX_SETTINGS_BYTES`, nested at most :data:`MAX_SETTINGS_DEPTH` levels, and YAML anchors and
aliases are refused (a 281-byte alias bomb took 32 s and 1.35 GB to expand).

Writing: every result file is written to a temporary file in its own folder and moved into place
with ``os.replace``, so a reader (or a resumed run) sees the old file or the new one, never half.
A path that is a symbolic link, a pipe, a socket or a device is refused, not replaced. Text cells of
a CSV file that a spreadsheet would run as a formula get a leading apostrophe (:func:`write_csv`).
A run folder is locked while a run writes into it (:func:`locked_folder`). A result saved into a folder
replaces the previous save's files there (:func:`replacing_outputs`): what that save wrote and this one did
not is removed, by the list it left, so that no stale file (a contrast of another run) sits beside the new report.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import functools
import io
import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Iterator

import pandas as pd
import yaml

from fairpath._exceptions import FairpathInputError
from fairpath._validation import MISSING_MARKERS, check_columns_arg, check_output_dir, check_replaceable

_PARQUET = {".parquet", ".pq"}
# Tried in order on bytes that are not UTF-8; latin-1 decodes anything, so it is the last resort.
_LIKELY_ENCODINGS = ("utf-16", "cp1252", "latin-1")


def _guess_encoding(raw: bytes) -> str:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    for encoding in _LIKELY_ENCODINGS[1:]:
        try:
            raw.decode(encoding)
            return encoding
        except UnicodeDecodeError:
            continue
    return "latin-1"  # pragma: no cover - latin-1 decodes every byte


def not_utf8_error(path: str | Path, what: str, error: UnicodeDecodeError | None = None) -> FairpathInputError:
    """The error for a file that is not UTF-8: names the file, the first bad byte and the likely encoding."""
    path = Path(path)
    with open(path, "rb") as handle:
        raw = handle.read(1 << 20)
    where = ""
    if error is not None and isinstance(error.object, (bytes, bytearray)) and error.start < len(error.object):
        where = f" (byte 0x{error.object[error.start]:02x} at position {error.start})"
    encoding = _guess_encoding(raw)
    return FairpathInputError(
        f"{what} {str(path)!r} is not UTF-8{where}; it looks like {encoding}. Save it as UTF-8, "
        f"e.g. iconv -f {encoding} -t utf-8 {path.name} > {path.stem}-utf8{path.suffix}"
    )


def read_text(path: str | Path, what: str = "file") -> str:
    """The text of a UTF-8 file; a missing or non-UTF-8 file is a :class:`FairpathInputError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise FairpathInputError(f"{what} {str(path)!r} does not exist or is not a file; check the path")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise not_utf8_error(path, what, error) from None


# -- settings files --------------------------------------------------------------------------------

# Far above any real specification or config (the built-in ones are under 10 kB, a 2,000-value specification ~40 kB).
MAX_SETTINGS_BYTES = 1_000_000
MAX_SETTINGS_DEPTH = 32


# libyaml's safe loader where PyYAML was built with it (about six times faster), else PyYAML's own.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str, source: str):
    """The YAML document in ``text``: safe types only, no anchors or aliases, nested at most
    :data:`MAX_SETTINGS_DEPTH` levels (checked on the parser's events, in one pass, before anything is
    built); ``source`` names the text in errors."""
    try:
        _check_yaml_events(yaml.parse(text, Loader=_YAML_LOADER), source)
        return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as error:
        raise FairpathInputError(f"could not parse {source}: it is not valid YAML ({error})") from None


def _check_yaml_events(events, source: str) -> None:
    depth = 0
    for event in events:
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise FairpathInputError(f"{source} uses a YAML anchor or alias (line {line}); fairpath refuses them (a few "
                                     "of them expand a small file into gigabytes): write the values out")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_SETTINGS_DEPTH:
                raise FairpathInputError(f"{source} nests deeper than {MAX_SETTINGS_DEPTH} levels (line {line})")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _settings_text(path: str | Path, what: str) -> tuple[str, str]:
    path = Path(path)
    if not path.is_file():
        raise FairpathInputError(f"{what} {str(path)!r} does not exist or is not a file; check the path")
    size = path.stat().st_size
    if size > MAX_SETTINGS_BYTES:
        raise FairpathInputError(f"{what} {str(path)!r} holds {size:,} bytes; settings files are read up to "
                                 f"{MAX_SETTINGS_BYTES:,} bytes: check that this is the right file")
    return read_text(path, what), f"{what} {str(path)!r}"


def read_yaml(path: str | Path, what: str = "settings file"):
    """The YAML document of a settings file (see :func:`parse_yaml`), at most :data:`MAX_SETTINGS_BYTES`."""
    return parse_yaml(*_settings_text(path, what))


def read_toml(path: str | Path, what: str = "settings file") -> dict:
    """The TOML document of a settings file, at most :data:`MAX_SETTINGS_BYTES` and :data:`MAX_SETTINGS_DEPTH` levels deep."""
    text, source = _settings_text(path, what)
    try:
        values = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise FairpathInputError(f"could not parse {source}: it is not valid TOML ({error})") from None
    except RecursionError:
        raise FairpathInputError(f"{source} nests deeper than {MAX_SETTINGS_DEPTH} levels") from None
    if _depth(values) > MAX_SETTINGS_DEPTH:
        raise FairpathInputError(f"{source} nests deeper than {MAX_SETTINGS_DEPTH} levels")
    return values


def _depth(value) -> int:
    """Nesting levels of lists and mappings (a scalar is 0), counted without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, level = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, level)
            pending.extend((child, level + 1) for child in children)
    return deepest


def _csv_header(path: Path, what: str) -> list[str]:
    """The header's names as pandas reads them: the first record that is not a blank line (pandas skips those), which
    a quoted newline continues onto more lines."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return next((record for record in csv.reader(handle) if record), [])
    except UnicodeDecodeError as error:
        raise not_utf8_error(path, what, error) from None


def _check_row_lengths(path: Path, fields: int, what: str) -> None:
    """Every row has the header's number of fields: pandas reads a row that lost a separator or a value with its
    last cells missing, and every value after the lost one under the wrong column."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle)
        for row in reader:
            if row and len(row) < fields:
                raise FairpathInputError(
                    f"{what} {str(path)!r}: line {reader.line_num} has {len(row)} fields where the header has {fields} (a "
                    "separator or a value is lost, so its values would fall under the wrong columns); fix that row, or write "
                    "an empty field for a missing value")


def _check_header(columns: list[str], path: Path, what: str) -> None:
    seen, duplicated = set(), []
    for column in columns:
        if column in seen and column not in duplicated:
            duplicated.append(column)
        seen.add(column)
    if duplicated:
        raise FairpathInputError(
            f"{what} {str(path)!r} has duplicated column name(s) {duplicated}; rename them so that each column is unique"
        )


def _check_named_columns(columns, named: list[str], argument: str, path: Path) -> None:
    unknown = [c for c in named if c not in columns]
    if unknown:
        raise FairpathInputError(f"{argument} column(s) {unknown} are not columns of {str(path)!r}; columns: {list(columns)}")


def _checked_source(path, what: str, empty_category, na_values, categorical, levels) -> tuple[Path, list, list, list, list]:
    """The arguments of :func:`read_table` and :func:`read_partitioned`, checked: the file and the four lists."""
    if not isinstance(path, (str, os.PathLike)):
        raise FairpathInputError(f"{what} must be a path (a string or pathlib.Path), got {path!r} ({type(path).__name__})")
    path = Path(path)
    empty_category = check_columns_arg("empty_category", empty_category)
    na_values = check_columns_arg("na_values", na_values, item="missing-value token")
    categorical = check_columns_arg("categorical", categorical)
    levels = check_columns_arg("levels", levels)
    if not path.is_file():
        raise FairpathInputError(f"{what} {str(path)!r} does not exist or is not a file; check the path")
    return path, empty_category, na_values, categorical, levels


def _check_role_columns(columns, path: Path, empty_category: list[str], categorical: list[str], levels: list[str]) -> None:
    _check_named_columns(columns, empty_category, "empty-category", path)
    _check_named_columns(columns, categorical, "categorical", path)
    absent = [column for column in levels if column not in columns]
    if absent:
        raise FairpathInputError(f"protected attribute column {absent[0]!r} not found in {str(path)!r}; available columns: {list(columns)}")


def _csv_markers(path: Path, what: str, empty_category: list[str], na_values: list[str], categorical: list[str], levels: list[str]):
    """A CSV file's checked header and the missing-value tokens of each of its columns."""
    header = _csv_header(path, what)
    _check_header(header, path, what)
    _check_role_columns(header, path, empty_category, categorical, levels)
    return header, {c: sorted((MISSING_MARKERS | set(na_values)) - ({""} if c in empty_category else set())) for c in header}


@contextlib.contextmanager
def _parse_errors(path: Path, what: str, kind: str) -> Iterator[None]:
    """Parser errors as :class:`FairpathInputError` naming the file (pandas and pyarrow raise many types)."""
    try:
        yield
    except FairpathInputError:
        raise
    except UnicodeDecodeError as error:
        raise not_utf8_error(path, what, error) from None
    except Exception as error:
        raise FairpathInputError(f"could not parse {what} {str(path)!r} as {kind}: {error}") from error


def _numbers_as_written(texts: pd.Series) -> pd.Series | None:
    """``texts`` as numbers where each text reads back as itself (``0``, ``1``, ``2.5``; a missing value stays missing), else
    None (``01``, ``1.0`` beside ``1``, ``1e3``, ``true``, and ``1`` in a column with a missing value, which makes it 1.0: as
    numbers two texts could become one, or a text would change)."""
    present = texts.notna().to_numpy()
    numbers = pd.to_numeric(texts, errors="coerce")
    if numbers[present].isna().any():
        return None
    written = pd.DataFrame({"text": texts[present], "number": numbers[present]}).drop_duplicates("text")
    if any(str(number) != text for text, number in zip(written["text"], written["number"].tolist())):
        return None
    return numbers


def _level_column(texts: pd.Series) -> pd.Series:
    """A column of levels read as text: its numbers where they are the cells' text, else the text (see the module docstring)."""
    numbers = _numbers_as_written(texts)
    return texts if numbers is None else numbers


def _category_column(texts: pd.Series) -> pd.Series:
    """A categorical column read as text: its categories the distinct texts, by number where every text is one, else by text."""
    distinct = pd.unique(texts.dropna())
    numbers = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce")
    order = sorted(distinct, key=str) if numbers.isna().any() else [text for _, text in sorted(zip(numbers.tolist(), distinct))]
    return texts.astype(pd.CategoricalDtype(order))


def _as_read(data: pd.DataFrame, categorical: list[str], levels: list[str]) -> pd.DataFrame:
    """``data`` (its ``categorical`` and ``levels`` columns read as text) with those columns as categories and levels."""
    changes = {column: _level_column(data[column]) for column in levels if column not in categorical}
    changes.update({column: _category_column(data[column]) for column in categorical})
    return data.assign(**changes) if changes else data


def read_table(path: str | Path, empty_category=(), what: str = "data file", *, na_values=(), categorical=(), levels=()) -> pd.DataFrame:
    """Read a CSV or Parquet file.

    Missing values are recognised in every column (see :data:`MISSING_MARKERS`), and so are the
    tokens in ``na_values`` (e.g. ``"?"``); in the columns named in ``empty_category`` the empty
    string is kept as a category (other markers stay missing). The columns in ``categorical`` are
    read as text and become categories (pandas' ``category`` dtype) even where their cells look like
    numbers; the columns in ``levels`` (a protected attribute's) are read as levels: their exact text,
    as numbers only where each number is its cell's text (see the module docstring). A Parquet file's
    values are its own. Errors (:class:`FairpathInputError`) name the file: missing, unparsable, not
    UTF-8, duplicated column names, a named column it lacks.
    """
    path, empty_category, na_values, categorical, levels = _checked_source(path, what, empty_category, na_values, categorical, levels)
    if path.suffix.lower() in _PARQUET:
        with _parse_errors(path, what, "Parquet"):
            data = pd.read_parquet(path)
            _check_role_columns(data.columns, path, empty_category, categorical, levels)
            return _check_has_rows(_parquet_markers(data, empty_category, na_values).astype(dict.fromkeys(categorical, "category")), path, what)
    with _parse_errors(path, what, "CSV"):
        header, markers = _csv_markers(path, what, empty_category, na_values, categorical, levels)
        data = pd.read_csv(path, **_csv_options(markers, [*levels, *categorical]))
        if len(data.columns) and data.iloc[:, -1].isna().any():  # pandas fills a short row's last cells with NaN
            _check_row_lengths(path, len(header), what)
        return _check_has_rows(_as_read(data, categorical, levels), path, what)


def _check_has_rows(data: pd.DataFrame, path: Path, what: str) -> pd.DataFrame:
    """``data``; a table of a header and no rows is refused here, naming the file, not deep inside a learner."""
    if len(data) == 0:
        raise FairpathInputError(f"{what} {str(path)!r} has a header but no rows ({len(data.columns)} columns: "
                                 f"{list(data.columns)[:8]}); give a file with at least one row of data")
    return data


def read_partitioned(path: str | Path, empty_category=(), what: str = "data file", *, na_values=(), categorical=(), levels=(),
                     blocksize: str = "64MB"):
    """A CSV or Parquet file as a Dask DataFrame: partitions of about ``blocksize`` (CSV) or the file's row
    groups (Parquet), read on the Dask workers, with the missing-value rules of :func:`read_table`; a
    ``categorical`` column is read as text and becomes a category in each partition, a ``levels`` column is read
    as text (a partition cannot tell whether the whole column's numbers are its text). The header is checked
    here; the cells are parsed where a computation reads them (the workers need the file at the same path).
    Each CSV part gets its other columns' types from its own cells, as :func:`read_table` from the whole
    file's: the checks of ``fairpath.causal._distributed`` then refuse a token late in the file in the local
    reader's words. Needs ``fairpath[dask]``."""
    try:
        import dask.dataframe as dd
    except ImportError as error:
        raise FairpathInputError("reading a partitioned table needs Dask: pip install 'fairpath[dask]'") from error
    path, empty_category, na_values, categorical, levels = _checked_source(path, what, empty_category, na_values, categorical, levels)
    if path.suffix.lower() in _PARQUET:
        with _parse_errors(path, what, "Parquet"):
            data = dd.read_parquet(path)
            _check_role_columns(data.columns, path, empty_category, categorical, levels)
            return data.map_partitions(_parquet_markers, empty_category, na_values).astype(dict.fromkeys(categorical, "category"))
    with _parse_errors(path, what, "CSV"):
        header, markers = _csv_markers(path, what, empty_category, na_values, categorical, levels)
        options = _csv_options(markers, [*levels, *categorical])
        import dask

        parts = [dask.delayed(_read_csv_block)(block, number, path, what, options, categorical)
                 for number, block in enumerate(_csv_byte_blocks(path, blocksize))]
        meta = pd.read_csv(path, nrows=0, **options).astype(dict.fromkeys(categorical, "category"))
        return dd.from_delayed(parts, meta=meta, verify_meta=False)


def _csv_options(markers: dict, text: list[str]) -> dict:
    """The ``pd.read_csv`` options of fairpath's reading rules (:func:`read_table`, and every part of
    :func:`read_partitioned`); the ``text`` columns (levels and categories) are read as their cells' text."""
    return {"keep_default_na": False, "na_values": markers, "dtype": dict.fromkeys(text, str), "encoding": "utf-8-sig"}


def _csv_byte_blocks(path: Path, blocksize) -> list:
    """The file's bytes as delayed blocks of about ``blocksize``, each ending at a line end (the first holds the header)."""
    from dask.bytes import read_bytes

    _, blocks = read_bytes(str(path), delimiter=b"\n", blocksize=blocksize, sample=False)
    return blocks[0]


def _read_csv_block(data: bytes, number: int, path: Path, what: str, options: dict, categorical: list[str]) -> pd.DataFrame:
    """Part ``number`` of a CSV file (its bytes ``data``, the header's line added to every part after the first), read on
    a Dask worker as :func:`read_table` reads a whole file: each column's type comes from the part's own cells. (Dask's
    reader coerces every part to its first rows' types, and fails on a token late in the file where the local reader
    names the column, the token and its row.)"""
    with open(path, "rb") as handle:
        header = b"" if number == 0 else handle.readline()
    with _parse_errors(path, what, "CSV"):
        return pd.read_csv(io.BytesIO(header + data), **options).astype(dict.fromkeys(categorical, "category"))


def _parquet_markers(data: pd.DataFrame, empty_category: list[str], na_values: list[str]) -> pd.DataFrame:
    """Parquet keeps missing values apart from strings; an empty string is missing too, as in CSV, unless a
    category, and so are the ``na_values`` tokens."""
    text = [c for c in data.columns if data[c].dtype == object or pd.api.types.is_string_dtype(data[c])]
    data = data.copy()
    for column in text:
        missing = data[column].isin([*na_values, *([] if column in empty_category else [""])])
        if missing.any():
            data[column] = data[column].mask(missing)
    return data


# -- atomic writes --------------------------------------------------------------------------------

def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


_FILE_MODE = 0o666 & ~_umask()
# (device, inode) of the files the running command reads (protected_inputs): no atomic write replaces them.
_PROTECTED: set[tuple[int, int]] = set()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


@contextlib.contextmanager
def protected_inputs(paths) -> Iterator[None]:
    """While inside, every atomic write refuses to replace one of ``paths`` (the files a command reads), so a
    result written into a folder that holds the data under a result's name never replaces the data."""
    added = {found for found in map(_identity, map(Path, paths)) if found is not None} - _PROTECTED
    _PROTECTED.update(added)
    try:
        yield
    finally:
        _PROTECTED.difference_update(added)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path`` (hidden, ending in ``.tmp``, so that nothing takes it for a result);
    on success it replaces ``path`` atomically, on error it is removed and ``path`` is left as it was.
    A ``path`` that is a symbolic link, pipe, socket or device is refused (:class:`FairpathInputError`)."""
    path = check_replaceable(path)
    if _identity(path) in _PROTECTED:
        raise FairpathInputError(f"output file {str(path)!r} is an input of this run; writing it would replace your data: "
                                 "move the input or choose another output folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:  # name the file the user asked for, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from error
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, _FILE_MODE)
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(temporary, path)
        _note_output(path)
    finally:
        temporary.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """A temporary folder next to ``path`` to build a whole folder in (a model, a cache); on success it takes the
    place of ``path`` (a stale ``path`` is removed first; when another process put one there meanwhile, that
    equivalent copy wins), on error it is removed and ``path`` is left as it was. Its files get the modes of
    files written here without it (``mkdtemp`` and some writers make them private)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield temporary
        temporary.chmod(0o777 & ~_umask())
        for file in temporary.rglob("*"):
            file.chmod(0o777 & ~_umask() if file.is_dir() else _FILE_MODE)
        if path.exists():
            shutil.rmtree(path)
        try:
            temporary.rename(path)
        except OSError:  # another process finished first
            pass
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def atomic_write_bytes(data: bytes, path: str | Path) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder + ``os.replace``)."""
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)
    return Path(path)


def atomic_write_text(text: str, path: str | Path) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(text.encode("utf-8"), path)


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection); tab and CR too.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _neutralised(value):
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula. Numbers (also
    numbers written as text, such as ``-0.0063``) and a lone ``-`` (a placeholder) stay as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS) and len(value) > 1 and not _is_number(value):
        return "'" + value
    return value


def _neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with its text cells and column names neutralised (:func:`_neutralised`); other columns as they are."""
    safe = frame.copy()
    for position in range(frame.shape[1]):
        values = frame.iloc[:, position]
        if values.dtype == object or pd.api.types.is_string_dtype(values) or isinstance(values.dtype, pd.CategoricalDtype):
            safe.isetitem(position, values.astype(object).map(_neutralised))
    safe.columns = [_neutralised(column) for column in frame.columns]
    return safe


def write_csv(frame: pd.DataFrame, path: str | Path, **options) -> Path:
    """``frame.to_csv(path, index=False)``, atomically, with formula-like text neutralised (:func:`_neutralise_formulas`)."""
    safe = _neutralise_formulas(frame)
    with atomic_path(path) as temporary:
        safe.to_csv(temporary, index=False, **options)
    return Path(path)


def write_parquet(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as Parquet through a temporary file, so a kill never leaves half of it."""
    with atomic_path(path) as temporary:
        frame.to_parquet(temporary, index=False)
    return Path(path)


def save_figure(fig, path: str | Path, **options) -> Path:
    """``fig.savefig(path)``, atomically (the format follows ``path``'s suffix, as savefig's would)."""
    options.setdefault("format", Path(path).suffix.lstrip(".") or None)
    with atomic_path(path) as temporary:
        fig.savefig(temporary, **options)
    return Path(path)


# -- run folders ----------------------------------------------------------------------------------

LOCK_NAME = ".fairpath.lock"
_HELD: dict[Path, int] = {}  # folders this process holds, with how many nested holders


def _acquire(lock: Path, folder: Path, what: str) -> int:
    """An open descriptor of ``lock`` holding its exclusive lock; a lock held elsewhere is an error naming its PID."""
    while True:
        descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 32).decode("ascii", "replace").strip() or "unknown"
            os.close(descriptor)
            raise FairpathInputError(f"{what} {str(folder)!r} is in use by another fairpath run (PID {holder}); wait for it "
                                     "to finish or choose another folder") from None
        try:
            current = os.stat(lock, follow_symlinks=False).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(descriptor).st_ino:
            os.ftruncate(descriptor, 0)
            os.write(descriptor, f"{os.getpid()}\n".encode("ascii"))
            return descriptor
        os.close(descriptor)  # the holder removed the file as we locked it: lock the current one


@contextlib.contextmanager
def locked_folder(folder: str | Path, what: str = "output folder") -> Iterator[Path]:
    """Hold ``folder`` (created if needed) for one run: an exclusive lock on ``folder/.fairpath.lock``, so that a
    second run into the same folder fails at once instead of replacing the first run's files. Nested use in one
    process shares the lock. On exit the lock file goes, and so does the folder if this call created it and
    nothing was written."""
    folder = check_output_dir(folder, what)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    key = folder.resolve()
    if key in _HELD:
        _HELD[key] += 1
        try:
            yield folder
        finally:
            _HELD[key] -= 1
        return
    lock = check_replaceable(folder / LOCK_NAME, "lock file")
    descriptor = _acquire(lock, folder, what)
    _HELD[key] = 1
    try:
        yield folder
    finally:
        del _HELD[key]
        lock.unlink(missing_ok=True)  # before the release: a run that locks the old file next sees it gone and retries
        os.close(descriptor)
        if created and not any(folder.iterdir()):
            folder.rmdir()


# -- result folders: a save replaces the previous save's files ----------------------------------------

MANIFEST_NAME = ".fairpath-outputs.json"
_SAVING: list[tuple[Path, set[str]]] = []  # the folders being saved into (outermost first), with what was written


def _note_output(path: Path) -> None:
    """Count ``path`` (just written) among the outputs of the save whose folder holds it."""
    resolved = path.resolve()
    for folder, written in reversed(_SAVING):
        if resolved.is_relative_to(folder):
            written.add(resolved.relative_to(folder).as_posix())
            return


def _listed_outputs(folder: Path) -> set[str]:
    """The files the previous save listed in ``folder``'s manifest: relative paths inside the folder only (a
    manifest is a file like any other: an entry that leaves the folder is ignored, never removed)."""
    try:
        listed = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    names = listed.get("files", []) if isinstance(listed, dict) else []
    return {name for name in names if isinstance(name, str) and name and not Path(name).is_absolute()
            and ".." not in Path(name).parts and (folder / name).resolve().is_relative_to(folder)}


def _remove_stale(folder: Path, stale: set[str]) -> None:
    """Remove the files ``stale`` (relative to ``folder``) and the folders that they alone filled."""
    for name in sorted(stale):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            path.unlink()
        for parent in path.parents:
            if parent == folder or not parent.is_relative_to(folder):
                break
            try:
                parent.rmdir()  # only an empty folder: a user's file keeps it
            except OSError:
                break


@contextlib.contextmanager
def replacing_outputs(folder: str | Path) -> Iterator[None]:
    """Inside, the atomic writes under ``folder`` are one save's outputs. On success the files that the previous save
    listed and this one did not write are removed (with the folders they alone filled) and the new list is kept in
    ``folder/.fairpath-outputs.json``; on error nothing is removed and the list keeps both. Files fairpath did not list
    (a user's) are never touched. A save nested in another's folder (a contrast's audit) belongs to the outer one."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()
    if any(folder.is_relative_to(outer) for outer, _ in _SAVING):
        yield
        return
    previous, written = _listed_outputs(folder), set()
    _SAVING.append((folder, written))
    try:
        yield
    except BaseException:
        _SAVING.pop()
        with contextlib.suppress(OSError, FairpathInputError):  # the save's own error is the one to report
            atomic_write_text(json.dumps({"files": sorted(previous | written)}, indent=1), folder / MANIFEST_NAME)
        raise
    _SAVING.pop()
    _remove_stale(folder, previous - written)
    atomic_write_text(json.dumps({"files": sorted(written)}, indent=1), folder / MANIFEST_NAME)


def replaces_outputs(save):
    """A result's ``save(out_dir, ...)`` whose files replace the previous save's in ``out_dir`` (:func:`replacing_outputs`)."""

    @functools.wraps(save)
    def saving(self, out_dir, *args, **kwargs):
        with replacing_outputs(out_dir):
            return save(self, out_dir, *args, **kwargs)

    return saving
