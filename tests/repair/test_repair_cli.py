"""`fairpath repair` and `fairpath frontier` end to end on a small synthetic file."""

import json

import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm

SFM_ARGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--engine", "linear"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repair_cli")
    make_binary_sfm(800, seed=0).data.to_csv(folder / "train.csv", index=False)
    make_binary_sfm(100, seed=1).data.to_csv(folder / "test.csv", index=False)
    return folder


def test_repair_writes_twins_scores_and_summary(files, capsys):
    out = files / "repair"
    code = main(["repair", str(files / "train.csv"), *SFM_ARGS, "--bn", "SE", "--test", str(files / "test.csv"),
                 "--constrained", "--out", str(out)])
    assert code == 0
    summary = json.loads((out / "result.json").read_text())
    assert summary["resolving"] == ["z1", "z2"] and summary["adapted"] == ["w1", "w2", "y"]
    assert summary["tv_adapted_outcome"] < summary["tv_outcome"]
    assert summary["constrained"]["bn"] == ["SE"]
    scores = pd.read_csv(out / "scores.csv")
    assert list(scores.columns) == ["x", "y", "fair_score", "constrained_score"] and len(scores) == 800
    assert len(pd.read_csv(out / "test_scores.csv")) == 100
    twins = pd.read_csv(out / "fair_twins.csv")
    assert {"w1", "w1_twin", "y_twin"} <= set(twins.columns)
    for name in ("adapted_train.csv", "adapted_test.csv", "constrained_path.csv", "constrained_path.png"):
        assert (out / name).exists()
    path = pd.read_csv(out / "constrained_path.csv")
    assert list(path.columns[:7]) == ["subject", "measure", "estimate", "se", "ci_low", "ci_high", "level"]
    assert path["chosen"].any() and {"ctfde", "ctfie", "ctfse", "violation", "auc"} <= set(path["measure"])
    assert "TV of y" in capsys.readouterr().out


def test_repair_with_an_edge_list_that_omits_a_column(files, capsys):
    edges = files / "edges.csv"
    pd.DataFrame({"from": ["x", "z1", "w1"], "to": ["w1", "w1", "y"]}).to_csv(edges, index=False)
    code = main(["repair", str(files / "train.csv"), *SFM_ARGS, "--graph", str(edges), "--out", str(files / "bad")])
    assert code == 2
    assert "omits the used column(s) ['z2', 'w2']" in capsys.readouterr().err


def test_frontier_command(files, capsys):
    out = files / "frontier"
    code = main(["frontier", str(files / "train.csv"), *SFM_ARGS, "--bn-sets", "none,Z", "--repeats", "1",
                 "--no-constrained", "--quiet", "--out", str(out)])
    assert code == 0
    summary = pd.read_csv(out / "result.csv")
    assert list(summary["subject"].unique()) == ["adapt none", "adapt Z", "unconstrained"]
    assert list(summary["measure"].unique()) == ["spm", "ippm", "auc"]
    assert (out / "frontier.png").exists() and (out / "runs.csv").exists()
    assert "SPM" in capsys.readouterr().out


def test_frontier_command_on_a_dask_scheduler_gives_the_local_runs(files, tmp_path):
    distributed = pytest.importorskip("distributed")
    args = ["frontier", str(files / "train.csv"), *SFM_ARGS, "--bn-sets", "Z", "--repeats", "2", "--no-constrained", "--quiet"]
    assert main([*args, "--n-jobs", "2", "--out", str(tmp_path / "threads")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "dask")]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "dask" / "result.csv"), pd.read_csv(tmp_path / "threads" / "result.csv"))


def test_frontier_command_refuses_a_scheduler_with_workers(files, tmp_path, capsys):
    assert main(["frontier", str(files / "train.csv"), *SFM_ARGS, "--repeats", "1", "--scheduler", "tcp://127.0.0.1:1",
                 "--workers", "2", "--out", str(tmp_path)]) == 2
    assert "either a Dask scheduler address or a number of local workers" in capsys.readouterr().err
