"""Run folders: long work as named steps, each saved atomically once it finishes and reused by a rerun.

Public contract
---------------
``RunFolder(folder, *, kind, version, key, on_other_key="refuse", progress=True)``
    A folder of step files that are valid under one key: fairpath's version, the ``kind`` of run and
    the ``version`` of its step format, then the parts of ``key`` (the data's fingerprint, the
    settings...; see :mod:`fairpath._fingerprint`), saved in ``run_key.json``. A folder under another
    key is refused, naming what differs (``on_other_key="refuse"``: hours of work are never thrown
    away), or its steps are computed again with a warning that names it (``"restart"``). A folder that
    holds files but no key is of an unknown key (hidden files, such as a lock or a temporary, and files
    in its subfolders do not count: a study may keep stores there that are keyed on their own, such as
    a text audit's samples).
``step(name, compute)``
    The JSON result of step ``name``: read from ``<folder>/<name>.json`` when it is there, else
    ``compute()``, written atomically (:func:`fairpath._io.atomic_path`) the moment it finishes. A run
    stopped at any instant, ``kill -9`` included, leaves whole steps only; a rerun computes the missing
    ones. A step file that cannot be read back is computed again, with a warning.
``artefact(name, compute, *, save, load)``
    The same for a result with its own file format (``save(value, path)``, ``load(path)``).
``map(function, tasks, *, name, shared=None, desc, n_jobs=1, scheduler=None, workers=None)``
    The results of ``function(task, **shared)`` for every task, in the order of ``tasks``: each a step
    named ``name(task)``; the missing ones run on :func:`fairpath._parallel.run_tasks` (threads or a
    Dask cluster) and are saved as each finishes.
``run_all(function, tasks, *, folder, name, desc, ...)``
    ``folder.map`` when there is a folder, else the same tasks computed here in the same order.
``add_time(name, seconds)``, ``timings()``
    Seconds per step in ``timings.json``, summed over every session that worked on the folder.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from fairpath._exceptions import FairpathInputError
from fairpath._fingerprint import key_differences, read_key, resume_key, write_key
from fairpath._io import atomic_path, atomic_write_text
from fairpath._results import to_json_text

KEY_FILE = "run_key.json"
TIMINGS_FILE = "timings.json"
_MISSING = object()  # a step with no readable file


class RunFolder:
    """Named steps under ``folder``, valid under one key (see the module docstring)."""

    def __init__(self, folder: str | Path, *, kind: str, version: int, key: dict,
                 on_other_key: Literal["refuse", "restart"] = "refuse", progress: bool = True):
        self.folder = Path(folder)
        self.kind = kind
        self.progress = progress
        self.ran: list[str] = []  # the steps computed (not loaded) by this object
        self.folder.mkdir(parents=True, exist_ok=True)
        key = resume_key(kind, version, **key)
        saved = read_key(self.folder / KEY_FILE)
        if saved is None and any(path.is_file() and not path.name.startswith(".") for path in self.folder.iterdir()):
            saved = {}  # results without their key: nothing says what they were computed from
        changed = key_differences(saved, key) if saved is not None else []
        if changed and on_other_key == "refuse":
            raise FairpathInputError(f"{str(self.folder)!r} holds {kind} results computed with other {', '.join(changed)}; "
                                     "use another output folder, or delete that one to start afresh")
        if changed:
            warnings.warn(f"{self.folder} holds {kind} results of other {', '.join(changed)}; they are computed again",
                          stacklevel=3)
            self._clear()
        if saved is None or changed:
            write_key(self.folder / KEY_FILE, key)

    def _clear(self) -> None:
        for path in sorted(self.folder.rglob("*"), reverse=True):  # files before the folders that hold them
            if path.is_dir():
                path.rmdir()
            else:
                path.unlink()

    def path(self, name: str, suffix: str = ".json") -> Path:
        return self.folder / f"{name}{suffix}"

    def step(self, name: str, compute: Callable[[], Any]) -> Any:
        """The JSON result of step ``name``: loaded when saved, else computed and saved at once (either way in its
        JSON form, so that a resumed run sees what a fresh one does)."""
        return self.artefact(name, lambda: json.loads(to_json_text(compute())), save=_save_json, load=_load_json)

    def artefact(self, name: str, compute: Callable[[], Any], *, save: Callable[[Any, Path], Any],
                 load: Callable[[Path], Any], suffix: str = ".json") -> Any:
        """Step ``name`` whose value ``save(value, path)`` writes and ``load(path)`` reads back."""
        value = self._saved(name, load, suffix)
        if value is not _MISSING:
            self._say(f"{self.kind} step {name}: done earlier, loaded from {self.path(name, suffix)}")
            return value
        self._say(f"{self.kind} step {name}: running")
        started = time.perf_counter()
        value = compute()
        self.save(name, value, save=save, suffix=suffix)
        seconds = time.perf_counter() - started
        self.add_time(name, seconds)
        self._say(f"{self.kind} step {name}: finished in {seconds:.1f} s")
        return value

    def _saved(self, name: str, load: Callable[[Path], Any], suffix: str) -> Any:
        """Step ``name``'s saved value; ``_MISSING`` when there is none or it cannot be read back (then with a warning)."""
        path = self.path(name, suffix)
        if not path.exists():
            return _MISSING
        try:
            return load(path)
        except (ValueError, OSError, EOFError, RuntimeError) as error:
            warnings.warn(f"{path} cannot be read back ({type(error).__name__}: {error}); step {name} is computed again",
                          stacklevel=4)
            return _MISSING

    def save(self, name: str, value: Any, *, save: Callable[[Any, Path], Any] | None = None, suffix: str = ".json") -> None:
        """Write step ``name``'s ``value`` atomically (a value computed elsewhere, e.g. in a worker)."""
        with atomic_path(self.path(name, suffix)) as temporary:
            (save or _save_json)(value, temporary)
        self.ran.append(name)

    def map(self, function: Callable, tasks: Sequence, *, name: Callable[[Any], str], shared: dict | None = None,
            desc: str, n_jobs: int = 1, scheduler=None, workers: int | None = None) -> list:
        """``function(task, **shared)`` for every task (a step each, saved as it finishes), in the order of ``tasks``."""
        from fairpath._parallel import run_tasks
        from fairpath._progress import progress as progress_bar

        tasks = list(tasks)
        saved = {position: self._saved(name(task), _load_json, ".json") for position, task in enumerate(tasks)}
        results = {position: value for position, value in saved.items() if value is not _MISSING}
        pending = [position for position in range(len(tasks)) if position not in results]
        saved_before = len(tasks) - len(pending)
        bar = progress_bar(total=len(pending), desc=f"{desc} ({saved_before} of {len(tasks)} saved before)",
                           unit="task", enabled=self.progress)
        with bar:
            for index, (value, seconds) in run_tasks(_timed, [tasks[p] for p in pending], shared={"function": function, **(shared or {})},
                                                     n_jobs=n_jobs, scheduler=scheduler, workers=workers):
                task_name = name(tasks[pending[index]])
                self.save(task_name, value)
                self.add_time(task_name, seconds)
                results[pending[index]] = json.loads(to_json_text(value))
                bar.set_postfix_str(task_name)
                bar.update()
        return [results[position] for position in range(len(tasks))]

    def add_time(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to ``name`` in ``timings.json`` at once, so that an interrupted session still counts."""
        timings = self.timings()
        timings[name] = round(timings.get(name, 0.0) + seconds, 3)
        atomic_write_text(to_json_text(timings), self.folder / TIMINGS_FILE)

    def timings(self) -> dict:
        """Seconds per step, over every session that worked on this folder."""
        path = self.folder / TIMINGS_FILE
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def _say(self, message: str) -> None:
        if self.progress:
            from fairpath._progress import announce

            announce(message)


def run_all(function: Callable, tasks: Sequence, *, folder: RunFolder | None, name: Callable[[Any], str], desc: str,
            shared: dict | None = None, progress: bool = True, **where) -> list:
    """``function(task, **shared)`` for every task, in the order of ``tasks``: steps of ``folder`` (:meth:`RunFolder.map`)
    or, without one, computed here on :func:`fairpath._parallel.run_tasks` (``where``: its options)."""
    if folder is not None:
        return folder.map(function, tasks, name=name, shared=shared, desc=desc, **where)
    from fairpath._parallel import run_tasks
    from fairpath._progress import progress as progress_bar

    tasks = list(tasks)
    found = dict(progress_bar(run_tasks(function, tasks, shared=shared, **where), total=len(tasks), desc=desc, unit="task",
                              enabled=progress))
    return [found[position] for position in range(len(tasks))]


def _timed(task, function, **shared) -> tuple[Any, float]:
    started = time.perf_counter()
    return function(task, **shared), time.perf_counter() - started


def _save_json(value: Any, path: Path) -> None:
    path.write_text(to_json_text(value), encoding="utf-8")


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text ({error})") from error
