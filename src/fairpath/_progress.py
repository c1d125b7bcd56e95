"""One progress helper for every long step, on stderr.

On a terminal it is a tqdm bar. When stderr is not a terminal (a log file, a pipe, CI) a bar would be a
stream of carriage returns, so a step instead prints plain lines: one when it is still running after
``STAGE_AFTER_S`` seconds, then at most one every ``LINE_EVERY_S`` seconds, and one when it ends, each
with the elapsed time; a step quicker than ``STAGE_AFTER_S`` prints nothing. The caller's ``enabled``
and the command line's ``--quiet`` (:func:`set_quiet`) turn both off.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time

from tqdm.auto import tqdm

STAGE_AFTER_S = 2.0
LINE_EVERY_S = 10.0

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Turn every progress bar and stage line off (``--quiet``) or back on."""
    global _quiet
    _quiet = bool(quiet)


def announce(message: str) -> None:
    """A one-line notice on stderr of a slow step that has no count to show (``--quiet`` turns it off)."""
    if not _quiet:
        print(message, file=sys.stderr, flush=True)


class StageLines:
    """A progress bar's stand-in for a stderr that is not a terminal: plain stage lines, no carriage returns.

    It takes the calls fairpath makes on a tqdm bar (iteration, ``with``, ``update``, ``set_postfix_str``,
    ``set_postfix``, ``close``); the other tqdm options (``leave``, ``dynamic_ncols`` ...) shape a bar only.
    """

    disable = False

    def __init__(self, iterable=None, *, desc: str, total: int | None = None, initial: int = 0, **_bar_options):
        self.iterable, self.desc, self.n, self.postfix = iterable, desc, initial, ""
        self.total = total if total is not None or iterable is None or not hasattr(iterable, "__len__") else len(iterable)
        self._file, self._start, self._last_line, self._closed = sys.stderr, time.monotonic(), None, False
        self._lock = threading.Lock()
        # The first line comes from a timer, so that a step silent for minutes (a first task still running) is seen.
        self._timer = threading.Timer(STAGE_AFTER_S, self._line, args=("running",))
        self._timer.daemon = True
        self._timer.start()

    def __iter__(self):
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self) -> "StageLines":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._last_line is not None and time.monotonic() - self._last_line >= LINE_EVERY_S:
            self._line("running")

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def set_postfix(self, **values) -> None:
        self.postfix = ", ".join(f"{name}={value}" for name, value in values.items())

    def close(self) -> None:
        self._timer.cancel()
        self._line("done")

    def _line(self, state: str) -> None:
        with self._lock:
            # a step that ends before its first line stays silent; nothing follows its last one
            if self._closed or (state == "done" and self._last_line is None):
                self._closed = self._closed or state == "done"
                return
            self._closed = state == "done"
            count = f"{self.n}/{self.total}" if self.total else f"{self.n}"
            postfix = f" ({self.postfix})" if self.postfix else ""
            print(f"{self.desc}: {state}, {count} done{postfix}, {time.monotonic() - self._start:.0f} s", file=self._file, flush=True)
            self._last_line = time.monotonic()


def progress(iterable=None, *, desc: str, total: int | None = None, enabled: bool = True, **options):
    """A tqdm bar over ``iterable`` (or a manual one with ``total``) on a terminal, :class:`StageLines` otherwise.

    ``enabled=False`` or :func:`set_quiet` turns both off (a disabled tqdm bar, which still iterates).
    """
    if _quiet or not enabled:
        return tqdm(iterable, desc=desc, total=total, file=sys.stderr, disable=True, **options)
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return StageLines(iterable, desc=desc, total=total, **options)
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, dynamic_ncols=True, **options)


@contextlib.contextmanager
def stage(desc: str, rows: int | None = None, *, enabled: bool = True):
    """A step without steps of its own (reading, preparing a table): its line or bar ends with the rows
    it handled and the rows per second. ``rows`` may be set on the yielded bar's ``rows`` before the end
    (a file's rows are known once it is read)."""
    bar = progress(desc=desc, total=rows, enabled=enabled, unit="row", unit_scale=True, leave=False)
    bar.rows = rows
    started = time.monotonic()
    try:
        yield bar
    finally:
        elapsed = max(time.monotonic() - started, 1e-9)
        if bar.rows:
            bar.set_postfix_str(f"{bar.rows / elapsed:,.0f} rows/s")
            bar.update(bar.rows)
        bar.close()


class RowRate:
    """Rows fitted per second, shown in a progress bar's postfix; ``add`` is safe from several threads."""

    def __init__(self, bar):
        self.bar, self.rows, self.started, self._lock = bar, 0, time.monotonic(), threading.Lock()

    def add(self, rows: int) -> None:
        with self._lock:
            self.rows += rows
            self.bar.set_postfix_str(f"{self.rows / max(time.monotonic() - self.started, 1e-9):,.0f} rows/s fitted")
