"""The verdict sentences: what the BN set implies for predictive parity (Theorem 1) and the iPPM's gain or loss."""

import pytest

from fairpath.datasets import make_binary_sfm
from fairpath.parity import predictive_parity
from fairpath.parity._verdict import bn_parity_sentence, parity_sentence


def _effect(estimate, low, high):
    return {"estimate": estimate, "se": 0.01, "ci_low": low, "ci_high": high, "level": 0.95}


EFFECTS = {"DE": _effect(0.05, 0.02, 0.08), "IE": _effect(-0.01, -0.03, 0.01), "SE": _effect(0.03, 0.01, 0.05)}


def test_every_pathway_in_bn_allows_predictive_parity():
    text = bn_parity_sentence(("DE", "IE", "SE"), "y", EFFECTS, data_label="observed", percent=True)
    assert text.startswith("BN = {DE, IE, SE} keeps every pathway") and "Bayes predictor E[y | x, z, w]" in text


def test_removed_pathways_the_outcome_flows_through_are_named_with_their_effects():
    text = bn_parity_sentence(("SE",), "y", EFFECTS, data_label="observed", percent=True)
    assert text.startswith("BN = {SE} removes DE, IE, and the outcome's own disparity (observed) flows through DE (")
    assert "Ctf-DE(y) = +5.0 pp [95% CI +2.0, +8.0 pp], Ctf-IE(y) = -1.0 pp [95% CI -3.0, +1.0 pp]" in text
    assert "cannot in general be calibrated across groups" in text


def test_removed_pathways_without_a_shown_effect_need_not_cost_predictive_parity():
    text = bn_parity_sentence(("DE", "SE"), "y", EFFECTS, data_label="on the fair twins", percent=False)
    assert text == ("BN = {DE, SE} removes IE, but the outcome's effects there (on the fair twins) are not shown to differ from 0 "
                    "(Ctf-IE(y) = -0.0100 [95% CI -0.0300, +0.0100]), so by Theorem 1 removing them need not cost predictive parity.")


@pytest.fixture(scope="module")
def parities():
    sample = make_binary_sfm(800, seed=1)
    data = sample.data.assign(bayes=sample.outcome_mean(sample.data), w_only=sample.data["w1"])
    return {name: predictive_parity(data, sample.sfm, name, n_bins=5, n_boot=20) for name in ("bayes", "w_only")}


def test_the_ippm_change_is_a_gain_or_a_loss_by_its_distance_from_zero(parities):
    bayes, w_only = parities["bayes"], parities["w_only"]
    change = abs(w_only.ippm.estimate) - abs(bayes.ippm.estimate)
    text = parity_sentence(w_only, percent=True, original=bayes)
    assert text.startswith(f"Predictive parity of w_only: iPPM = {100 * w_only.ippm.estimate:+.1f} pp [95% CI ")
    assert f"{100 * abs(change):.1f} pp {'further from 0, a loss' if change > 0 else 'closer to 0, a gain'} in predictive parity" in text
    assert parity_sentence(bayes, percent=True).endswith("(0: equally calibrated in both groups).")
