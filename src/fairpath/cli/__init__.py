"""The ``fairpath`` command line.

Each subcommand lives in its own private module exposing ``register(subparsers)`` (or another
function named in ``_SUBCOMMANDS``), which adds a parser whose ``func`` default takes the parsed
arguments and returns an exit code. Every flag's help shows its default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fairpath._exceptions import FairpathInputError
from fairpath._version import __version__

# (module, registering function), in the order of the workflow: decompose a disparity, audit predictors,
# repair them, compare the repairs; then the shipped demo, the papers' studies, and language models.
# Modules are imported when the parser is built; torch and the models load only inside a ``func``.
_SUBCOMMANDS = (
    ("fairpath.cli._decompose", "register"),
    ("fairpath.cli._audit", "register"),
    ("fairpath.cli._repair", "register"),
    ("fairpath.cli._audit", "register_demo"),
    ("fairpath.cli._reproduce", "register"),
    ("fairpath.cli._text", "register"),
)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends "(default: ...)" to a flag's help unless the help already states it or there is none to show."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """The parser class of the command and of every subcommand (add_subparsers reuses it)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="fairpath",
        description="Causal fairness audits of predictors and counterfactual sentiment-bias audits of language models.",
    )
    parser.add_argument("--version", action="version", version=f"fairpath {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module, function in _SUBCOMMANDS:
        getattr(importlib.import_module(module), function)(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    # The command line only writes figures to files: a non-interactive backend, set here and nowhere
    # else, so that importing fairpath never changes a user's backend.
    matplotlib.use("Agg")
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except FairpathInputError as error:
        print(f"fairpath: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
