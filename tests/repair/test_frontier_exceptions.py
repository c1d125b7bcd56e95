"""The frontier's resume folder: damaged or deleted runs are computed again; degenerate arguments are refused
before any fit. (The resume mechanism itself, kill -9 included, is tested once, in tests/test_runs.py.)"""

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


def test_damaged_and_deleted_runs_are_recomputed_to_the_uninterrupted_numbers(sample, uninterrupted, tmp_path):
    out, full = uninterrupted
    copy = tmp_path / "resumed"
    shutil.copytree(out, copy)
    steps = sorted((copy / "runs").glob("*-seed*.json"))
    steps[0].write_text('{"point": "adapt none", "auc": 0.')  # torn by hand: atomic writes never leave one
    steps[1].unlink()
    (copy / "runs.csv").unlink()
    with pytest.warns(UserWarning, match=r"cannot be read back .*; step .* is computed again"):
        resumed = frontier(sample.data, sample.sfm, "none,Z", out_dir=copy, **OPTIONS)
    pd.testing.assert_frame_equal(resumed.runs, full.runs)
    pd.testing.assert_frame_equal(resumed.to_frame(), full.to_frame())
    assert (copy / "runs.csv").read_text() == (out / "runs.csv").read_text()


def test_runs_file_holds_every_run(uninterrupted):
    out, full = uninterrupted
    saved = pd.read_csv(out / "runs.csv")
    assert list(saved.columns) == RUN_COLUMNS and len(saved) == len(full.runs) == 6
    assert np.array_equal(saved["auc"].to_numpy(), full.runs["auc"].to_numpy(dtype=float))
    assert len(list((out / "runs").glob("*-seed*.json"))) == 6
    assert not [p for p in out.rglob(".*") if p.name != ".fairpath.lock"]  # no temporary file is left


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


def test_a_damaged_constrained_run_is_recomputed_with_its_saved_target(sample, tmp_path):
    """The constrained points' targets (the seed's decomposition) are steps too: a damaged constrained run is
    computed again from its saved target, to the uninterrupted numbers (it once lost its target and failed)."""
    options = {**OPTIONS, "repeats": 1, "constrained": True, "unconstrained": False}
    full = frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **options)
    (step,) = (tmp_path / "runs").glob("constrained_none-seed*.json")
    assert len(list((tmp_path / "runs").glob("targets-seed*.json"))) == 1
    step.write_text('{"point": "constrained none", "auc": 0.')
    with pytest.warns(UserWarning, match=r"cannot be read back .*; step .* is computed again"):
        resumed = frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **options)
    pd.testing.assert_frame_equal(resumed.runs, full.runs)
