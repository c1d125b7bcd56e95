"""The audit of every level of X: the Cookbook over contrasts × pathways, per-contrast audits, verdicts and the report."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from fairpath.causal import SFM
from fairpath.cli import main
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm
from fairpath.parity import AuditResult, audit, holm
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
    assert isinstance(audited, AuditResult) and audited.contrasts == ["one", "two"]
    tests = audited.cookbook.tests
    assert set(tests["contrast"]) == {"one", "two"} and len(tests) == 2 * 3 * 2
    for predictor, rows in tests.groupby("predictor"):
        assert len(rows) == 6
        assert np.allclose(rows["p_holm"], holm(rows["p_value"]))  # Holm over 3 pathways × 2 contrasts
    assert audited.cookbook.multiplicity == "Holm over the 6 contrast × pathway tests of each predictor"
    assert audited.status == {"bayes": "SUCCESS", "w_only": "FAIL"}


def test_each_contrast_audit_is_the_binary_audit_with_the_family_p_values(audited):
    for name, contrast in audited.audits.items():
        assert contrast.sfm.x1 == name and contrast.sfm.x0 == "ref"
        family = audited.cookbook.tests
        mine = family[family["contrast"] == name].reset_index(drop=True)
        assert np.array_equal(contrast.cookbook.tests["p_holm"], mine["p_holm"])
        # predictive parity on the pair's rows only
        parity = contrast.parity["bayes"]
        assert parity.n == contrast.decomposition.counts["n"]
    assert audited.audits["one"].status["w_only"] in ("SUCCESS", "FAIL")


def test_the_verdicts_name_each_violation_by_contrast_with_its_p(audited):
    line = audited.verdict_lines()[1]
    assert line.startswith("w_only: FAIL under BN = {DE, IE, SE}: a violation is shown at α = 0.05 in ")
    assert "contrast × pathway tests: one: " in line and "Holm p" in line
    cells = audited.verdict_cells("w_only")
    assert list(cells.index) == ["one", "two"] and list(cells.columns) == [f"{p}: Ctf(ŷ) − Ctf(y)" for p in ("DE", "IE", "SE")]
    tests = audited.cookbook.tests.set_index(["predictor", "contrast", "pathway"])
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
    payload = json.loads(paths["result"].read_text())
    assert set(payload["contrasts"]) == {"one", "two"} and payload["status"] == {"bayes": "SUCCESS", "w_only": "FAIL"}
    assert payload["cookbook"]["multiplicity"].startswith("Holm over the 6")


# -- a contrast that is not estimable ---------------------------------------------------------------------
def _separated_data():
    """Three levels; the mediator ``sep`` is the indicator of level ``two`` (its contrast is not estimable), and
    ``two_only`` is the Bayes predictor plus a direct effect of level two alone."""
    sample = make_multilevel_sfm(3000, seed=5, levels=3)
    data = sample.data.assign(x=sample.data["x"].map({0: "ref", 1: "one", 2: "two"}), sep=(sample.data["x"] == 2).astype(float))
    data["bayes"] = sample.outcome_mean(sample.data)
    data["two_only"] = data["bayes"] + 0.8 * data["sep"]
    return data, SFM(x="x", x0="ref", x1=None, z=sample.sfm.z, w=[*sample.sfm.w, "sep"], y="y")


@pytest.fixture(scope="module")
def separated():
    data, sfm = _separated_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(data, sfm, ["bayes", "two_only"], "DE,IE,SE", n_boot=30, seed=2, margin=5.0, progress=False)


def test_a_contrast_not_estimable_is_left_out_of_the_holm_family_and_drives_no_verdict(separated):
    tests = separated.cookbook.tests
    assert separated.decomposition.not_estimable.keys() == {"two"}
    left_out = tests[tests["contrast"] == "two"]
    assert (left_out["verdict"] == "not estimable").all() and left_out["p_holm"].isna().all()
    assert not left_out["rejected"].any() and not left_out["equivalent"].any()
    assert left_out["claim"].str.startswith("Not estimable (contrast 'two' is not estimable: 100% of its rows have a "
                                            "share-balanced propensity outside [0.01, 0.99]): left out of the Holm family").all()
    for _, rows in tests[tests["contrast"] == "one"].groupby("predictor"):
        assert np.allclose(rows["p_holm"], holm(rows["p_value"]))  # Holm over the 3 tests of the estimable contrast
    assert separated.cookbook.multiplicity == ("Holm over the 3 estimable contrast × pathway tests of each predictor; not estimable "
                                                "ones left out")
    assert separated.cookbook.estimable  # the estimable contrast may still be certified
    # the direct effect of level two alone is shown on its marginal interval, but the contrast is not estimable: no FAIL
    direct = left_out.set_index(["predictor", "pathway"]).loc[("two_only", "DE")]
    assert direct["p_value"] < 1e-6
    assert separated.status == {"bayes": "SUCCESS", "two_only": "SUCCESS"}
    assert separated.audits["two"].status == {"bayes": "NOT ESTIMABLE", "two_only": "NOT ESTIMABLE"}
    assert not separated.audits["two"].cookbook.estimable and separated.audits["one"].cookbook.estimable


def test_the_verdicts_matrix_and_json_name_the_contrast_left_out(separated, tmp_path):
    reason = ("Not estimable (contrast 'two' is not estimable: 100% of its rows have a share-balanced propensity outside "
              "[0.01, 0.99]): left out of the Holm family, so it shows nothing.")
    for line in separated.verdict_lines():
        assert line.endswith(f"this is absence of evidence, not a proof of compliance. {reason}")
    assert separated.audits["two"].verdict_line("two_only") == (
        f"two_only: NOT ESTIMABLE under BN = {{DE, IE, SE}}: no test is estimable, so nothing is shown or certified. {reason}")
    cells = separated.verdict_cells("two_only")
    assert list(cells.loc["two"]) == [("not estimable", "na")] * 3 and all(tone != "na" for _, tone in cells.loc["one"])
    note = ("contrast 'two' is NOT ESTIMABLE (100% of its rows have a share-balanced propensity outside [0.01, 0.99]): left out "
            "of the family, so it has no simultaneous interval, adjusted p or Cookbook test")
    assert note in separated.notes and f"note: {note}" in separated.summary()
    assert not any("weak positivity" in n for n in separated.notes if n.startswith("two:"))  # not estimable, not "weak"
    paths = separated.save(tmp_path)
    page = paths["report"].read_text()
    assert page.count('<td class="tone-na">not estimable</td>') == 3 * 2 + 4  # two predictors' DE, IE, SE; the outcome's matrix
    assert "not estimable: left out of the Holm family (see the notes)" in page
    payload = json.loads(paths["result"].read_text())
    assert payload["status"] == {"bayes": "SUCCESS", "two_only": "SUCCESS"} and note in payload["notes"]
    assert payload["contrasts"]["two"]["status"] == {"bayes": "NOT ESTIMABLE", "two_only": "NOT ESTIMABLE"}
    assert {t["verdict"] for t in payload["cookbook"]["tests"] if t["contrast"] == "two"} == {"not estimable"}


def test_fail_on_violation_does_not_exit_3_for_a_contrast_not_estimable(tmp_path, capsys):
    """The only violation shown (two_only's direct effect) lies in the contrast that is not estimable: exit 0, not 3."""
    data, _ = _separated_data()
    data.to_csv(tmp_path / "data.csv", index=False)
    status = main(["audit", str(tmp_path / "data.csv"), "--x", "x", "--x0", "ref", "--z", "z1,z2", "--w", "w1,w2,sep", "--y", "y",
                   "--predictor", "two_only", "--bn", "DE,IE,SE", "--learner", "linear", "--bootstrap", "20", "--n-rep", "1",
                   "--quiet", "--out", str(tmp_path / "out"), "--fail-on", "violation"])
    printed = capsys.readouterr()
    assert status == 0 and "failing" not in printed.err
    assert "two_only: SUCCESS under BN = {DE, IE, SE}" in printed.out and "contrast 'two' is not estimable" in printed.out


def test_a_loop_over_the_contrasts_runs_on_a_binary_audit_too():
    sample = make_binary_sfm(800, seed=2)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        binary = audit(data, sample.sfm, ["oracle"], "SE", learner="linear", n_folds=2, n_boot=20, seed=1, progress=False)
    assert binary.contrasts == ["1"] and binary.audits == {"1": binary.for_contrast()} and binary.for_contrast("1") is binary.for_contrast()
    assert {name: a.parity["oracle"].ippm.estimate for name, a in binary.audits.items()} == {
        "1": binary.for_contrast().parity["oracle"].ippm.estimate}
