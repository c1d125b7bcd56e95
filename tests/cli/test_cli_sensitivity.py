"""``--sensitivity`` and ``--benchmark`` of ``fairpath decompose`` and ``fairpath audit``: the bounds printed and saved,
the same numbers as the API, and bad values refused with one error line naming the flag."""

from __future__ import annotations

import json
import re
import warnings

import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm

SFM_FLAGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    sample = make_binary_sfm(1000, seed=5)
    path = tmp_path_factory.mktemp("data") / "sample.csv"
    sample.data.assign(oracle=sample.outcome_mean(sample.data)).to_csv(path, index=False)
    return path


def test_decompose_prints_and_saves_the_bounds_of_the_api(csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["decompose", str(csv_path), *SFM_FLAGS, "--learner", "linear", "--n-rep", "1", "--seed", "2", "--quiet",
                 "--sensitivity", "0.04,0.02", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "confounding strength cf_y = 0.04, cf_d = 0.02, rho = 1" in printed and "robustness value" in printed
    saved = pd.read_csv(out / "sensitivity" / "result.csv")
    from fairpath.causal import SFM, decompose

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api = decompose(pd.read_csv(csv_path), SFM(x="x", x0=0, x1=1, z=["z1", "z2"], w=["w1", "w2"], y="y"), learner="linear",
                        n_rep=1, seed=2, progress=False).sensitivity(cf_y=0.04, cf_d=0.02).to_frame()
    pd.testing.assert_series_equal(saved["ci_low"], api["ci_low"], rtol=1e-9)
    assert "How strong would a hidden confounder have to be?" in (out / "report.html").read_text()


def test_audit_benchmarks_columns_and_prints_the_verdicts_robustness(csv_path, tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["audit", str(csv_path), *SFM_FLAGS, "--predictor", "oracle", "--bn", "SE", "--learner", "linear", "--n-rep", "1",
                 "--out", str(out), "--quiet", "--sensitivity", "0.03,0.03", "--benchmark", "z1"]) == 0
    printed = capsys.readouterr().out
    assert "Cookbook verdicts: the confounding strength that would change each" in printed
    assert "as strong as z1:" in printed and "as strong as z2" not in printed
    payload = json.loads((out / "sensitivity" / "result.json").read_text())
    assert {row["column"] for row in payload["benchmarks"]} == {"z1"}
    assert {row["predictor"] for row in payload["verdicts"]} == {"oracle"}
    assert "Would a hidden confounder change a verdict?" in (out / "report.html").read_text()


@pytest.mark.parametrize(("command", "values", "message"), [
    ("decompose", "0.03", "--sensitivity takes two shares CF_Y,CF_D such as 0.03,0.03; got '0.03'"),
    ("decompose", "1,0.1", r"--sensitivity cf_y must lie in \[0, 1\), got 1"),
    ("audit", "0.1,nan", "--sensitivity cf_d must lie in"),
    ("audit", "a,0.1", "--sensitivity cf_y must be a number, got 'a'"),
])
def test_bad_strengths_are_refused_naming_the_flag(csv_path, tmp_path, capsys, command, values, message):
    extra = ["--predictor", "oracle", "--out", str(tmp_path / "o")] if command == "audit" else []
    with pytest.raises(SystemExit) as stop:
        main([command, str(csv_path), *SFM_FLAGS, *extra, "--sensitivity", values])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("fairpath: error:")]
    assert len(lines) == 1 and re.search(message, lines[0]), err


def test_benchmark_without_sensitivity_and_bootstrap_are_refused(csv_path, tmp_path, capsys):
    assert main(["decompose", str(csv_path), *SFM_FLAGS, "--benchmark"]) != 0
    assert "--benchmark shows confounders as strong as observed columns beside the bounds of --sensitivity" in capsys.readouterr().err
    assert main(["decompose", str(csv_path), *SFM_FLAGS, "--sensitivity", "0.1,0.1", "--benchmark", " ", "--learner", "linear",
                 "--n-rep", "1", "--quiet"]) != 0
    assert "--benchmark names no column" in capsys.readouterr().err
    assert main(["decompose", str(csv_path), *SFM_FLAGS, "--sensitivity", "0.1,0.1", "--bootstrap", "50"]) != 0
    assert "--sensitivity takes its sampling error from the influence function" in capsys.readouterr().err
