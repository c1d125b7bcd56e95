"""The SPM–iPPM–AUC frontier: points, ordering, resumable runs."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.repair import decision_spm, frontier, parse_bn_sets


def test_decision_spm_is_the_gap_in_selection_rates():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.9, 0.8, 0.7, 0.6])
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)
    assert decision_spm(scores, group, 0.5) == 1.0
    assert decision_spm(scores, group, 0.75) == 0.5


def test_parse_bn_sets_reads_the_shared_vocabulary_and_the_resolving_names():
    assert parse_bn_sets("none, z,W,wz") == ["none", "Z", "W", "ZW"]
    assert parse_bn_sets("none; SE; IE; IE,SE") == ["none", "Z", "W", "ZW"]
    assert parse_bn_sets(["SE", ("IE", "SE"), "ZW"]) == ["Z", "ZW"]
    with pytest.raises(FairpathInputError, match="BN set 'DE,SE' holds DE, which data adaptation cannot keep"):
        parse_bn_sets("none;DE,SE")
    with pytest.raises(FairpathInputError, match="business-necessity entry 'XE' is not a pathway"):
        parse_bn_sets("XE")


@pytest.fixture(scope="module")
def small():
    return make_binary_sfm(1000, seed=5)


def test_frontier_points_order_and_resume(small, tmp_path):
    result = frontier(small.data, small.sfm, "none,ZW", repeats=1, engine="linear", learner=LogisticRegression(), n_boot=10,
                      out_dir=tmp_path, progress=False)
    summary = result.to_frame().set_index("point")
    assert list(summary.index) == ["adapt none", "adapt ZW", "unconstrained", "constrained none", "constrained ZW"]
    assert abs(summary.loc["adapt none", "spm_mean"]) < summary.loc["adapt ZW", "spm_mean"] < summary.loc["unconstrained", "spm_mean"]
    assert summary.loc["adapt none", "ippm_mean"] > summary.loc["unconstrained", "ippm_mean"]
    assert abs(summary.loc["constrained none", "spm_mean"]) < 0.1
    assert "adapt none" in repr(result) and len(result.plot().axes) == 2
    assert json.loads(result.to_json())["settings"]["repeats"] == 1

    # A second call reads the finished runs instead of recomputing them; a deleted run is redone.
    runs = pd.read_csv(tmp_path / "runs.csv")
    runs.loc[runs.point == "adapt ZW", "auc"] = 0.123
    runs[runs.point != "unconstrained"].to_csv(tmp_path / "runs.csv", index=False)
    again = frontier(small.data, small.sfm, "none,ZW", repeats=1, engine="linear", learner=LogisticRegression(), n_boot=10,
                      out_dir=tmp_path, progress=False)
    rows = again.runs.set_index("point")
    assert rows.loc["adapt ZW", "auc"] == 0.123
    assert rows.loc["unconstrained", "auc"] == pytest.approx(summary.loc["unconstrained", "auc_mean"])


def test_frontier_refuses_a_folder_with_other_settings_or_a_continuous_outcome(small, tmp_path):
    frontier(small.data, small.sfm, "none", repeats=1, engine="linear", n_boot=10, unconstrained=False, constrained=False,
             out_dir=tmp_path, progress=False)
    with pytest.raises(FairpathInputError, match="holds a frontier run with other settings"):
        frontier(small.data, small.sfm, "none", repeats=2, engine="linear", n_boot=10, unconstrained=False,
                 constrained=False, out_dir=tmp_path, progress=False)
    continuous = small.data.assign(y=np.linspace(0, 1, len(small.data)))
    with pytest.raises(FairpathInputError, match="needs a binary 0/1 outcome"):
        frontier(continuous, small.sfm, "none", progress=False)
