"""Behaviour shared by every result object: JSON export, a text summary, saving, notebook display.

The contract every result class keeps (``tests/test_result_contract.py``): ``to_frame()`` (a
DataFrame), ``to_dict()`` / ``to_json()``, ``summary()`` (a str), ``save(out_dir)`` (files written
there, their paths returned), ``_repr_html_()``; and, where the class draws one, ``plot()`` returns a
matplotlib Figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._io import atomic_write_text


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


class ResultMixin:
    """Subclasses implement ``to_frame()`` and ``to_dict()``; this adds JSON and HTML display."""

    def to_frame(self) -> pd.DataFrame:  # pragma: no cover - interface
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def summary(self) -> str:
        """A readable account of the result; by default its text form (``repr``)."""
        return repr(self)

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``result.json`` (``to_dict()``) and ``result.csv`` (``to_frame()``) to ``out_dir``; return their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"results": out / "result.json", "table": out / "result.csv"}
        self.to_json(paths["results"])
        self.to_frame().to_csv(paths["table"], index=False)
        return paths

    def to_json(self, path: str | Path | None = None) -> str:
        """Return the result as a JSON string; also write it to ``path`` when given."""
        text = to_json_text(self.to_dict())
        if path is not None:
            atomic_write_text(text, path)
        return text

    def _repr_html_(self) -> str:
        return self.to_frame().to_html(index=False, float_format=lambda v: f"{v:.4f}")
