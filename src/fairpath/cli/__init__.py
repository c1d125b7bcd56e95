"""The ``fairpath`` command line.

Each subcommand lives in its own private module exposing ``register(subparsers)`` (or another
function named in ``_SUBCOMMANDS``), which adds a parser whose ``func`` default takes the parsed
arguments and returns an exit code. Every flag's help shows its default.

A run imports the module of the command it names only: its flags' defaults, choices and checks are the
library's own (read from the estimators' signatures), which load numpy, pandas, scikit-learn and the
rest, so ``fairpath --help`` lists the commands from ``_SUBCOMMANDS`` without importing any of them.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import traceback
import warnings

from fairpath._exceptions import FairpathInputError
from fairpath._remedies import command_options
from fairpath._version import __version__

# (module, registering function, {command: one-line help}), in the order of the workflow: decompose a
# disparity, audit predictors, repair them, compare the repairs; then the shipped demo, the papers' studies,
# and language models. The help lines are the commands' own: a registering function's add_parser gets its
# command's line from here (_Commands). torch and the models load only inside a ``func``.
_SUBCOMMANDS = (
    ("fairpath.cli._decompose", "register",
     {"decompose": "decompose TV into counterfactual direct, indirect and spurious effects"}),
    ("fairpath.cli._audit", "register",
     {"audit": "audit predictors: causal decomposition, predictive parity and business-necessity verdicts"}),
    ("fairpath.cli._repair", "register",
     {"repair": "fair twins (causal data adaptation) and a fair predictor for a BN set",
      "frontier": "SPM / iPPM / AUC frontier across BN sets (the paper's Figure 6)"}),
    ("fairpath.cli._audit", "register_demo",
     {"demo": "run the whole audit on shipped data (a synthetic SFM with known effects, and COMPAS) and write reports"}),
    ("fairpath.cli._reproduce", "register", {"reproduce": "reproduce a study of the papers"}),
    ("fairpath.cli._text", "register", {"text": "counterfactual sentiment bias of language models"}),
    ("fairpath.cli._llm", "register", {"llm": "a language model as the decision-maker, audited causally"}),
)
_COMMAND_HELP = {command: text for *_, commands in _SUBCOMMANDS for command, text in commands.items()}


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends "(default: ...)" to a flag's help unless the help already states it or there is none to show."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or action.default == argparse.SUPPRESS or "(default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """The parser class of the command and of every subcommand (add_subparsers reuses it): fairpath's help
    formatter, and fairpath's error line ``fairpath: error: …`` with exit status 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        # a flag's type names its remedies as this (sub)command's flags: the subcommand's parser enters its own
        with command_options(self._option_string_actions):
            return super().parse_known_args(args, namespace)

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(2, f"fairpath: error: {message} (see '{self.prog} --help')\n")


def _leaf_parsers(parser: argparse.ArgumentParser):
    """The parsers that run a command (those without subcommands of their own)."""
    children = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not children:
        yield parser
    for action in children:
        for child in dict.fromkeys(action.choices.values()):
            yield from _leaf_parsers(child)


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the command ``args`` were parsed for (``fairpath repair``'s, ``fairpath text audit``'s)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return command_parser(action.choices[getattr(args, action.dest)], args)
    return parser


class _Commands(argparse._SubParsersAction):
    """The subcommands: each one's help line is its entry in ``_SUBCOMMANDS``."""

    def add_parser(self, name, **kwargs):
        kwargs.setdefault("help", _COMMAND_HELP[name])
        return super().add_parser(name, **kwargs)


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The parser of the command line. ``commands`` (default: all) are the subcommands whose parsers are built,
    importing their modules; the others are listed by name and help line only (``fairpath --help``)."""
    parser = _Parser(
        prog="fairpath",
        description="Causal fairness audits of predictors and counterfactual sentiment-bias audits of language models.",
    )
    parser.add_argument("--version", action="version", version=f"fairpath {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", action=_Commands)
    for module, function, helps in _SUBCOMMANDS:
        if commands is None or not commands.isdisjoint(helps):
            getattr(importlib.import_module(module), function)(subparsers)
        else:
            for command in helps:
                subparsers.add_parser(command)
    for command in _leaf_parsers(parser):
        if command is not parser and "--quiet" not in command._option_string_actions:
            command.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


_notes_printed: set[str] = set()


def print_note(text: str, file=None) -> None:
    """``note: <text>`` (on stderr unless ``file``), once per distinct text in a run of the command: a fact the
    library warns about and then lists among a result's notes is printed once."""
    if text not in _notes_printed:
        _notes_printed.add(text)
        print(f"note: {text}", file=file or sys.stderr)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` inside the command: the message as a note, without the library's source line."""
    print_note(str(message))


def _bug(error: BaseException) -> int:
    traceback.print_exception(error, file=sys.stderr)
    print(f"fairpath: internal error: {type(error).__name__}: {error}\n"
          f"This is a bug in fairpath {__version__}, not a problem with your input: please report it on "
          "fairpath's issue tracker with the command you ran and the traceback above.", file=sys.stderr)
    return 1


def _held_out_folder(args: argparse.Namespace):
    """The ``--out`` folder held for the whole command (fairpath._io.locked_folder), so that a second run into it
    fails at once instead of replacing this run's files; nothing to hold for a command without one."""
    if getattr(args, "out", None) is None:
        return contextlib.nullcontext()
    from fairpath._io import locked_folder

    return locked_folder(args.out, "--out folder")


# The flags that name files a command reads: its results never replace them (fairpath._io.protected_inputs).
_INPUT_FLAGS = ("data", "test", "config", "corpus", "attribute", "samples")


def _input_files(args: argparse.Namespace) -> list[str]:
    return [str(value) for value in (getattr(args, name, None) for name in _INPUT_FLAGS) if value is not None]


def _named_command(argv: list[str]) -> set[str]:
    """The subcommand ``argv`` names (its first word that is not an option: the command itself takes no option
    with a value), as a set; empty when it names none of them (``--help``, ``--version``, a misspelling)."""
    words = [word for word in argv if not word.startswith("-")]
    return {words[0]} & set(_COMMAND_HELP) if words else set()


STDOUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for a command whose reader closed the pipe


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not hit the closed pipe again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file descriptor (an embedding program's, a test's)
        pass


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(_named_command(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from fairpath import _progress

    _progress.set_quiet(bool(getattr(args, "quiet", False)))
    _notes_printed.clear()
    try:
        from fairpath._io import protected_inputs
        from fairpath.report._provenance import running_command

        # catch_warnings restores the caller's showwarning afterwards (the library never changes it); errors name
        # their remedies as this command's flags (command_options)
        with (warnings.catch_warnings(), _held_out_folder(args), protected_inputs(_input_files(args)),
              running_command(sys.argv[1:] if argv is None else argv),
              command_options(command_parser(parser, args)._option_string_actions)):
            warnings.showwarning = _show_warning
            return int(args.func(args) or 0)
    except FairpathInputError as error:
        print(f"fairpath: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of stdout left (| head): the results are saved, nothing more to say
        _silence_stdout()
        return STDOUT_CLOSED
    except UnicodeDecodeError as error:  # a reader that does not name its file yet: still the user's input
        print(f"fairpath: error: a file is not UTF-8 ({error}); save it as UTF-8", file=sys.stderr)
        return 2
    except OSError as error:  # an output path that cannot be written, a full disk, a file that vanished
        where = f": {error.filename!r}" if error.filename else ""
        print(f"fairpath: error: {error.strerror or error}{where}; check the path and its permissions", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fairpath: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the boundary: anything else is a bug
        return _bug(error)
    finally:
        _progress.set_quiet(False)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
