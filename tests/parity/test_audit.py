"""The audit result, its files, the `fairpath audit` command, and COMPAS (the paper's court example)."""

import json

import numpy as np
import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity import AuditResult, audit
from fairpath.parity._oracles import oracle_predictors
from fairpath.parity._report import SECTION_IDS


@pytest.fixture(scope="module")
def synthetic():
    sample = make_binary_sfm(1200, seed=5)
    data = sample.data.join(oracle_predictors(sample, seed=5)[["oracle", "z_only"]])
    return sample, data


@pytest.fixture(scope="module")
def result(synthetic):
    sample, data = synthetic
    return audit(data, sample.sfm, ["oracle", "z_only"], "SE", learner="linear", n_boot=30, seed=1, progress=False)


def test_summary_opens_with_the_verdicts_then_judges_predictive_parity(result):
    lines = result.summary().splitlines()
    oracle = result.cookbook.tests.query("predictor == 'oracle' and verdict == 'violation'")
    assert lines[0].startswith("oracle: FAIL under BN = {SE}: a violation is shown at α = 0.05: ")
    assert all(f"Ctf-{p}(oracle) = {100 * e:+.1f} pp" in lines[0] for p, e in zip(oracle["pathway"], oracle["estimate"]))
    z_only = result.cookbook.tests.query("predictor == 'z_only'")
    assert lines[1] == (f"z_only: SUCCESS under BN = {{SE}}: no violation is shown (smallest Holm p = {z_only['p_holm'].min():.3g} "
                        "≥ α = 0.05); this is absence of evidence, not a proof of compliance.")
    ippm = result.for_contrast().parity["oracle"].ippm
    assert lines[2] == (f"Predictive parity of oracle: iPPM = {100 * ippm.estimate:+.1f} pp [95% CI {100 * ippm.ci_low:+.1f}, "
                        f"{100 * ippm.ci_high:+.1f} pp] (0: equally calibrated in both groups).")
    assert lines[3].startswith("Predictive parity of z_only: iPPM = ")
    assert lines[4].startswith("BN = {SE} removes DE, IE") and "Theorem 1" in lines[4] and "(observed)" in lines[4]
    assert "y (observed): TV (" in result.summary()
    assert "Predictive parity of oracle: iPPM" in (result._repr_html_())


def test_result_combines_decomposition_parity_and_cookbook(result):
    assert isinstance(result, AuditResult)
    assert result.decomposition.outcomes == ["y", "oracle", "z_only"]
    assert set(result.for_contrast().parity) == {"oracle", "z_only"}
    assert result.status == {"oracle": "FAIL", "z_only": "SUCCESS"}
    frame = result.to_frame()
    assert {"ippm", "spm", "auc", "ctfde", "tv"} <= set(frame["measure"])
    tv = frame[(frame["subject"] == "oracle") & (frame["measure"] == "tv")]["estimate"].item()
    spm = frame[(frame["subject"] == "oracle") & (frame["measure"] == "spm")]["estimate"].item()
    assert tv == pytest.approx(spm, abs=1e-10)  # TV of a predictor is its SPM
    assert "Business Necessity Cookbook" in result.summary()
    assert repr(result).startswith("AuditResult(predictors=['oracle', 'z_only'], bn=['SE'], contrasts=1, status=") and "\n" not in repr(result)
    html = result._repr_html_()
    assert "data:image/png;base64," in html and "FAIL" in html and "SUCCESS" in html
    assert len(result.plot().axes) == 4


def test_save_writes_report_json_and_tables(result, tmp_path):
    paths = result.save(tmp_path / "out")
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"report.html", "result.json", "result.csv",
                                                             "cookbook.csv", "ppm_bins.csv", ".fairpath-outputs.json"}
    assert json.loads((tmp_path / "out" / ".fairpath-outputs.json").read_text())["files"] == sorted(
        ["report.html", "result.json", "result.csv", "cookbook.csv", "ppm_bins.csv"])  # what the next save replaces
    payload = json.loads(paths["result"].read_text())
    assert payload["status"] == {"oracle": "FAIL", "z_only": "SUCCESS"}
    assert payload["cookbook"]["bn"] == ["SE"]
    assert payload["settings"]["counts"]["n"] == 1200
    assert "numpy" in payload["settings"]["versions"]
    cookbook = pd.read_csv(paths["cookbook"])
    assert len(cookbook) == 6 and {"verdict", "claim", "p_holm"} <= set(cookbook.columns)
    html = paths["report"].read_text()
    for section_id in SECTION_IDS:
        assert f'id="{section_id}"' in html


def test_predictor_identical_to_y_is_allowed_and_reported(synthetic):
    sample, data = synthetic
    with pytest.warns(UserWarning, match="identical to the outcome"):
        same = audit(data.assign(copy_of_y=data["y"]), sample.sfm, ["copy_of_y"], "DE,IE,SE", learner="linear",
                     n_boot=20, progress=False)
    assert same.status == {"copy_of_y": "SUCCESS"}
    assert any("identical to the outcome 'y'" in note for note in same.notes)
    assert np.allclose(same.cookbook.tests["estimate"], 0, atol=1e-12)


def test_audit_command_with_a_config_file(synthetic, tmp_path, capsys):
    sample, data = synthetic
    data.assign(group=np.where(data["x"] == 1, "B", "A")).to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "audit.toml").write_text(
        'x = "group"\nx0 = "A"\nx1 = "B"\nz = ["z1", "z2"]\nw = ["w1", "w2"]\ny = "y"\n'
        'predictors = ["z_only"]\nlearner = "linear"\nn_boot = 20\n'
    )
    code = main(["audit", str(tmp_path / "data.csv"), "--config", str(tmp_path / "audit.toml"),
                 "--bn", "SE", "--predictor", "oracle", "--out", str(tmp_path / "report"), "--margin", "0.1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "oracle: FAIL" in printed and f"report: {tmp_path / 'report' / 'report.html'}" in printed
    assert printed.splitlines()[0].startswith("oracle: FAIL under BN = {SE}: a violation is shown at α = 0.05: ")
    assert printed.splitlines()[1].startswith("Predictive parity of oracle: iPPM = ")
    payload = json.loads((tmp_path / "report" / "result.json").read_text())
    assert payload["predictors"] == ["oracle"]  # the flag replaces the file's list
    assert payload["settings"]["margin"] == 0.1


def test_audit_command_reports_bad_input(tmp_path, capsys):
    (tmp_path / "audit.toml").write_text('x = "group"\nbns = "SE"\n')
    assert main(["audit", "--config", str(tmp_path / "audit.toml")]) == 2
    assert "unknown key 'bns'" in capsys.readouterr().err
    assert main(["audit", "missing.csv", "--x", "g", "--x0", "a", "--x1", "b", "--y", "y", "--predictor", "p",
                 "--bn", "SE,XY", "--out", str(tmp_path)]) == 2
    assert "'XY' is not a pathway" in capsys.readouterr().err


def test_compas_court_example_northpointe_violates_direct_and_indirect(shared_dir):
    data = pd.read_csv(shared_dir / "data" / "compas_sp2pp.csv").assign(score=lambda d: d["decile_score"] / 10)
    from fairpath.datasets import COMPAS_SFM

    result = audit(data, COMPAS_SFM, ["northpointe", "score"], "SE", seed=23, n_boot=100, progress=False)
    tests = result.cookbook.tests.set_index(["predictor", "pathway"])
    assert tests.loc[("northpointe", "DE"), "verdict"] == "violation"
    assert tests.loc[("northpointe", "IE"), "verdict"] == "violation"
    assert tests.loc[("northpointe", "DE"), "doctrine"] == "disparate treatment"
    assert result.status["northpointe"] == "FAIL"
    assert result.for_contrast().parity["score"].ippm.estimate == pytest.approx(0.018, abs=0.002)
    assert len(result.for_contrast().parity["score"].bins) == 9
