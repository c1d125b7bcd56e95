"""The frontier's resume file: a torn or damaged runs.csv is detected and its bad rows computed again;
degenerate arguments are refused before any fit."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairpath import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.repair import frontier
from fairpath.repair._frontier import RUN_COLUMNS

OPTIONS = dict(repeats=2, engine="linear", learner=LogisticRegression(), n_boot=5, n_folds=2, constrained=False, progress=False)


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(300, seed=3)


@pytest.fixture(scope="module")
def uninterrupted(sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("frontier") / "full"
    return out, frontier(sample.data, sample.sfm, "none,Z", out_dir=out, **OPTIONS)


def _resume(sample, uninterrupted, tmp_path, damage):
    out, full = uninterrupted
    copy = tmp_path / "resumed"
    shutil.copytree(out, copy)
    damage(copy / "runs.csv")
    with pytest.warns(UserWarning, match=r"row\(s\) of .*runs\.csv are incomplete, invalid or repeated; those runs are computed again"):
        resumed = frontier(sample.data, sample.sfm, "none,Z", out_dir=copy, **OPTIONS)
    pd.testing.assert_frame_equal(resumed.runs, full.runs, check_dtype=False)
    pd.testing.assert_frame_equal(resumed.to_frame(), full.to_frame(), check_dtype=False)
    return copy


def test_torn_last_row_is_recomputed_and_the_result_equals_an_uninterrupted_run(sample, uninterrupted, tmp_path):
    def tear(path):
        text = path.read_bytes()
        path.write_bytes(text[: len(text) - 9])  # cut the last row in the middle of a number

    copy = _resume(sample, uninterrupted, tmp_path, tear)
    assert (copy / "runs.csv").read_text() == (uninterrupted[0] / "runs.csv").read_text()


def test_invalid_and_repeated_rows_are_recomputed(sample, uninterrupted, tmp_path):
    def damage(path):
        lines = path.read_text().splitlines()
        cells = lines[2].split(",")
        cells[RUN_COLUMNS.index("auc")] = "inf"
        lines[2] = ",".join(cells)
        lines.insert(4, lines[4])  # the same run twice
        lines[5] = lines[5].replace("adapt", "adapt ?")  # a point that is not a task of this run
        path.write_text("\n".join(lines) + "\n")

    _resume(sample, uninterrupted, tmp_path, damage)


def test_a_file_that_is_not_a_runs_file(sample, uninterrupted, tmp_path):
    copy = tmp_path / "other"
    shutil.copytree(uninterrupted[0], copy)
    (copy / "runs.csv").write_text("a,b\n1,2\n")
    with pytest.raises(FairpathInputError, match=r"runs\.csv is not a frontier runs file \(its header is not point,kind"):
        frontier(sample.data, sample.sfm, "none,Z", out_dir=copy, **OPTIONS)


def test_runs_file_is_rewritten_whole(uninterrupted):
    out, full = uninterrupted
    saved = pd.read_csv(out / "runs.csv")
    assert list(saved.columns) == RUN_COLUMNS and len(saved) == len(full.runs) == 6
    key = ["point", "seed"]
    assert np.array_equal(saved.sort_values(key)["auc"].to_numpy(), full.runs.sort_values(key)["auc"].to_numpy(dtype=float))
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("options, message", [
    ({"repeats": 0}, "repeats must be an integer ≥ 1, got 0"),
    ({"repeats": 10_001}, r"repeats must be an integer ≤ 10,000 \(fairpath's bound\), got 10,001"),
    ({"n_boot": 100_001}, r"n_boot must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
    ({"repeats": 2.0}, r"repeats must be an integer, got 2\.0 \(float\); pass 2"),
    ({"n_folds": 1}, "n_folds must be an integer ≥ 2, got 1"),
    ({"seed": -2}, "seed must be an integer ≥ 0, got -2"),
    ({"quantile": 1.5}, r"quantile must lie in \(0, 1\), got 1\.5"),
])
def test_arguments(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        frontier(sample.data, sample.sfm, "none", **{**OPTIONS, **options})


def test_inf_and_missing_columns(sample):
    with pytest.raises(FairpathInputError, match=r"column\(s\) \['w2'\] not found in the data"):
        frontier(sample.data.drop(columns="w2"), sample.sfm, "none", **OPTIONS)
    data = sample.data.copy()
    data.loc[0, "w1"] = np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('w1': 1\)"):
        frontier(data, sample.sfm, "none", **OPTIONS)
