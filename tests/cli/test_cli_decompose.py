"""``fairpath decompose`` end to end: JSON with every measure, settings and counts; the plot."""

from __future__ import annotations

import json

import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    sample = make_binary_sfm(1200, seed=3)
    data = sample.data.assign(x=sample.data["x"].map({0: "a", 1: "b"}), score=sample.outcome_mean(sample.data))
    path = tmp_path_factory.mktemp("data") / "sample.csv"
    data.to_csv(path, index=False)
    return path


def test_decompose_writes_json_and_plot(csv_path, tmp_path, capsys):
    out, png = tmp_path / "result.json", tmp_path / "bars.png"
    code = main(["decompose", str(csv_path), "--x", "x", "--x0", "a", "--x1", "b", "--z", "z1,z2", "--w", "w1,w2",
                 "--y", "y", "--yhat", "score", "--seed", "4", "--json", str(out), "--plot", str(png)])
    assert code == 0
    payload = json.loads(out.read_text())
    assert set(payload["estimates"]) == {"y", "score"}
    assert set(payload["estimates"]["score"]["ctfse"]) == {"estimate", "se", "ci_low", "ci_high"}
    assert payload["settings"]["seed"] == 4 and payload["counts"]["n"] == 1200
    assert payload["settings"]["n_rep"] == 5  # --n-rep auto (default) on 1200 rows
    assert {"n_x0", "n_x1", "n_trimmed"} <= set(payload["counts"])
    e = payload["estimates"]["y"]
    assert e["tv"]["estimate"] == pytest.approx(e["ctfde"]["estimate"] - e["ctfie"]["estimate"] - e["ctfse"]["estimate"])
    assert png.stat().st_size > 10_000
    assert "y: TV (" in capsys.readouterr().out


def test_numeric_levels_from_the_command_line(tmp_path):
    sample = make_binary_sfm(600, seed=1)
    path = tmp_path / "numeric.csv"
    sample.data.to_csv(path, index=False)
    out = tmp_path / "r.json"
    assert main(["decompose", str(path), "--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2",
                 "--y", "y", "--folds", "3", "--n-rep", "2", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["sfm"]["x1"] == 1 and payload["settings"]["n_rep"] == 2


def test_meddml_refits_on_a_dask_scheduler_give_the_local_numbers(csv_path, tmp_path):
    distributed = pytest.importorskip("distributed")
    args = ["decompose", str(csv_path), "--x", "x", "--x0", "a", "--x1", "b", "--z", "z1,z2", "--w", "w1,w2", "--y", "y",
            "--method", "medDML", "--learner", "linear", "--nboot1", "3", "--nboot2", "20", "--seed", "2", "--quiet"]
    assert main([*args, "--json", str(tmp_path / "local.json")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address, "--json", str(tmp_path / "dask.json")]) == 0
    local, dask = (json.loads((tmp_path / f"{name}.json").read_text())["estimates"] for name in ("local", "dask"))
    assert dask == local and local["y"]["ctfde"]["se"] > 0
