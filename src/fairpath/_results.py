"""Behaviour shared by every result object: the core table, JSON export, text forms, saving, notebook display.

The contract every result class keeps (``tests/test_result_contract.py``):

- ``to_frame()``: a DataFrame whose first columns are :data:`CORE_COLUMNS` (``subject``: what is measured,
  an outcome, predictor, scorer or frontier point; ``measure``: the quantity; ``estimate``, ``se``,
  ``ci_low``, ``ci_high``, ``level``), then the class's own columns. A quantity without a standard error
  or an interval has NaN there, and ``level`` is NaN wherever there is no interval.
- ``to_dict()`` / ``to_json()``; ``save(out_dir)`` writes report.html, result.json (``to_dict()``), result.csv
  (``to_frame()``) and the files the class declares (``_save_files``), and returns their paths by name.
- ``summary()``: the readable multi-line account (a str); ``repr()``: one line; ``_repr_html_()``.
- ``plot(ax=None)``: a matplotlib Figure, drawn on ``ax`` when given (a sequence of axes, one per
  panel, for a plot of several panels: :func:`panel_axes`); options after ``ax`` are keyword-only. The
  paper studies plot their main figure and name the others (``plot_figure8``, ``frontier.plot``).
- One shape (:func:`result_class`): a frozen, keyword-only dataclass; attributes without scikit-learn's trailing
  underscore (a result is not an estimator); elapsed wall time is ``seconds``.

A result made of :class:`~fairpath._stats.Estimate` objects also answers ``confint(level=0.95)`` (a
:func:`confint_frame` with the rows of ``to_frame()``) and ``p_value(<what its estimate() takes>, null=0.0)``,
computed on request from what each estimate keeps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import atomic_write_text, write_csv, replaces_outputs

# The three files every result saves (ResultMixin.save), whatever else its class adds.
REPORT_NAME, RESULT_NAME, TABLE_NAME = "report.html", "result.json", "result.csv"
CORE_COLUMNS = ("subject", "measure", "estimate", "se", "ci_low", "ci_high", "level")
CONFINT_COLUMNS = ("subject", "measure", "estimate", "ci_low", "ci_high", "level")
_REPR_ROWS = 3  # rows of to_frame() shown in the one-line repr


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):  # numpy scalars and arrays may hold NaN too: convert, then recurse
        return _jsonable(value.item())
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def to_json_text(payload: dict) -> str:
    """Pretty JSON of a dict, converting numpy scalars and arrays and non-finite floats."""
    return json.dumps(_jsonable(payload), indent=2)


def write_json(payload: dict, path: str | Path) -> Path:
    """Write a dict as pretty JSON (see :func:`to_json_text`) atomically, creating the folder."""
    return atomic_write_text(to_json_text(payload), path)


def estimate_row(subject, measure: str, estimate, **extras) -> dict:
    """A ``to_frame()`` row of an :class:`~fairpath._stats.Estimate` (its level goes into ``level``)."""
    return {"subject": subject, "measure": measure, **estimate.to_dict(), **extras}


def result_frame(rows) -> pd.DataFrame:
    """A ``to_frame()`` table from row dicts (or a DataFrame): :data:`CORE_COLUMNS` first (NaN where a row
    has no such value), then the other columns in their order. ``level`` is NaN on every row without a
    finite interval: a level is stated only beside an interval."""
    frame = pd.DataFrame(rows).reset_index(drop=True)
    for column in CORE_COLUMNS:
        if column not in frame:
            frame[column] = np.nan
    for column in CORE_COLUMNS[2:]:
        frame[column] = pd.to_numeric(frame[column]).astype(float)
    interval = np.isfinite(frame["ci_low"]) & np.isfinite(frame["ci_high"])
    frame["level"] = frame["level"].where(interval)
    return frame[[*CORE_COLUMNS, *[c for c in frame.columns if c not in CORE_COLUMNS]]]


def confint_frame(rows, level: float) -> pd.DataFrame:
    """A result's ``confint(level)`` table from ``(fields, estimate)`` pairs, ``fields`` holding subject, measure
    and any other columns: :data:`CONFINT_COLUMNS` first (each interval from ``estimate.confint(level)``), then
    the others. As in ``to_frame()``, ``level`` is NaN where the interval is not finite."""
    records = []
    for fields, estimate in rows:
        low, high = estimate.confint(level)
        records.append({**fields, "estimate": estimate.estimate, "ci_low": low, "ci_high": high, "level": level})
    frame = pd.DataFrame(records)
    frame = frame.reindex(columns=[*CONFINT_COLUMNS, *[c for c in frame.columns if c not in CONFINT_COLUMNS]])
    for column in CONFINT_COLUMNS[2:]:
        frame[column] = frame[column].astype(float)
    frame["level"] = frame["level"].where(np.isfinite(frame["ci_low"]) & np.isfinite(frame["ci_high"]))
    return frame


def interval_bars(low, high) -> tuple[np.ndarray, np.ndarray]:
    """(centre, half-width) of intervals, to draw them with matplotlib's ``errorbar`` apart from their estimates:
    a percentile bootstrap interval of few draws may exclude its estimate, and ``errorbar`` refuses the negative
    distance from the estimate that such an interval has."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return (low + high) / 2, (high - low) / 2


def panel_axes(ax, n: int, make):
    """``(figure, axes)`` for a plot of ``n`` panels: ``make()``'s new ones when ``ax`` is None, else those
    given (one Axes for one panel, a sequence of ``n`` axes for ``n``); ``axes`` is a list of ``n``."""
    if ax is None:
        fig, axes = make()
        return fig, list(np.ravel(axes))  # rows of panels read row by row
    axes = [ax] if n == 1 and not isinstance(ax, (list, tuple, np.ndarray)) else list(np.ravel(ax))
    if len(axes) != n:
        raise FairpathInputError(f"this plot draws {n} panel(s), so ax must be {'an Axes' if n == 1 else f'a sequence of {n} axes'}; "
                                 f"got {len(axes)}")
    return axes[0].figure, axes


def result_class(cls):
    """The one shape of every result class: a frozen dataclass built by keyword (``Result(sfm=..., settings=...)``),
    compared by identity (its fields hold DataFrames) and shown by :class:`ResultMixin`'s one-line repr. What a
    result computes from its fields is a property; a cache it fills on request is a field with
    ``init=False`` holding a dict (the dict is filled, the field never rebound)."""
    return dataclass(frozen=True, kw_only=True, eq=False, repr=False)(cls)


def _cell(row) -> str:
    text = f"{row.subject} {row.measure}={row.estimate:.4g}"
    if np.isfinite(row.ci_low) and np.isfinite(row.ci_high):
        text += f" [{row.level:.0%} CI {row.ci_low:.4g}, {row.ci_high:.4g}]"
    return text


class ResultMixin:
    """Subclasses implement ``to_frame()``, ``to_dict()``, ``summary()`` and ``_repr_fields()``; this adds
    the one-line repr, JSON, saving and HTML display."""

    def to_frame(self) -> pd.DataFrame:  # pragma: no cover - interface
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def summary(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def _repr_fields(self) -> dict:
        """The settings named in the one-line repr (e.g. method and n)."""
        return {}

    def __repr__(self) -> str:
        """One line: the class, its main settings and the first rows of ``to_frame()``; ``summary()`` says all."""
        fields = ", ".join(f"{k}={v!r}" for k, v in self._repr_fields().items())
        frame = self.to_frame()
        cells = "; ".join(_cell(row) for row in frame.head(_REPR_ROWS).itertuples(index=False))
        left = len(frame) - _REPR_ROWS
        more = f"; … {left} more row{'s' if left > 1 else ''}" if left > 0 else ""
        body = f"{len(frame)} rows: {cells}{more}" if len(frame) else "no rows"
        return " ".join(f"{type(self).__name__}({fields}{'; ' if fields else ''}{body})".split())

    @replaces_outputs
    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write the result to ``out_dir`` and return the paths by name: ``result`` (result.json, ``to_dict()``),
        ``table`` (result.csv, ``to_frame()``), the class's own files (:meth:`_save_files`: figures, tables, samples)
        and ``report`` (report.html, written last so that it may show them). A second save replaces the first's files."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"result": write_json(self.to_dict(), out / RESULT_NAME), "table": write_csv(self.to_frame(), out / TABLE_NAME)}
        paths.update(self._save_files(out))
        paths["report"] = self._write_report(out / REPORT_NAME)
        return paths

    def _save_files(self, out: Path) -> dict[str, Path]:
        """The files this class saves beside the three every result saves (none by default)."""
        return {}

    def _write_report(self, path: Path) -> Path:
        """The HTML report: by default the summary, ``plot()`` and ``to_frame()``; a class with a report of its own
        overrides it."""
        import html

        from fairpath._stats import format_p
        from fairpath.report import Section, styled, write_report

        summary = "".join(f"<p>{html.escape(line)}</p>" for line in self.summary().splitlines() if line.strip())
        settings = getattr(self, "settings", None)
        settings = settings.to_dict() if hasattr(settings, "to_dict") else settings if isinstance(settings, dict) else None
        with styled():
            figure = self.plot()
        frame = self.to_frame()
        tests = [column for column in frame.columns if column.startswith("p_")]  # p-values as text: never printed as 0
        table = frame[[*CORE_COLUMNS, *tests]].assign(**{column: frame[column].map(format_p) for column in tests})
        sections = [Section("Figure").add_figure(figure),
                    Section("Results").add_table(table, f"Every column of every row: {TABLE_NAME}; everything: {RESULT_NAME}")]
        return write_report(path, f"fairpath: {type(self).__name__}", sections, summary=summary, settings=settings)

    def to_json(self, path: str | Path | None = None) -> str:
        """Return the result as a JSON string; also write it to ``path`` when given."""
        text = to_json_text(self.to_dict())
        if path is not None:
            atomic_write_text(text, path)
        return text

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False, float_format=lambda v: f"{v:.4f}")
