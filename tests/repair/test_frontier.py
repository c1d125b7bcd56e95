"""The SPM–iPPM–AUC frontier: points, ordering, resumable runs."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairpath._exceptions import FairpathInputError
from fairpath._runs import KEY_FILE
from fairpath._seeds import REPEATS, child_seed
from fairpath.causal import SFM
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
    summary = result.per_point().set_index("point")
    assert list(summary.index) == ["adapt none", "adapt ZW", "unconstrained", "constrained none", "constrained ZW"]
    assert abs(summary.loc["adapt none", "spm_mean"]) < summary.loc["adapt ZW", "spm_mean"] < summary.loc["unconstrained", "spm_mean"]
    assert summary.loc["adapt none", "ippm_mean"] > summary.loc["unconstrained", "ippm_mean"]
    assert abs(summary.loc["constrained none", "spm_mean"]) < 0.1
    assert "adapt none" in result.summary() and len(result.plot().axes) == 2
    frame = result.to_frame().set_index(["subject", "measure"])
    assert frame.loc[("adapt ZW", "ippm"), "estimate"] == summary.loc["adapt ZW", "ippm_mean"]
    assert frame[["se", "ci_low", "ci_high", "level"]].isna().all().all()  # a spread over seeds is no interval
    assert json.loads(result.to_json())["settings"]["repeats"] == 1

    # A second call reads the finished runs instead of recomputing them; a deleted run is redone.
    (saved,) = (tmp_path / "runs").glob("adapt_ZW-seed*.json")
    saved.write_text(json.dumps({**json.loads(saved.read_text()), "auc": 0.123}))
    next((tmp_path / "runs").glob("unconstrained-seed*.json")).unlink()
    again = frontier(small.data, small.sfm, "none,ZW", repeats=1, engine="linear", learner=LogisticRegression(), n_boot=10,
                      out_dir=tmp_path, progress=False)
    rows = again.runs.set_index("point")
    assert rows.loc["adapt ZW", "auc"] == 0.123
    assert rows.loc["unconstrained", "auc"] == pytest.approx(summary.loc["unconstrained", "auc_mean"])


def test_frontier_recomputes_a_folder_with_other_settings_and_refuses_a_continuous_outcome(small, tmp_path):
    # Changed in the ninth session (issue 25): other settings were refused; every change of the resume key
    # (settings, data, SFM) now recomputes the folder's runs and warns.
    options = dict(engine="linear", n_boot=10, unconstrained=False, constrained=False, progress=False)
    frontier(small.data, small.sfm, "none", repeats=1, out_dir=tmp_path, **options)
    with pytest.warns(UserWarning, match=r"holds frontier results of other settings; they are computed again"):
        again = frontier(small.data, small.sfm, "none", repeats=2, out_dir=tmp_path, **options)
    pd.testing.assert_frame_equal(again.runs, frontier(small.data, small.sfm, "none", repeats=2, **options).runs)
    continuous = small.data.assign(y=np.linspace(0, 1, len(small.data)))
    with pytest.raises(FairpathInputError, match="needs a binary 0/1 outcome"):
        frontier(continuous, small.sfm, "none", progress=False)


RESUME = dict(repeats=1, engine="linear", learner=LogisticRegression(), n_boot=5, n_folds=2, constrained=False, progress=False)


def _other_inputs(sample):
    """(name, data, sfm, what the warning names) of reruns whose inputs differ from ``sample``'s."""
    other_file = make_binary_sfm(len(sample.data), seed=4)
    data = sample.data.assign(y2=(sample.data["z1"] > 0).astype(float))
    other_z = SFM(x="x", x0=0, x1=1, z=["z1"], w=["z2", "w1", "w2"], y="y")
    return [("another outcome column", data, sample.sfm.with_outcome("y2"), "data, sfm"),
            ("other outcome values", sample.data.assign(y=1.0 - sample.data["y"]), sample.sfm, "data"),
            ("another file of the same length", other_file.data, other_file.sfm, "data"),
            ("other Z", sample.data, other_z, "sfm")]


def test_frontier_rerun_on_other_inputs_gives_a_fresh_runs_numbers(tmp_path):
    sample = make_binary_sfm(300, seed=3)
    first = frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **RESUME).runs
    for name, data, sfm, changed in _other_inputs(sample):
        with pytest.warns(UserWarning, match=rf"holds frontier results of other {changed}; they are computed again"):
            rerun = frontier(data, sfm, "none", out_dir=tmp_path, **RESUME).runs
        fresh = frontier(data, sfm, "none", **RESUME).runs
        pd.testing.assert_frame_equal(rerun, fresh, check_dtype=False, obj=name)
        assert not np.allclose(rerun["auc"], first["auc"]), name
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "runs.csv"), fresh, check_dtype=False, obj=name)
        with pytest.warns(UserWarning, match="computed again"):  # back to the first inputs
            frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **RESUME)


def test_frontier_rerun_on_the_same_inputs_resumes_without_computing(tmp_path, recwarn):
    sample = make_binary_sfm(300, seed=3)
    first = frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **RESUME).runs
    steps = sorted((tmp_path / "runs").glob("*-seed*.json"))
    written = [step.stat().st_mtime_ns for step in steps]
    # The same content in a new frame (extra columns, another index) is the same input.
    same = sample.data.assign(extra=1).set_index(sample.data.index + 1000)
    resumed = frontier(same, sample.sfm, "none", out_dir=tmp_path, **RESUME).runs
    assert [step.stat().st_mtime_ns for step in steps] == written  # nothing computed: every run came from its file
    pd.testing.assert_frame_equal(resumed, first, check_dtype=False)
    assert not [w for w in recwarn if "computed again" in str(w.message)]
    (tmp_path / "runs" / KEY_FILE).unlink()  # runs without their key are not trusted
    with pytest.warns(UserWarning, match=r"holds frontier results of other data, fairpath, .*sfm, step, step_version; they are computed again"):
        frontier(sample.data, sample.sfm, "none", out_dir=tmp_path, **RESUME)
    assert [step.stat().st_mtime_ns for step in steps] != written


@pytest.mark.filterwarnings("ignore:.*bootstrap draws left some")
def test_frontier_on_threads_and_on_a_dask_local_cluster_equals_the_one_thread_run():
    distributed = pytest.importorskip("distributed")
    tiny = make_binary_sfm(400, seed=5)
    # The constrained points (minutes) are left out: they run through the same task function.
    kwargs = {"repeats": 2, "engine": "linear", "learner": LogisticRegression(), "n_boot": 10, "progress": False,
              "seed": 3, "constrained": False}
    one = frontier(tiny.data, tiny.sfm, "ZW", **kwargs).runs
    threads = frontier(tiny.data, tiny.sfm, "ZW", n_jobs=2, **kwargs).runs
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = frontier(tiny.data, tiny.sfm, "ZW", scheduler=client, **kwargs).runs
    assert list(one["point"]) == ["adapt ZW", "adapt ZW", "unconstrained", "unconstrained"]
    # the repeats are seeded by SeedSequence children of the seed, so seeds 3 and 4 share no repeat
    assert list(one["seed"]) == [child_seed(3, REPEATS, 0), child_seed(3, REPEATS, 1)] * 2 and one["auc"].nunique() == 4
    assert not set(one["seed"]) & set(frontier(tiny.data, tiny.sfm, "ZW", **{**kwargs, "seed": 4}).runs["seed"])
    pd.testing.assert_frame_equal(threads, one)
    pd.testing.assert_frame_equal(on_dask, one)


def test_spreads_are_shown_only_over_two_or_more_repeats():
    from fairpath.repair._frontier import FrontierResult

    runs = pd.DataFrame({"point": ["adapt none"] * 3 + ["unconstrained"], "kind": ["adaptation"] * 3 + ["unconstrained"],
                         "bn_set": ["none"] * 3 + ["-"], "seed": [0, 1, 2, 0], "spm": [0.01, 0.03, 0.02, 0.2],
                         "ippm": [0.08, 0.09, 0.07, 0.01], "auc": [0.71, 0.72, 0.70, 0.72]})
    result = FrontierResult(runs=runs, settings={"repeats": 3, "quantile": 0.68})
    lines = result.summary().splitlines()
    assert "SPM 0.020 ± 0.010" in lines[1] and "(sd over n = 3 repeats)" in lines[1]
    assert "±" not in lines[2] and "SPM 0.200" in lines[2] and "(n = 1 repeat: no spread)" in lines[2]
    top, bottom = result.plot().axes
    assert top.containers[0].has_xerr and top.containers[0].has_yerr
    assert not top.containers[1].has_xerr and not top.containers[1].has_yerr
    # the legend sits under the lower panel's axis label (it covered frontier points inside the top panel)
    assert top.get_legend() is None and bottom.get_legend().get_texts()[1].get_text() == "unconstrained (n = 1 repeat: no spread)"


def test_each_frontier_point_has_its_own_colour_and_marker_and_one_seed_shows_no_spread():
    from fairpath.repair._frontier import FrontierResult
    from fairpath.repair._report import frontier_section, frontier_table

    points = [f"adapt {b}" for b in ("none", "Z", "W", "ZW")] + ["unconstrained"] + [f"constrained {b}" for b in ("none", "Z", "W", "ZW")]
    runs = pd.DataFrame({"point": points, "kind": ["adaptation"] * 4 + ["unconstrained"] + ["constrained"] * 4, "bn_set": ["x"] * 9,
                         "seed": 0, "spm": np.linspace(0, 0.2, 9), "ippm": np.linspace(0.1, 0, 9), "auc": np.linspace(0.6, 0.8, 9)})
    result = FrontierResult(runs=runs, settings={"repeats": 1, "quantile": 0.68})
    top, bottom = result.plot().axes
    looks = {(line.get_color(), line.get_marker()) for line in top.get_lines()}
    assert len(looks) == 9  # nine points, nine looks (before: every adaptation point a circle, colours cycling)
    assert "1 seed;" in top.get_title() and "seeds" not in top.get_title()
    assert "outcome" not in bottom.get_xlabel() and "difference in the share" in bottom.get_xlabel() and "E[Y]" in top.get_ylabel()
    table = frontier_table(result)
    assert table.loc[0, "SPM (mean ± sd)"] == "+0.0000" and not table.drop(columns="point").astype(str).apply(lambda c: c.str.contains("±")).any().any()
    section = frontier_section(result)
    assert "1 seed;" in section.text and "one seed: no spread" in section.text and "Means of one seed" in section.tables[0][1]
