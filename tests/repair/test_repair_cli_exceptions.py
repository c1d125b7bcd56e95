"""`fairpath repair` and `fairpath frontier` with degenerate input: exit status 2, a message, no traceback,
and nothing written."""

from __future__ import annotations

import pandas as pd
import pytest
from cli_runs import run_cli as run

from fairpath.datasets import make_binary_sfm

SFM_ARGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--engine", "linear"]


@pytest.fixture(scope="module")
def data():
    return make_binary_sfm(200, seed=0).data


def _write(frame: pd.DataFrame, folder, name="data.csv"):
    path = folder / name
    frame.to_csv(path, index=False)
    return str(path)


@pytest.mark.parametrize("command", ["repair", "frontier"])
def test_missing_column(command, data, tmp_path, capsys):
    path = _write(data.drop(columns="w2"), tmp_path)
    code, err = run([command, path, *SFM_ARGS, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "fairpath: error: column(s) ['w2'] not found in data file" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command, message", [
    ("repair", "outcome column 'y' is constant (1.0); there is nothing to explain"),
    ("frontier", "outcome column 'y' is constant (1.0); there is nothing to explain"),
])
def test_constant_outcome(command, message, data, tmp_path, capsys):
    path = _write(data.assign(y=1.0), tmp_path)
    code, err = run([command, path, *SFM_ARGS, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and message in err


@pytest.mark.parametrize("command", ["repair", "frontier"])
def test_group_of_one_row(command, data, tmp_path, capsys):
    frame = pd.concat([data[data.x == 0].head(80), data[data.x == 1].head(1)])
    code, err = run([command, _write(frame, tmp_path), *SFM_ARGS, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "group x=1 has 1 rows; 5-fold cross-fitting needs at least 50 (10 per fold and group): use more data" in err  # no --folds here


@pytest.mark.parametrize("command", ["repair", "frontier"])
def test_four_rows(command, data, tmp_path, capsys):
    frame = data.groupby(["x", "y"]).head(1)  # one row per group and class
    code, err = run([command, _write(frame, tmp_path), *SFM_ARGS, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "group x=0 has 2 rows; 5-fold cross-fitting needs at least 50 (10 per fold and group)" in err


def test_inf_in_a_used_column(data, tmp_path, capsys):
    frame = data.copy()
    frame.loc[[3, 4], "z1"] = float("inf")
    code, err = run(["repair", _write(frame, tmp_path), *SFM_ARGS, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "infinite values (inf) in used columns ('z1': 2)" in err


def test_test_file_lacking_a_column_is_refused_before_fitting(data, tmp_path, capsys):
    test = _write(make_binary_sfm(30, seed=1).data.drop(columns="w1"), tmp_path, "test.csv")
    code, err = run(["repair", _write(data, tmp_path), *SFM_ARGS, "--test", test, "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "column(s) ['w1'] not found in --test file" in err


def test_failing_test_file_leaves_no_partial_outputs(data, tmp_path, capsys):
    test = make_binary_sfm(30, seed=1).data
    test.loc[0, "x"] = 2  # a level the adaptation never saw: found only when the fitted adaptation is applied
    out = tmp_path / "out"
    code, err = run(["repair", _write(data, tmp_path), *SFM_ARGS, "--bn", "SE", "--test", _write(test, tmp_path, "test.csv"),
                     "--out", str(out)], capsys)
    assert code == 2 and "'x' has levels ['2'] not seen in training" in err
    assert not out.exists() or list(out.iterdir()) == []


def test_a_test_file_with_a_header_and_no_rows_is_refused_naming_it(data, tmp_path, capsys):
    # was a traceback from the forest (0 samples) after every fit
    test = _write(data.head(0), tmp_path, "test.csv")
    out = tmp_path / "out"
    code, err = run(["repair", _write(data, tmp_path), *SFM_ARGS, "--test", test, "--out", str(out)], capsys)
    assert code == 2 and f"fairpath: error: --test file {test!r} has a header but no rows (6 columns: " in err
    assert not out.exists()


def test_bn_and_resolving_together_are_refused_not_one_of_them_ignored(data, tmp_path, capsys):
    # --bn SE --resolving w1,w2 adapted with W resolving and reported BN = {IE}: the BN set given was dropped silently
    out = tmp_path / "out"
    code, err = run(["repair", _write(data, tmp_path), *SFM_ARGS, "--bn", "SE", "--resolving", "w1,w2", "--out", str(out)], capsys)
    assert code == 2 and ("fairpath: error: the BN set 'SE' and the resolving columns ['w1', 'w2'] are both given; give one: "
                          "resolving columns keep the BN set they realise (Z resolving keeps SE, W resolving keeps IE)") in err
    assert "(on the command line: --bn or --resolving, not both)" in err and not out.exists()
