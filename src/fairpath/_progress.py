"""One progress helper for every long step: a tqdm bar on stderr.

A bar is shown only when stderr is a terminal (tqdm's ``disable=None``), when the caller asks for
it (``enabled``) and when the command line did not say ``--quiet`` (:func:`set_quiet`).
"""

from __future__ import annotations

import sys

from tqdm.auto import tqdm

_quiet = False


def set_quiet(quiet: bool) -> None:
    """Turn every progress bar off (``--quiet``) or back on."""
    global _quiet
    _quiet = bool(quiet)


def progress(iterable=None, *, desc: str, total: int | None = None, enabled: bool = True, **options) -> tqdm:
    """A tqdm bar over ``iterable`` (or a manual one with ``total``), to stderr.

    ``enabled=False`` or :func:`set_quiet` turns it off; it is also off when stderr is not a terminal.
    """
    disable = True if (_quiet or not enabled) else None
    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, disable=disable, dynamic_ncols=True, **options)
