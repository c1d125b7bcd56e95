"""The ``fairpath`` command line.

Each subcommand lives in its own private module exposing ``register(subparsers)``, which adds a
parser whose ``func`` default takes the parsed arguments and returns an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fairpath._exceptions import FairpathInputError
from fairpath._version import __version__

# Modules are imported when the parser is built, so a subcommand's heavy dependencies load only
# inside its own ``func``.
_SUBCOMMAND_MODULES = (
    "fairpath.cli._decompose",
    "fairpath.cli._reproduce",
    "fairpath.cli._text",
    "fairpath.cli._audit",
    "fairpath.cli._repair",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairpath",
        description="Causal fairness audits of predictors and counterfactual sentiment-bias audits of language models.",
    )
    parser.add_argument("--version", action="version", version=f"fairpath {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
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
