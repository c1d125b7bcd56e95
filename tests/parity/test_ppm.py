"""Predictive parity measures: bins, per-bin gaps, iPPM (the paper's COMPAS value), SPM, AUC."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fairpath.causal import SFM
from fairpath.parity import predictive_parity, quantile_bins

SFM_XY = SFM(x="x", x0="a", x1="b", y="y")


@pytest.fixture(scope="module")
def scored():
    rng = np.random.default_rng(3)
    n = 3000
    x = np.where(rng.random(n) < 0.4, "b", "a")
    score = np.clip(rng.beta(2, 3, n) + 0.1 * (x == "b"), 0, 1)
    y = (rng.random(n) < score + 0.05 * (x == "b")).astype(int)
    return pd.DataFrame({"x": x, "score": score, "y": y})


def test_compas_ippm_of_decile_score_reproduces_the_paper(shared_dir):
    data = pd.read_csv(shared_dir / "data" / "compas_sp2pp.csv").assign(score=lambda d: d["decile_score"] / 10)
    sfm = SFM(x="race", x0="Majority", x1="Minority", y="two_year_recid")
    result = predictive_parity(data, sfm, "score", n_boot=100, seed=1)
    assert len(result.bins) == 9  # tied deciles merge the 10 quantile bins into 9
    assert result.ippm.estimate == pytest.approx(0.0181, abs=1e-4)
    assert result.ippm.ci_low < 0.0181 < result.ippm.ci_high
    # scale invariance: the raw decile score gives the same bins and iPPM
    raw = predictive_parity(data, sfm, "decile_score", n_boot=100, seed=1)
    assert raw.ippm.estimate == pytest.approx(result.ippm.estimate, abs=1e-12)
    assert result.bins["n_x0"].sum() + result.bins["n_x1"].sum() == 7214


def test_bins_are_right_closed_quantile_intervals_and_ties_merge():
    score = np.array([1, 1, 1, 1, 1, 2, 2, 3, 4, 5], dtype=float)
    bins = quantile_bins(score, n_bins=5)
    cuts = np.quantile(score, [0.2, 0.4, 0.6, 0.8])  # 1, 1, 2, 3.2 -> (-inf,1], (1,2], (2,3.2], (3.2,inf]
    np.testing.assert_allclose(cuts, [1, 1, 2, 3.2])
    assert bins.n_bins == 4
    np.testing.assert_array_equal(bins.codes, [0, 0, 0, 0, 0, 1, 1, 2, 3, 3])
    assert bins.labels[1] == "(1, 2]"


def test_binary_predictor_uses_its_two_levels():
    bins = quantile_bins(np.array([0, 1, 1, 0, 1.0]), n_bins=10)
    assert bins.labels == ["ŷ = 0", "ŷ = 1"]
    np.testing.assert_array_equal(bins.codes, [0, 1, 1, 0, 1])


def test_gaps_ippm_spm_auc_match_direct_computation(scored):
    result = predictive_parity(scored, SFM_XY, "score", n_bins=10, n_boot=50, seed=0)
    bins = quantile_bins(scored["score"].to_numpy(), 10)
    means = scored.groupby([bins.codes, "x"])["y"].mean().unstack()
    gaps = (means["b"] - means["a"]).to_numpy()
    np.testing.assert_allclose(result.bins["gap"], gaps, atol=1e-12)
    assert result.ippm.estimate == pytest.approx(gaps.mean(), abs=1e-12)
    shares = np.bincount(bins.codes) / len(scored)
    assert result.ippm_weighted.estimate == pytest.approx(np.sum(shares * gaps), abs=1e-12)
    by_group = scored.groupby("x")["score"].mean()
    assert result.spm.estimate == pytest.approx(by_group["b"] - by_group["a"], abs=1e-12)
    assert result.auc.estimate == pytest.approx(roc_auc_score(scored["y"], scored["score"]), abs=1e-12)
    # the bootstrap interval of the AUC (rank formula) brackets sklearn's value
    assert result.auc.ci_low < result.auc.estimate < result.auc.ci_high
    assert (result.bins["ci_low"] <= result.bins["gap"]).all() and (result.bins["gap"] <= result.bins["ci_high"]).all()


def test_bootstrap_is_seeded(scored):
    first = predictive_parity(scored, SFM_XY, "score", n_boot=30, seed=5)
    again = predictive_parity(scored, SFM_XY, "score", n_boot=30, seed=5)
    other = predictive_parity(scored, SFM_XY, "score", n_boot=30, seed=6)
    assert first.ippm == again.ippm
    pd.testing.assert_frame_equal(first.bins, again.bins)
    assert first.ippm.ci_low != other.ippm.ci_low


def test_ippm_ci_covers_zero_for_a_predictor_satisfying_predictive_parity():
    # Y depends on the score only, the same way in both groups: every PPM gap is 0 in truth.
    rng = np.random.default_rng(8)
    n = 6000
    x = np.where(rng.random(n) < 0.5, "b", "a")
    score = np.minimum(rng.integers(1, 5, n) + (x == "b") * rng.integers(0, 2, n), 4) / 5
    y = (rng.random(n) < score).astype(int)  # the groups differ in score, not in E[Y | score]
    data = pd.DataFrame({"x": x, "score": score, "y": y})
    result = predictive_parity(data, SFM_XY, "score", n_boot=200, seed=0)
    assert result.ippm.ci_low < 0 < result.ippm.ci_high
    assert abs(result.ippm.estimate) < 3 * result.ippm.se


def test_result_exports_and_plots(scored):
    result = predictive_parity(scored, SFM_XY, "score", n_boot=20, seed=0)
    frame = result.to_frame()
    assert list(frame["measure"]) == ["ippm", "ippm_weighted", "spm", "auc"] and set(frame["subject"]) == {"score"}
    payload = json.loads(result.to_json())
    assert payload["measures"]["ippm"]["estimate"] == pytest.approx(result.ippm.estimate)
    assert len(payload["bins"]) == len(result.bins)
    assert "iPPM = " in result.summary()
    assert repr(result).startswith("PredictiveParity(predictor='score'") and f"score ippm={result.ippm.estimate:.4g}" in repr(result)
    fig = result.plot()
    assert len(fig.axes) == 2
    again = result.plot(ax=fig.axes)
    assert again is fig and len(fig.axes) == 2
    assert "<table" in result._repr_html_()


def test_continuous_outcome_has_no_auc(scored):
    data = scored.assign(y=scored["score"] + np.random.default_rng(0).normal(0, 0.1, len(scored)))
    result = predictive_parity(data, SFM_XY, "score", n_boot=20, seed=0)
    assert result.auc is None
    assert "auc" not in set(result.to_frame()["measure"])


def test_wilson_band_covers_a_binomial_share_at_its_level():
    from fairpath.parity._ppm import wilson_interval

    rng = np.random.default_rng(0)
    for p, n in ((0.3, 40), (0.05, 30), (0.7, 7)):  # 7 rows: the smallest bin of x1 seen in the COMPAS demo
        share = rng.binomial(n, p, 4000) / n
        low, high = wilson_interval(share, np.full(4000, n), 0.95)
        coverage = np.mean((low <= p) & (p <= high))
        assert 0.92 <= coverage <= 0.99, (p, n, coverage)
