"""Generations made elsewhere (logged production outputs, another tool, a past audit), read for scoring.

Public contract
---------------
``GENERATION_COLUMNS``
    The columns of a generations file: ``template`` (the template as written in the specification,
    or its id such as ``t00``), ``value`` (the attribute value filled in), ``continuation`` (the
    generated text only, without the prompt); optional ``prompt`` (checked against the template
    filled with the value), ``sample_index`` (distinct within a cell; by default the row's rank in
    its cell) and ``model`` (one model: a file of several is refused, naming each with its rows; choose
    one with ``model``). Other columns are ignored.
``read_generations(path, model=None, settings_hash=None) -> DataFrame``
    Reads a CSV (every field as text), JSONL or Parquet file, or a fairpath samples store folder (its
    ``template_id`` and ``text`` become ``template`` and ``continuation``). ``model`` and ``settings_hash``
    keep the rows of one run: in a store of several runs one must be chosen; in a file they filter its
    ``model`` and ``settings_hash`` columns (a file without the column, or without such rows, is an error).
``check_generations(frame, spec, source) -> DataFrame``
    Validates ``frame`` against ``spec`` and returns the samples the metrics read (``prompt,
    template_id, attribute, value, subgroup, model, sample_index, text``) in the audit's order
    (templates, then values as the specification lists them, then sample index), so that scoring a
    stored audit reproduces its numbers exactly. Unknown templates or values, missing text, prompts
    that are not the filled template, repeated sample indices and missing template x value cells
    raise FairpathInputError naming them and ``source``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath.text._spec import FairnessSpec

GENERATION_COLUMNS = ["template", "value", "continuation", "prompt", "sample_index", "model"]
_REQUIRED = ["template", "value", "continuation"]
_SHOWN = 8  # how many offending items an error lists


def read_generations(path, *, model: str | None = None, settings_hash: str | None = None) -> pd.DataFrame:
    """The generations in a CSV, JSONL or Parquet file, or in a fairpath samples store folder."""
    path = Path(path)
    if path.is_dir():
        return _read_store(path, model, settings_hash)
    if not path.is_file():
        raise FairpathInputError(f"generations file {str(path)!r} does not exist; give a CSV, JSONL or Parquet file "
                                 "or a fairpath samples folder")
    suffix = path.suffix.lower()
    # utf-8-sig: a byte-order mark (Excel, Windows editors) is not part of the first record (pandas' JSON reader keeps it)
    readers = {".csv": lambda: pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig"),
               ".jsonl": lambda: pd.read_json(path, lines=True, dtype=False, encoding="utf-8-sig"),
               ".parquet": lambda: pd.read_parquet(path), ".pq": lambda: pd.read_parquet(path)}
    if suffix not in readers:
        raise FairpathInputError(f"generations file {str(path)!r} is not .csv, .jsonl or .parquet; convert it to one of them")
    try:
        frame = readers[suffix]()
    except Exception as error:  # each reader raises its own parser errors
        raise FairpathInputError(f"could not read generations file {str(path)!r}: {type(error).__name__}: {error}") from error
    for column, chosen in (("model", model), ("settings_hash", settings_hash)):
        if chosen is not None:
            frame = _chosen_rows(frame, column, chosen, path)
    return frame.reset_index(drop=True)


def _chosen_rows(frame: pd.DataFrame, column: str, chosen: str, path: Path) -> pd.DataFrame:
    """The rows of a generations file whose ``column`` (model, settings_hash) is ``chosen``; none, or no such column, is an error."""
    what = {"model": "model", "settings_hash": "settings"}[column]
    if column not in frame.columns:
        raise FairpathInputError(f"generations file {str(path)!r} has no {column!r} column to choose {what} {chosen!r} from "
                                 f"(its columns: {list(frame.columns)}); leave the choice out, or give a file with that column")
    kept = frame[frame[column] == chosen]
    if kept.empty:
        raise FairpathInputError(f"generations file {str(path)!r} has no rows of {what} {chosen!r}; its {column!r} column holds "
                                 f"{_counted(frame[column])}")
    return kept


def _counted(values: pd.Series) -> str:
    """The distinct values of a column with their row counts, most frequent first (at most :data:`_SHOWN`)."""
    counts = values.value_counts(dropna=False)
    listed = ", ".join(f"{'(none)' if pd.isna(value) else repr(value)}: {count} rows" for value, count in counts.head(_SHOWN).items())
    return listed + (f" and {len(counts) - _SHOWN} more" if len(counts) > _SHOWN else "")


def _read_store(path: Path, model: str | None, settings_hash: str | None) -> pd.DataFrame:
    from fairpath.text._samples import SampleStore

    stored = SampleStore(path).load(model=model, settings_hash=settings_hash)
    if stored.empty:
        raise FairpathInputError(f"samples folder {str(path)!r} holds no samples"
                                 + (f" of model {model!r}" if model else "") + (f" with settings {settings_hash!r}" if settings_hash else ""))
    runs = stored[["model", "settings_hash"]].drop_duplicates()
    if len(runs) > 1:
        listed = "; ".join(f"model {m!r} settings {h!r}" for m, h in runs.itertuples(index=False))
        raise FairpathInputError(f"samples folder {str(path)!r} holds {len(runs)} runs ({listed}); choose one with "
                                 "--model and --settings-hash")
    return stored.rename(columns={"template_id": "template", "text": "continuation"})


def check_generations(frame: pd.DataFrame, spec: FairnessSpec, source: str) -> pd.DataFrame:
    """Validated samples in the audit's order, with template ids and subgroups from ``spec``."""
    if not isinstance(frame, pd.DataFrame):
        raise FairpathInputError(f"generations from {source} must be a DataFrame, got {type(frame).__name__}")
    absent = [c for c in _REQUIRED if c not in frame.columns]
    if absent:
        raise FairpathInputError(f"generations {source} lack the columns {absent} (found {list(frame.columns)}); "
                                 f"a generations file has {_REQUIRED} and optionally prompt, sample_index, model")
    frame = frame.reset_index(drop=True)
    _check_one_model(frame, source)
    cells = spec.prompts()
    template_ids = _template_ids(frame["template"], cells, source)
    _check_known(frame["value"], spec.value_names, "values", source)
    text = frame["continuation"]
    bad = text.map(lambda t: not isinstance(t, str))
    if bad.any():
        raise FairpathInputError(f"generations {source} have {int(bad.sum())} rows without a text continuation "
                                 f"(rows {_first(frame.index[bad])}); write an empty string for an empty continuation")
    if len(text) and (text.str.strip() == "").all():
        raise FairpathInputError(f"generations {source}: all {len(text)} continuations are empty, so every score is the "
                                 "score of no text and no test could reject; check that the 'continuation' column holds "
                                 "the model's output")
    samples = pd.DataFrame({"template_id": template_ids, "value": frame["value"].astype(str), "text": text})
    samples = samples.merge(cells[["template_id", "value", "prompt", "attribute", "subgroup"]], on=["template_id", "value"],
                            how="left", validate="many_to_one")
    _check_cells(samples, cells, source)
    if "prompt" in frame.columns:
        wrong = frame["prompt"].astype(str).to_numpy() != samples["prompt"].to_numpy()
        if wrong.any():
            row = int(wrong.nonzero()[0][0])
            raise FairpathInputError(f"generations {source} have {int(wrong.sum())} prompts that are not their template "
                                     f"filled with their value (rows {_first(frame.index[wrong])}; row {row} has "
                                     f"{frame['prompt'].iloc[row]!r}, the specification gives {samples['prompt'].iloc[row]!r})")
    samples["model"] = frame["model"].astype("string") if "model" in frame.columns else pd.NA
    samples["sample_index"] = _sample_indices(frame, samples, source)
    order = {t: i for i, t in enumerate(spec.template_ids())}, {v: i for i, v in enumerate(spec.value_names)}
    samples = samples.assign(_t=samples["template_id"].map(order[0]), _v=samples["value"].map(order[1]))
    samples = samples.sort_values(["_t", "_v", "sample_index"], kind="stable").drop(columns=["_t", "_v"])
    columns = ["prompt", "template_id", "attribute", "value", "subgroup", "model", "sample_index", "text"]
    return samples[columns].reset_index(drop=True)


def _check_one_model(frame: pd.DataFrame, source: str) -> None:
    """An audit is of one model and one set of sampling settings: generations of several (the ``model`` and
    ``settings_hash`` columns) are refused, not pooled."""
    for column, what, flag in (("model", "models", "--model NAME"), ("settings_hash", "sampling settings", "--settings-hash HASH")):
        if column in frame.columns and frame[column].nunique(dropna=False) > 1:
            raise FairpathInputError(
                f"generations {source} hold the continuations of {frame[column].nunique(dropna=False)} {what} ({_counted(frame[column])}); "
                f"an audit is of one model sampled one way and pooling them would mix their biases: choose one with {flag} "
                f"(read_generations(..., {column}=...)), or keep one {column}'s rows")


def _first(items) -> list:
    return list(items[:_SHOWN])


def _template_ids(templates: pd.Series, cells: pd.DataFrame, source: str) -> pd.Series:
    """Template ids of a column holding template texts or ids."""
    by_text = dict(zip(cells["template"], cells["template_id"]))
    by_text.update({t: t for t in cells["template_id"]})
    _check_known(templates, list(by_text), "templates", source)
    return templates.astype(str).map(by_text)


def _check_known(column: pd.Series, known: list[str], what: str, source: str) -> None:
    unknown = sorted(set(column.astype(str)) - set(known))
    if unknown:
        raise FairpathInputError(f"generations {source} have {what} that the specification does not define: "
                                 f"{unknown[:_SHOWN]}{' ...' if len(unknown) > _SHOWN else ''}; it defines {known}")


def _check_cells(samples: pd.DataFrame, cells: pd.DataFrame, source: str) -> None:
    present = set(zip(samples["template_id"], samples["value"]))
    missing = [(t, text, v) for t, text, v in cells[["template_id", "template", "value"]].itertuples(index=False)
               if (t, v) not in present]
    if missing:
        listed = ", ".join(f"template {t} ({text!r}) x value {v!r}" for t, text, v in missing[:_SHOWN])
        raise FairpathInputError(f"generations {source} lack {len(missing)} of {len(cells)} template x value cells: "
                                 f"{listed}{' ...' if len(missing) > _SHOWN else ''}; every template needs "
                                 "continuations for every value")


def _sample_indices(frame: pd.DataFrame, samples: pd.DataFrame, source: str) -> pd.Series:
    if "sample_index" not in frame.columns:
        return samples.groupby(["template_id", "value"], sort=False).cumcount()
    indices = pd.to_numeric(frame["sample_index"], errors="coerce").astype(float)
    # Beyond 2**53 a float no longer tells neighbouring integers apart (and inf is no integer at all).
    bad = ~((indices >= 0) & (indices < 2**53) & (indices == indices.round()))
    if bad.any():
        row = frame.index[bad][0]
        raise FairpathInputError(f"generations {source} have sample_index values that are not non-negative integers "
                                 f"(rows {_first(frame.index[bad])}; row {row} has {str(frame['sample_index'].iloc[row])!r}); "
                                 "number each continuation of a cell 0, 1, 2, ... or leave the column out")
    indices = indices.astype("int64")
    repeated = pd.DataFrame({"t": samples["template_id"], "v": samples["value"], "i": indices}).duplicated()
    if repeated.any():
        raise FairpathInputError(f"generations {source} repeat a sample_index within a template x value cell "
                                 f"(rows {_first(frame.index[repeated])}); each continuation of a cell needs its own index")
    return indices
