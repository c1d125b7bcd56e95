"""The audit of every level of X: the Cookbook over contrasts × pathways, per-contrast audits, verdicts and the report."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from fairpath.causal import SFM
from fairpath.datasets import make_multilevel_sfm
from fairpath.parity import MultiLevelAudit, audit, holm
from fairpath.report import compact_digits


@pytest.fixture(scope="module")
def audited():
    sample = make_multilevel_sfm(3000, seed=5, levels=3)
    data = sample.data.assign(x=sample.data["x"].map({0: "ref", 1: "one", 2: "two"}))
    data["bayes"] = sample.outcome_mean(sample.data)  # E[Y | x, z, w]: every pathway of Y, nothing more
    data["w_only"] = 0.4 * data["w1"]  # reads the mediator alone: no direct effect, the wrong indirect one
    sfm = SFM(x="x", x0="ref", x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(data, sfm, ["bayes", "w_only"], "DE,IE,SE", n_boot=50, seed=2, progress=False)


def test_the_cookbook_tests_every_contrast_and_adjusts_over_the_family(audited):
    assert isinstance(audited, MultiLevelAudit) and audited.contrasts == ["one", "two"]
    tests = audited.cookbook_.tests_
    assert set(tests["contrast"]) == {"one", "two"} and len(tests) == 2 * 3 * 2
    for predictor, rows in tests.groupby("predictor"):
        assert len(rows) == 6
        assert np.allclose(rows["p_holm"], holm(rows["p_value"]))  # Holm over 3 pathways × 2 contrasts
    assert audited.cookbook_.multiplicity == "Holm over the 6 contrast × pathway tests of each predictor"
    assert audited.status == {"bayes": "SUCCESS", "w_only": "FAIL"}


def test_each_contrast_audit_is_the_binary_audit_with_the_family_p_values(audited):
    for name, contrast in audited.audits_.items():
        assert contrast.sfm.x1 == name and contrast.sfm.x0 == "ref"
        family = audited.cookbook_.tests_
        mine = family[family["contrast"] == name].reset_index(drop=True)
        assert np.array_equal(contrast.cookbook_.tests_["p_holm"], mine["p_holm"])
        # predictive parity on the pair's rows only
        parity = contrast.parity_["bayes"]
        assert parity.n_ == contrast.decomposition_.counts_["n"]
    assert audited.audits_["one"].status["w_only"] in ("SUCCESS", "FAIL")


def test_the_verdicts_name_each_violation_by_contrast_with_its_p(audited):
    line = audited.verdict_lines()[1]
    assert line.startswith("w_only: FAIL under BN = {DE, IE, SE}: a violation is shown at α = 0.05 in ")
    assert "contrast × pathway tests: one: " in line and "Holm p" in line
    cells = audited.verdict_cells("w_only")
    assert list(cells.index) == ["one", "two"] and list(cells.columns) == [f"{p}: Ctf(ŷ) − Ctf(y)" for p in ("DE", "IE", "SE")]
    tests = audited.cookbook_.tests_.set_index(["predictor", "contrast", "pathway"])
    digits = compact_digits(tests.loc["w_only", ["ci_low", "ci_high"]].to_numpy().ravel())
    for contrast in cells.index:
        for pathway, (text, tone) in zip(("DE", "IE", "SE"), cells.loc[contrast]):
            row = tests.loc[("w_only", contrast, pathway)]
            assert text.startswith(f"{row['estimate']:+.{digits}f} [") and tone == ("bad" if row["verdict"] == "violation" else "none")


def test_saving_writes_the_matrix_page_and_every_contrast_audit(audited, tmp_path):
    paths = audited.save(tmp_path)
    assert (tmp_path / "contrasts" / "01-one" / "report.html").exists() and (tmp_path / "contrasts" / "02-two" / "report.html").exists()
    page = paths["report"].read_text()
    assert page.count('class="table matrix"') == 3  # two predictors and the outcome
    assert 'href="contrasts/01-one/report.html"' in page
    payload = json.loads(paths["results"].read_text())
    assert set(payload["contrasts"]) == {"one", "two"} and payload["status"] == {"bayes": "SUCCESS", "w_only": "FAIL"}
    assert payload["cookbook"]["multiplicity"].startswith("Holm over the 6")
