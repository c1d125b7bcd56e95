"""What a result was computed from: input files (name, size, SHA-256), the call, the seed, versions, dtype."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import platform
import shlex
import sys
from pathlib import Path
from typing import Iterator

from fairpath._validation import Optional, Seed, validate_params

_VERSIONED = ("fairpath", "numpy", "pandas", "scipy", "scikit-learn", "lightgbm", "quantile-forest", "matplotlib")


def package_versions(extra=()) -> dict[str, str]:
    """Versions of Python and of the packages a result depends on (``extra``: more of them, e.g. torch)."""
    return dict(_versions(tuple(extra)))


@functools.lru_cache(maxsize=8)  # read once per process: every decomposition records them
def _versions(extra: tuple) -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in (*_VERSIONED, *extra):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def api_call(function: str, data, **arguments) -> str:
    """An API call as text, its data frame named by its shape and the SHA-256 of its values (index excluded);
    a Dask DataFrame, which is not read here, by its partitions, columns and Dask's token of its graph."""
    import pandas as pd

    named = "".join(f", {k}={v!r}" for k, v in arguments.items())
    if not isinstance(data, pd.DataFrame):
        from dask.base import tokenize

        return (f"{function}(data=<Dask DataFrame of {data.npartitions} partitions x {len(data.columns)} columns, "
                f"Dask token {tokenize(data)}>{named})")
    digest = hashlib.sha256(pd.util.hash_pandas_object(data, index=False).to_numpy().tobytes()).hexdigest()
    return (f"{function}(data=<DataFrame {data.shape[0]} rows x {data.shape[1]} columns, SHA-256 of the values "
            f"{digest}>{named})")


def file_record(path: str | Path) -> dict:
    """Name, absolute path, size in bytes and SHA-256 of an input file."""
    path = Path(path)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"name": path.name, "path": str(path.resolve()), "bytes": path.stat().st_size, "sha256": digest.hexdigest()}


# The arguments of the fairpath command being run (fairpath.cli.main), also when main is called from Python
# (a notebook, a test), where sys.argv is that process's own command line.
_COMMAND: list[list[str]] = []


@contextlib.contextmanager
def running_command(arguments) -> Iterator[None]:
    """While inside, :func:`command_line` is ``fairpath`` with ``arguments``."""
    _COMMAND.append(list(arguments))
    try:
        yield
    finally:
        _COMMAND.pop()


def command_line() -> str:
    """The fairpath command being run, or else this process's command line; quoted so that it can be pasted into a shell."""
    if _COMMAND:
        return shlex.join(["fairpath", *_COMMAND[-1]])
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    return " ".join([program, *map(shlex.quote, sys.argv[1:])])


@validate_params({"seed": Optional(Seed())})
def provenance(*, inputs=(), call: str | None = None, seed: int | None = None, dtype: str = "float64",
               packages=()) -> dict:
    """The provenance block every report and JSON carries.

    ``inputs``: paths of the files read; ``call``: the API call that produced the result (by default
    the process's command line); ``dtype``: the floating-point precision of the computation;
    ``packages``: versions to record beyond the tabular stack's (e.g. torch, transformers).
    """
    return {
        "inputs": [file_record(p) for p in inputs],
        "call": call if call is not None else command_line(),
        "seed": seed,
        "dtype": dtype,
        "versions": package_versions(packages),
        "platform": platform.platform(),
    }


def provenance_lines(record: dict) -> dict[str, str]:
    """The provenance block as flat ``label -> text`` pairs for a report's settings list."""
    lines = {}
    for i, item in enumerate(record.get("inputs", []), start=1):
        label = "input" if len(record["inputs"]) == 1 else f"input {i}"
        lines[label] = f"{item['name']} ({item['bytes']:,} bytes, SHA-256 {item['sha256']}) at {item['path']}"
    lines["call"] = record.get("call", "")
    lines["seed"] = str(record.get("seed"))
    lines["dtype"] = record.get("dtype", "")
    lines["versions"] = ", ".join(f"{k} {v}" for k, v in record.get("versions", {}).items())
    lines["platform"] = record.get("platform", "")
    return lines
