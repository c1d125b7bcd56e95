"""Generated checks of every flag of every subcommand: each flag with a type or choices gets text that is
not a number, values beyond its bounds, nan/inf and unknown choices, and the command must stop with exit
status 2 and one ``fairpath: error:`` line naming the flag, without a traceback.

The flags' types come from the API's declared constraints (fairpath._validation.flag_type), so these cases
also check that the command line refuses what the API refuses.
"""

from __future__ import annotations

import argparse

import pytest

from fairpath.cli import _leaf_parsers, build_parser, main
from fairpath._validation import Optional, Real

# Flags whose type reads free text (names, paths, comma lists): any text is a value there.
# parse_merge and parse_level_names check their text themselves (tests/test_levels_exceptions.py), sensitivity_strengths
# its two numbers by the declared constraints (tests/cli/test_cli_sensitivity.py)
FREE_TEXT_TYPES = {"comma_list", "Path", "parse_merge", "parse_level_names", "sensitivity_strengths"}


def _texts(constraint) -> list[str]:
    """Command-line texts the constraint refuses: a word, numbers beyond its bounds, nan and inf for numbers."""
    inner = constraint.inner if isinstance(constraint, Optional) else constraint
    texts = ["five"]
    texts += [str(value) for value in inner.invalid() if isinstance(value, (int, float)) and not isinstance(value, bool)]
    texts += ["nan", "inf", "-inf", "1e400"] if isinstance(inner, Real) else ["1.5"]
    return list(dict.fromkeys(texts))


def _flags():
    for leaf in _leaf_parsers(build_parser()):
        command = leaf.prog.split()[1:]
        for action in leaf._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            constraint = getattr(action.type, "constraint", None)
            if constraint is not None:
                texts = _texts(constraint)
            elif action.choices is not None:
                texts = ["no-such-choice"]
            else:
                continue
            for text in texts:
                yield pytest.param(command, action.option_strings, text, id=f"{' '.join(command)} {action.option_strings[-1]} {text}")


CASES = list(_flags())


def test_every_typed_flag_is_declared():
    # a flag with a bare int or float type would accept -1, nan or 10**30 that the API then refuses late
    bare = [f"{leaf.prog} {action.option_strings[-1]}" for leaf in _leaf_parsers(build_parser()) for action in leaf._actions
            if action.option_strings and action.type is not None and getattr(action.type, "constraint", None) is None
            and getattr(action.type, "__name__", "") not in FREE_TEXT_TYPES]
    assert not bare
    assert len(CASES) >= 300, len(CASES)


@pytest.mark.parametrize("command, flags, text", CASES)
def test_bad_flag_value(command, flags, text, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*command, flags[-1], text])
    err = capsys.readouterr().err
    assert stop.value.code == 2
    lines = [line for line in err.splitlines() if line.startswith("fairpath: error:")]
    assert len(lines) == 1 and any(f"argument {'/'.join(flags)}" in lines[0] or flag in lines[0] for flag in flags), err
    assert "Traceback" not in err
