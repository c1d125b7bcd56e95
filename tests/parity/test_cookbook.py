"""The Business Necessity Cookbook on a synthetic SFM where each predictor's compliance is known."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairpath._stats import p_clause
from fairpath.causal import decompose
from fairpath.datasets import make_binary_sfm
from fairpath.parity import DOCTRINE, business_necessity_cookbook, holm, parse_bn, tost_p_value
from fairpath.parity._oracles import ORACLE_SATISFIES, oracle_predictors

BN_SETS = [(), ("SE",), ("IE", "SE"), ("DE", "IE", "SE")]


@pytest.fixture(scope="module")
def fitted():
    # The logistic learner is right for E[Y | x, z, w] of this model and fast; the study script
    # (benchmarks/study_cookbook_verdicts.py) measures how often the verdicts are right over seeds.
    sample = make_binary_sfm(3000, seed=4)
    predictors = oracle_predictors(sample, seed=4)
    data = sample.data.join(predictors)
    # One cross-fitting split: the paired-difference test below checks a split's per-row identities.
    return decompose(data, sample.sfm, predictors=list(predictors.columns), learner="linear", seed=4, n_rep=1), sample


@pytest.mark.parametrize("bn", BN_SETS, ids=lambda bn: "+".join(bn) or "empty")
def test_each_predictor_passes_exactly_its_own_bn_set(fitted, bn):
    decomposition, _ = fitted
    result = business_necessity_cookbook(decomposition, bn)
    expected = {p: "SUCCESS" if satisfied == bn else "FAIL" for p, satisfied in ORACLE_SATISFIES.items()}
    assert {p: o["status"] for p, o in result.overall.items()} == expected


def test_tested_quantities_are_the_paired_difference_in_bn_and_the_effect_outside(fitted):
    decomposition, _ = fitted
    result = business_necessity_cookbook(decomposition, "SE")
    tests = result.tests.set_index(["predictor", "pathway"])
    in_bn = decomposition.difference("ctfse", outcome="oracle")
    assert tests.loc[("oracle", "SE"), "estimate"] == pytest.approx(in_bn.estimate)
    assert tests.loc[("oracle", "SE"), "se"] == pytest.approx(in_bn.se)
    outside = decomposition.estimate("ctfde", outcome="oracle")
    assert tests.loc[("oracle", "DE"), "estimate"] == pytest.approx(outside.estimate)
    assert tests.loc[("oracle", "DE"), "null_hypothesis"] == "Ctf-DE(oracle) = 0"
    assert tests.loc[("oracle", "SE"), "null_hypothesis"] == "Ctf-SE(oracle) = Ctf-SE(y)"
    # the SE is that of the paired per-row differences (both columns share the rows), by hand, and
    # it is below the SE of two independent estimates since the two columns' contributions correlate
    paired = decomposition.for_contrast().fits["oracle"].rows["ctfse"] - decomposition.for_contrast().fits["y"].rows["ctfse"]
    assert in_bn.se == pytest.approx(paired.std(ddof=1) / np.sqrt(len(paired)), rel=1e-12)
    independent = np.hypot(decomposition.estimate("ctfse", "oracle").se, decomposition.estimate("ctfse").se)
    assert in_bn.se < independent
    # doctrine and BN permission on every row
    assert (result.tests["doctrine"] == result.tests["pathway"].map(DOCTRINE)).all()
    assert list(result.tests.loc[result.tests["predictor"] == "noise", "in_bn"]) == [False, False, True]


def test_holm_adjusted_p_values_within_each_predictor(fitted):
    decomposition, _ = fitted
    result = business_necessity_cookbook(decomposition, "IE,SE")
    for _, rows in result.tests.groupby("predictor"):
        np.testing.assert_allclose(rows["p_holm"], holm(rows["p_value"]))
        assert (rows["p_holm"] >= rows["p_value"] - 1e-15).all()


def test_holm_matches_the_step_down_definition():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.001, 0.9]), [1.0, 0.003, 1.0])


def test_tost_p_value_is_the_larger_one_sided_p():
    assert tost_p_value(0.0, 0.01, 0.05) == pytest.approx(stats.norm.sf(5))
    assert tost_p_value(0.04, 0.01, 0.05) == pytest.approx(stats.norm.cdf(-1))
    assert tost_p_value(0.06, 0.01, 0.05) > 0.5
    assert tost_p_value(0.0, 0.0, 0.05) == 0.0 and tost_p_value(0.1, 0.0, 0.05) == 1.0


def test_equivalence_margin_certifies_and_claims_say_what_they_show(fitted):
    decomposition, _ = fitted
    plain = business_necessity_cookbook(decomposition, "SE")
    z_only = plain.tests[plain.tests["predictor"] == "z_only"]
    assert set(z_only["verdict"]) == {"no evidence of violation"}
    assert all("absence of evidence, not a proof" in claim for claim in z_only["claim"])
    assert "not a proof" in plain.overall["z_only"]["claim"]

    certified = business_necessity_cookbook(decomposition, "SE", margin=0.06)
    z_only = certified.tests[certified.tests["predictor"] == "z_only"]
    assert set(z_only["verdict"]) == {"certified"}
    assert all(claim.startswith("Certified (equivalence test") for claim in z_only["claim"])
    assert certified.overall["z_only"] == {"status": "SUCCESS", "claim": "certified on every pathway within ±0.06",
                                            "reasons": list(z_only["claim"])}
    # the oracle transmits Ctf-DE ≈ 0.12 ≠ 0: shown as a violation, with the pathway named in the reasons
    oracle = certified.overall["oracle"]
    assert oracle["status"] == "FAIL"
    assert any(reason.startswith("DE (disparate treatment)") for reason in oracle["reasons"])


def test_result_exports(fitted):
    decomposition, _ = fitted
    result = business_necessity_cookbook(decomposition, ["se", "IE"], predictors=["oracle", "noise"])
    assert result.bn == ("IE", "SE")
    payload = json.loads(result.to_json())
    assert payload["multiplicity"].startswith("Holm")
    assert set(payload["overall"]) == {"oracle", "noise"}
    assert len(payload["tests"]) == 6
    text = result.summary()
    assert "BN = {IE, SE}" in text and "Holm" in text
    assert len(result.plot().axes) == 3
    frame = result.to_frame()
    assert list(frame["subject"]) == ["oracle"] * 3 + ["noise"] * 3 and (frame["level"] == 0.95).all()
    # in BN the tested quantity is the paired difference to the outcome's effect
    assert list(frame["measure"][:3]) == ["ctfde", "ctfie_difference", "ctfse_difference"]
    pd.testing.assert_series_equal(frame["estimate"], result.tests["estimate"])
    assert repr(result).startswith("CookbookResult(bn=['IE', 'SE'], alpha=0.05") and "\n" not in repr(result)


def test_parse_bn_orders_and_accepts_the_empty_set():
    assert parse_bn("SE, de") == ("DE", "SE")
    assert parse_bn("none") == parse_bn(None) == parse_bn([]) == ()


def test_verdict_lines_print_the_p_value_of_their_claim(fitted):
    # A certified row prints the equivalence test's Holm p (not the difference test's), a violation
    # or a non-rejection the difference test's; terminal, HTML table and JSON agree.
    from fairpath.parity._report import _cookbook_table

    decomposition, _ = fitted
    result = business_necessity_cookbook(decomposition, "SE", margin=0.06)
    tests = result.tests.set_index(["predictor", "pathway"])
    certified = tests.loc[("z_only", "DE")]
    violation = tests.loc[("oracle", "DE")]
    assert certified["verdict"] == "certified" and violation["verdict"] == "violation"
    assert certified["tost_p_holm"] != pytest.approx(certified["p_holm"])
    assert (certified["verdict_p_name"], certified["verdict_p"]) == ("TOST Holm p", certified["tost_p_holm"])
    assert (violation["verdict_p_name"], violation["verdict_p"]) == ("Holm p", violation["p_holm"])
    line = f"certified ({p_clause('TOST Holm p', certified['tost_p_holm'])})"
    text = result.summary()
    assert line in text and f"violation ({p_clause('Holm p', violation['p_holm'])})" in text
    assert f": certified (Holm p = {certified['p_holm']:.3g})" not in text
    table = _cookbook_table(result)
    assert line in list(table["verdict"])
    record = next(r for r in json.loads(result.to_json())["tests"] if r["predictor"] == "z_only" and r["pathway"] == "DE")
    assert record["verdict_p"] == pytest.approx(certified["tost_p_holm"]) and record["verdict_p_name"] == "TOST Holm p"


def test_a_decomposition_without_overlap_certifies_nothing():
    sample = make_binary_sfm(2000, seed=6)
    data = sample.data.assign(w1=5.0 * sample.data["x"] + 0.01 * sample.data["w1"], copy=sample.data["y"])
    with pytest.warns(UserWarning, match="not estimable"):
        decomposition = decompose(data, sample.sfm, predictors=["copy"], seed=1, learner="linear",
                                  measures=["ctfde", "ctfie", "ctfse"])
    # A copy of Y transmits exactly Y's effects (paired differences are exactly 0): certified with
    # overlap, but here the effects are not estimable, so nothing is certified.
    result = business_necessity_cookbook(decomposition, "DE,IE,SE", margin=0.05)
    assert not result.estimable and set(result.tests["verdict"]) == {"no evidence of violation"}
    assert all("flagged not estimable" in claim for claim in result.tests["claim"])
    assert "NOT ESTIMABLE" in result.summary() and json.loads(result.to_json())["estimable"] is False
