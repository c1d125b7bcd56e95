"""Synthetic SCMs: analytic ground truth, counterfactual bookkeeping and reproducibility."""

from __future__ import annotations

import numpy as np
import pytest

from fairpath.datasets import make_appendix_a2, make_binary_sfm, make_confounded_sfm, make_linear_sfm


def test_appendix_a2_truth_matches_closed_form():
    # E[W1·W2] = (a³ + 3a)/4 + c·a for W1 = a + U1, W2 = W1²/4 + c + U2, so
    # E[Y_{x1}] = ((1 + 3)/4 − 1/3)/6 + 1 + 1/2, E[Y_{x0}] = 0 and E[Y_{x1, W_{x0}}] = 1/2.
    truth = make_appendix_a2(10, seed=0).truth
    e_y1 = (1 - 1 / 3) / 6 + 1.5
    assert truth["tv"] == pytest.approx(e_y1, abs=0.01)
    assert truth["ctfde"] == pytest.approx(0.5, abs=0.01)
    assert truth["ctfie"] == pytest.approx(0.5 - e_y1, abs=0.01)
    assert truth["ctfse"] == 0 and truth["expse_x0"] == 0 and truth["expse_x1"] == 0


def test_linear_truth_is_the_path_coefficients():
    truth = make_linear_sfm(10, seed=0, alpha_xw=2.0, alpha_wy=0.5, alpha_xy=0.3).truth
    assert truth["te"] == pytest.approx(2.0 * 0.5 + 0.3, abs=0.005)
    assert truth["ctfde"] == pytest.approx(0.3, abs=0.005)
    assert truth["ctfie"] == pytest.approx(-1.0, abs=0.005)


@pytest.mark.parametrize("make", [make_appendix_a2, make_binary_sfm, make_confounded_sfm])
def test_potential_outcomes_agree_with_factual_data(make):
    sample = make(2000, seed=1)
    x = sample.data["x"].to_numpy()
    po = sample.potential_outcomes
    y = sample.data["y"].to_numpy()
    # Consistency: the factual outcome is the potential outcome at the observed X.
    np.testing.assert_allclose(np.where(x == 1, po["y_x1"], po["y_x0"]), y)
    t = sample.truth
    assert t["tv"] == pytest.approx(t["ctfde"] - t["ctfie"] - t["ctfse"], abs=1e-12)
    # The per-row counterfactuals average to the truth (sampling error only).
    assert po["y_x1_wx0"][x == 0].mean() - y[x == 0].mean() == pytest.approx(t["ctfde"], abs=0.15)


def test_confounded_model_has_spurious_effect_and_outcome_mean():
    sample = make_confounded_sfm(3000, seed=2)
    assert abs(sample.truth["ctfse"]) > 0.5
    mean = sample.outcome_mean(sample.data)
    assert np.corrcoef(mean, sample.data["y"])[0, 1] > 0.8


def test_same_seed_same_sample():
    a, b = make_binary_sfm(100, seed=4), make_binary_sfm(100, seed=4)
    assert a.data.equals(b.data) and a.potential_outcomes.equals(b.potential_outcomes)
    assert set(np.unique(a.data["y"])) <= {0.0, 1.0}
