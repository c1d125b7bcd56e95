"""``fairpath decompose`` end to end: JSON with every measure, settings and counts; the plot."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
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
                 "--y", "y", "--predictor", "score", "--seed", "4", "--json", str(out), "--plot", str(png)])
    assert code == 0
    payload = json.loads(out.read_text())
    contrast = payload["contrasts"]["b"]  # the one contrast, named by --x1
    assert set(contrast["estimates"]) == {"y", "score"}
    assert set(contrast["estimates"]["score"]["ctfse"]) == {"estimate", "se", "ci_low", "ci_high"}
    assert payload["settings"]["seed"] == 4 and payload["counts"]["n"] == 1200
    assert payload["settings"]["n_rep"] == 5  # --n-rep auto (default) on 1200 rows
    assert {"n_x0", "n_x1", "n_trimmed"} <= set(contrast["counts"])
    e = contrast["estimates"]["y"]
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
    local, dask = (json.loads((tmp_path / f"{name}.json").read_text())["contrasts"]["b"]["estimates"] for name in ("local", "dask"))
    assert dask == local and local["y"]["ctfde"]["se"] > 0


def test_debiasing_on_a_dask_scheduler_reads_the_file_as_partitions_and_gives_the_local_numbers(csv_path, tmp_path):
    distributed = pytest.importorskip("distributed")
    args = ["decompose", str(csv_path), "--x", "x", "--x0", "a", "--x1", "b", "--z", "z1,z2", "--w", "w1,w2", "--y", "y",
            "--predictor", "score", "--learner", "gbm", "--seed", "2", "--quiet"]
    assert main([*args, "--json", str(tmp_path / "local.json")]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address, "--json", str(tmp_path / "dask.json")]) == 0
    local, dask = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("local", "dask"))
    estimates = [run["contrasts"]["b"]["estimates"] for run in (dask, local)]
    assert estimates[0] == estimates[1] and estimates[1]["score"]["ctfde"]["se"] > 0
    assert dask["settings"]["n_rep"] == 5  # a small table: five splits, each with its folds on the workers


def test_out_writes_report_and_results_that_open_with_the_finding(csv_path, tmp_path, capsys):
    out = tmp_path / "decomposition"
    assert main(["decompose", str(csv_path), "--x", "x", "--x0", "a", "--x1", "b", "--z", "z1,z2", "--w", "w1,w2", "--y", "y",
                 "--predictor", "score", "--learner", "linear", "--folds", "2", "--n-rep", "1", "--seed", "4", "--quiet",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "result.json").read_text())
    assert results["settings"]["share_outcomes"] == ["y", "score"]  # a 0/1 outcome and a probability: percentage points
    tv = results["contrasts"]["b"]["estimates"]["y"]["tv"]
    finding = (f"y: TV {100 * tv['estimate']:+.2f} pp (95% CI [{100 * tv['ci_low']:+.2f}, {100 * tv['ci_high']:+.2f}] pp, "
               "p < 1e-16) = Ctf-DE ")
    # the terminal and the report open with the finding, before the detail
    assert printed.startswith("Effects of x = b against a, in percentage points") and finding in printed.splitlines()[1]
    report = (out / "report.html").read_text()
    assert html.escape(finding) in report and report.index(html.escape(finding)) < report.index('id="decomposition"')
    assert "Significant (the 95% CI excludes 0): TV" in report and 'id="overlap"' in report
    estimates = pd.read_csv(out / "result.csv")
    assert len(estimates) == 2 * len(results["settings"]["measures"])
    assert estimates.set_index(["subject", "measure"]).loc[("y", "tv"), "estimate"] == pytest.approx(tv["estimate"])
    # what it was computed from: the command as typed (also when main is called from Python), the input's hash
    provenance = results["settings"]["provenance"]
    assert provenance["call"].startswith(f"fairpath decompose {csv_path} --x x --x0 a --x1 b") and provenance["seed"] == 4
    assert provenance["inputs"][0]["name"] == "sample.csv" and len(provenance["inputs"][0]["sha256"]) == 64
    assert provenance["inputs"][0]["sha256"] in report


def test_headline_names_a_non_significant_effect_and_outcome_units():
    from fairpath.causal import decompose

    sample = make_binary_sfm(1200, seed=3)
    data = sample.data.assign(noise=np.random.default_rng(0).normal(size=1200) * 10)  # not a share: no percentage points
    result = decompose(data, sample.sfm, ["noise"], learner="linear", n_folds=2, n_rep=1, seed=1)
    line = next(text for text in result.headline() if text.startswith("noise:"))
    assert "pp" not in line and "not significant: TV, Ctf-DE, Ctf-IE, Ctf-SE (no evidence of an effect" in line
    assert result.headline()[0].startswith("Effects of x = 1 against 0, in percentage points (pp) for outcomes within [0, 1]")
