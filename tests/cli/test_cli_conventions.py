"""One command line: every flag explained with its default, one name per idea (old names still work),
one business-necessity vocabulary, subcommands in workflow order, help where arguments are missing."""

from __future__ import annotations

import argparse

import pytest

from fairpath._vocabulary import BN_HELP
from fairpath.cli import build_parser, main
from fairpath.cli._audit import _config_from_args
from fairpath.datasets import make_binary_sfm


def _subparsers(parser: argparse.ArgumentParser, path=("fairpath",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _subparsers(child, (*path, name))


def _commands():
    return list(_subparsers(build_parser()))


def test_every_flag_has_help_that_shows_its_default():
    missing, undocumented = [], []
    for path, parser in _commands():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            name = f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}"
            if not action.help:
                missing.append(name)
            elif action.default is not None and action.default is not False and "default" not in formatter._get_help_string(action):
                undocumented.append(name)
    assert missing == [] and undocumented == []


def test_subcommands_follow_the_workflow_and_each_has_a_description():
    top = build_parser()
    (commands,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(commands.choices) == ["decompose", "audit", "repair", "frontier", "demo", "reproduce", "text", "llm"]
    assert all(parser.description for _, parser in _commands())


@pytest.mark.parametrize("argv", [["reproduce"], []])
def test_a_command_without_its_subcommand_prints_its_help(argv, capsys):
    assert main(argv) == 2
    printed = capsys.readouterr().out
    assert printed.startswith(f"usage: fairpath {' '.join(argv)}".rstrip() + " [-h]")
    if argv:
        assert "theorem1" in printed and "Rerun a published study" in printed


def test_every_business_necessity_flag_speaks_the_one_vocabulary():
    helps = {(path[-1], a.dest): a.help for path, parser in _commands() for a in parser._actions if a.dest in {"bn", "bn_sets"}}
    assert set(helps) == {("audit", "bn"), ("repair", "bn"), ("frontier", "bn_sets")}
    assert all(BN_HELP in text for text in helps.values())


def test_repeated_and_comma_separated_flags_reach_the_config_keys(capsys):
    args = build_parser().parse_args(["audit", "data.csv", "--predictor", "a,b", "--predictor", "c", "--bootstrap", "7", "--n-folds", "3"])
    config = _config_from_args(args.__class__(**{**vars(args), "x": "g", "x0": 0, "x1": 1, "y": "y", "bn": "SE", "out": "o"}))
    assert (config.predictors, config.n_boot, config.n_folds) == (["a", "b", "c"], 7, 3)
    assert capsys.readouterr().err == ""  # --n-folds: an accepted spelling of the config key, not deprecated


def test_warnings_print_once_as_notes_without_source_lines(tmp_path, capsys):
    import dataclasses
    import warnings

    sample = make_binary_sfm(400, seed=6)
    data = sample.data.assign(score=sample.outcome_mean(sample.data), x=sample.data["x"].map({0: "a", 1: "b"}))
    data.loc[:2, "x"] = "c"  # three rows of a third group: the audit warns, and lists the same fact among its notes
    path = tmp_path / "data.csv"
    data.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as a user's shell has it, whatever filters the test run sets
        shown_before = warnings.showwarning
        assert main(["audit", str(path), "--x", "x", "--x0", "a", "--x1", "b", "--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--predictor", "score",
                     "--bn", "SE", "--learner", "linear", "--folds", "2", "--bootstrap", "20", "--bins", "4", "--quiet", "--out", str(tmp_path / "out")]) == 0
        assert warnings.showwarning is shown_before  # the library's callers keep their own warning display
    printed = capsys.readouterr()
    note = "note: 3 rows excluded because 'x' is neither 'a' nor 'b'"
    assert (printed.out + printed.err).count(note) == 1 and note in printed.err
    assert "UserWarning" not in printed.err and ".py:" not in printed.err  # no Python source path or code line
    with pytest.warns(UserWarning, match="3 rows excluded"):  # outside the command, the library still warns
        from fairpath.parity._audit import _keep_groups

        _keep_groups(data, dataclasses.replace(sample.sfm, x0="a", x1="b"), [])
