"""Every remedy an error names is an option of the command that printed it: the tabular commands are fed bad input
(small levels, small groups, other levels, intersections, unseen levels, dirty and missing cells, a rare class) and
each ``--flag`` in their error lines is looked up in that command's own parser."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fairpath.cli import build_parser, command_parser, main
from fairpath.datasets import make_binary_sfm

ROLES = ["--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("remedies")
    base = make_binary_sfm(600, seed=1).data
    rng = np.random.default_rng(0)
    levels = base.assign(x=np.where(base["x"] == 1, "black", "white"), sex=rng.choice(["female", "male"], len(base)),
                         score=(base["y"] + rng.normal(0, 0.3, len(base))).clip(0, 1))
    levels.loc[levels.index[:150], "x"] = "asian"
    levels.loc[levels.index[:8], "x"] = "NHOPI"  # too few rows to fit
    tiny = levels.iloc[:200].assign(x=np.where(np.arange(200) < 6, "black", "white"))  # a group of 6 rows
    dirty = levels.astype({"z1": object})
    dirty.loc[dirty.index[300], "z1"] = "?"
    rare = levels.assign(y=np.where(np.arange(len(levels)) // 3 == 100, 1, 0))  # 3 rows of class 1
    paths = {}
    for name, frame in {"levels": levels, "tiny": tiny, "dirty": dirty, "rare": rare}.items():
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    missing = paths["levels"].read_text().splitlines()
    cells = missing[301].split(",")
    cells[list(levels.columns).index("w1")] = ""
    missing[301] = ",".join(cells)
    paths["missing"] = folder / "missing.csv"
    paths["missing"].write_text("\n".join(missing) + "\n")
    return paths


def _cases(files, command):
    """(file, X's flags, the comparison level of the commands that need one) of each bad input of ``command``."""
    cases = [
        (files["levels"], ["--x", "x", "--x0", "white"], "black"),
        (files["levels"], ["--x", "x,sex", "--x0", "white/male"], "black/male"),
        (files["levels"], ["--x", "x", "--x0", "purple"], "black"),
        (files["tiny"], ["--x", "x", "--x0", "white"], "black"),
        (files["dirty"], ["--x", "x", "--x0", "white", "--drop-levels", "NHOPI,asian"], "black"),
        (files["missing"], ["--x", "x", "--x0", "white", "--drop-levels", "NHOPI,asian"], "black"),
    ]
    if command in ("repair", "frontier"):  # their predictors' folds are stratified by the class
        cases.append((files["rare"], ["--x", "x", "--x0", "white", "--drop-levels", "NHOPI,asian"], "black"))
    return cases


def _argv(command, path, x_flags, x1, out):
    if command in ("decompose", "audit"):
        argv = [command, str(path), *x_flags, *ROLES]
    else:  # repair and frontier compare two levels
        argv = [command, str(path), *x_flags, "--x1", x1, *ROLES, "--out", str(out)]
    if command == "audit":
        argv += ["--predictor", "score", "--bn", "SE", "--out", str(out)]
    return argv


@pytest.mark.parametrize("command", ["decompose", "audit", "repair", "frontier"])
def test_every_flag_an_error_names_is_an_option_of_the_command(command, files, tmp_path, capsys):
    named = set()
    for number, (path, x_flags, x1) in enumerate(_cases(files, command)):
        argv = _argv(command, path, x_flags, x1, tmp_path / f"out{number}")
        assert main(argv) == 2, argv
        error = capsys.readouterr().err
        assert "Traceback" not in error and "\nfairpath: error: " in f"\n{error}", error
        options = command_parser(build_parser({command}), build_parser({command}).parse_args(argv))._option_string_actions
        flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", error))
        assert flags <= set(options), f"{argv}: {error} names {sorted(flags - set(options))}, not options of {command}"
        named |= flags
    # the walk saw the remedies it is about (a vacuous pass is impossible)
    assert {"--drop-levels", "--na-values", "--empty-category"} <= named
    assert ("--merge" in named) == ("--folds" in named) == (command in ("decompose", "audit"))  # every level; cross-fitting


def test_repair_names_its_own_flags_for_other_levels_and_small_groups(files, tmp_path, capsys):
    assert main(["repair", str(files["levels"]), "--x", "x", "--x0", "white", "--x1", "black", *ROLES, "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "'x' has levels ['NHOPI', 'asian'] besides x0='white' and x1='black'; drop the other levels' rows " \
           "(--drop-levels \"NHOPI,asian\")" in error and "x1=None" not in error
    assert main(["repair", str(files["tiny"]), "--x", "x", "--x0", "white", "--x1", "black", *ROLES, "--out", str(tmp_path)]) == 2
    assert "5-fold cross-fitting needs at least 50 (10 per fold and group): use more data\n" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["repair", "frontier"])
def test_repair_and_frontier_analyse_an_intersection_with_merged_and_dropped_levels(command, files, tmp_path, capsys):
    """--x a,b read --merge, which these parsers lacked (AttributeError: a bug report); they now take the level flags."""
    argv = [command, str(files["levels"]), "--x", "x,sex", "--x0", "white/male", "--x1", "black/male", *ROLES,
            "--drop-levels", "NHOPI/female,NHOPI/male,asian/female,asian/male", "--merge", "black/female=white/female",
            "--out", str(tmp_path)]
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    # past the levels: only the two compared levels and white/female, which a binary SFM refuses naming --drop-levels
    assert code == 2 and "'x/sex' has levels ['white/female'] besides x0='white/male' and x1='black/male'; drop the other " \
                         "levels' rows (--drop-levels \"white/female\")" in captured.err
    assert "note: dropped 150 rows of column 'x/sex'" in captured.err
