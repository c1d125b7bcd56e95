"""Keys of resumable runs: everything a saved result depends on, so that a rerun reuses only what it would compute again.

A key is a JSON mapping: the fairpath version, the step's name and format version, and the parts
the caller names (the data's fingerprint, the SFM, every setting). It is saved beside the results
(``write_key``); ``key_differences`` names the parts that changed since, and each run kind decides
what a change means (the frontier recomputes and says so, the paper studies refuse the folder).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from fairpath._io import atomic_write_text
from fairpath._results import _jsonable, to_json_text
from fairpath._version import __version__


def fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's column names, dtypes and content, row order included (it decides the folds)."""
    digest = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def digest(value) -> str:
    """SHA-256 of a JSON-serialisable value (texts, lists of texts, settings): for parts too long to keep in a key."""
    return hashlib.sha256(json.dumps(_jsonable(value), sort_keys=True, default=repr).encode("utf-8")).hexdigest()


def resume_key(step: str, step_version: int, **parts) -> dict:
    """The key of a resumable ``step``: fairpath's version, the step's format version, then ``parts`` in JSON-normal
    form (tuples as lists, numpy scalars as numbers; any other object by its repr)."""
    payload = {"fairpath": __version__, "step": step, "step_version": step_version, **parts}
    return json.loads(json.dumps(_jsonable(payload), default=repr))


def read_key(path: Path) -> dict | None:
    """The key saved at ``path``; None when there is none, ``{}`` when the file is damaged (it then matches nothing)."""
    if not path.exists():
        return None
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return saved if isinstance(saved, dict) else {}


def key_differences(saved: dict, key: dict) -> list[str]:
    """The parts of ``key`` whose saved value differs (or is missing), sorted; empty when the results can be reused."""
    return sorted(name for name in saved.keys() | key.keys() if saved.get(name) != key.get(name))


def write_key(path: Path, key: dict) -> None:
    """Save ``key`` at ``path`` atomically."""
    atomic_write_text(to_json_text(key), path)
