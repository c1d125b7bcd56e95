"""Remedies in the caller's words.

An error names its remedies in the words of whoever called: the Python API's parameters (merge={...}),
or, inside a command of the command line, that command's own flags (--merge "..."); a remedy that the
running command has no flag for is left out rather than named wrongly. The command line declares the
options of the command it runs (``command_options``: while its parser reads the flags, and while it runs);
elsewhere the words are the API's. The module imports nothing heavy: ``fairpath --help`` parses with it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from contextvars import ContextVar

_COMMAND_OPTIONS: ContextVar[frozenset[str] | None] = ContextVar("fairpath_command_options", default=None)


@contextlib.contextmanager
def command_options(options: Iterable[str]):
    """Inside, remedies (:func:`remedy`) are named as the flags among ``options`` (the running command's)."""
    token = _COMMAND_OPTIONS.set(frozenset(options))
    try:
        yield
    finally:
        _COMMAND_OPTIONS.reset(token)


def remedy(python: str, flag: str | None = None, command: str | None = None) -> str | None:
    """A remedy in the caller's words: ``python`` (e.g. ``drop_levels=['a']``) from the API; inside a command
    that has ``flag``, ``command`` (default: the flag itself); None inside one that has not (or where ``flag`` is None:
    the API alone can do it)."""
    options = _COMMAND_OPTIONS.get()
    if options is None:
        return python
    return (command or flag) if flag in options else None
