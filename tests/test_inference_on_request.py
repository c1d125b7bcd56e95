"""Inference on request: an Estimate keeps its SE (normal interval) or its bootstrap draws (percentile interval),
so intervals at other levels, tests against other values and equivalence tests are computed after the fit. At the
fit's level they are the stored numbers exactly; at other levels they match a hand computation, and a fit made at
that level (same seed, same draws)."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairpath import Estimate
from fairpath.causal import SFM, decompose
from fairpath.datasets import make_appendix_a2, make_binary_sfm
from fairpath.parity import business_necessity_cookbook, ppm_decomposition, predictive_parity
from fairpath.parity._oracles import oracle_predictors

MEASURES = ["tv", "ctfde", "ctfie", "ctfse"]


def _percentile(draws, level: float) -> tuple[float, float]:
    alpha = (1 - level) / 2  # as written, not rounded: (1 - 0.9) / 2 is 0.04999999999999999 in floating point
    return tuple(np.quantile(draws, [alpha, 1 - alpha]))


def _inverts_its_interval(est, null: float, p: float) -> bool:
    """A percentile estimate's p is where its interval starts to exclude ``null``: inside at 1 − p·(1 − 1e-9),
    outside at 1 − p·(1 + 1e-9)."""
    inside, outside = est.confint(1 - p * (1 - 1e-9)), est.confint(1 - p * (1 + 1e-9))
    return bool(inside[0] <= null <= inside[1] and not outside[0] <= null <= outside[1] and 0 < p < 1)


def _normal_interval(estimate: float, se: float, level: float) -> tuple[float, float]:
    z = stats.norm.ppf(0.5 + level / 2)
    return estimate - z * se, estimate + z * se


@pytest.fixture(scope="module")
def sample():
    sample = make_binary_sfm(1200, seed=3)
    predictors = oracle_predictors(sample, seed=3)
    return sample, sample.data.join(predictors), list(predictors.columns)


def _decompose(sample, **settings):
    sample, data, predictors = sample
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # weak-overlap notes of the small sample
        return decompose(data, sample.sfm, predictors=predictors, learner="linear", seed=3, n_rep=1, measures=MEASURES, **settings)


@pytest.fixture(scope="module")
def normal(sample):
    return _decompose(sample)


@pytest.fixture(scope="module")
def bootstrap(sample):
    return _decompose(sample, n_boot=60)


# -- Estimate ----------------------------------------------------------------------------------------------------
def test_normal_estimate_at_its_level_is_the_stored_interval_and_elsewhere_estimate_plus_minus_z_se():
    est = Estimate.from_se(0.12, 0.05)
    assert est.confint(0.95) == (est.ci_low, est.ci_high)
    for level in (0.5, 0.8, 0.9, 0.99):
        np.testing.assert_allclose(est.confint(level), _normal_interval(0.12, 0.05, level), rtol=0, atol=1e-15)
    low, high = est.confint(0.9)
    assert est.ci_low < low < high < est.ci_high  # a narrower interval at a lower level


def test_percentile_estimate_uses_the_quantiles_of_its_draws():
    draws = np.random.default_rng(0).normal(0.3, 0.1, 500)
    est = Estimate.from_draws(0.31, draws)
    assert est.confint(0.95) == (est.ci_low, est.ci_high) == _percentile(draws, 0.95)
    assert est.confint(0.9) == _percentile(draws, 0.9)
    assert est.confint(0.5) == _percentile(draws, 0.5)
    np.testing.assert_allclose(est.confint(0.9), np.quantile(draws, [0.05, 0.95]), rtol=1e-12)
    assert est.se == draws.std(ddof=1)


def test_p_value_against_any_null_and_the_equivalence_test_by_hand():
    est = Estimate.from_se(0.12, 0.05)
    assert est.p_value() == est.p_value(0.0) == 2 * stats.norm.sf(0.12 / 0.05)
    for null in (-0.1, 0.05, 0.12, 0.3):
        assert est.p_value(null=null) == pytest.approx(2 * stats.norm.sf(abs(0.12 - null) / 0.05), rel=1e-14, abs=1e-300)
    assert est.p_value(null=0.12) == 1.0
    margin = 0.2
    by_hand = max(stats.norm.sf((0.12 + margin) / 0.05), stats.norm.cdf((0.12 - margin) / 0.05))
    assert est.equivalence_p(margin) == by_hand
    assert Estimate.from_se(0.1, 0.0).p_value(null=0.1) == 1.0 and Estimate.from_se(0.1, 0.0).p_value() == 0.0


def test_percentile_p_value_rejects_exactly_where_its_own_interval_excludes_the_null():
    rng = np.random.default_rng(4)
    for n_draws, rounding in ((999, None), (60, None), (200, 1)):  # skewed draws; the last with ties
        draws = rng.exponential(size=n_draws) ** 2 - 0.3
        draws = draws if rounding is None else np.round(draws, rounding)
        est = Estimate.from_draws(float(np.median(draws)), draws)
        resolution = 2 / (n_draws + 1)
        for null in [*rng.uniform(draws.min(), draws.max(), 40), *draws[:5]]:
            p = est.p_value(null=null)
            for alpha in np.linspace(resolution + 1e-9, 0.99, 80):
                low, high = est.confint(1 - alpha)
                assert (p < alpha) == (null < low or null > high), (n_draws, null, alpha, p)
        assert est.p_value(null=draws.max() + 1) == est.p_value(null=draws.min() - 1) == resolution  # never 0


def test_percentile_p_value_is_the_draws_tail_not_the_normal_one_on_skewed_draws():
    draws = np.random.default_rng(5).exponential(size=4999)
    est = Estimate.from_draws(1.0, draws)
    null = float(np.quantile(draws, 0.02))
    assert est.p_value(null=null) == pytest.approx(0.04, abs=1e-12)  # Q(0.02) = null: the 96% interval's end
    normal = 2 * stats.norm.sf(abs(1.0 - null) / est.se)
    assert normal > 0.3  # the SD's normal test would not reject what the draws' 95% interval excludes
    assert est.confint(0.95)[0] > null and est.p_value(null=null) < 0.05


def test_estimate_equality_and_export_ignore_the_kept_basis():
    est = Estimate.from_se(0.12, 0.05)
    assert est == Estimate(est.estimate, est.se, est.ci_low, est.ci_high, 0.95)
    assert est.to_dict() == {"estimate": 0.12, "se": 0.05, "ci_low": est.ci_low, "ci_high": est.ci_high, "level": 0.95}
    assert "draws" not in repr(Estimate.from_draws(0.0, np.arange(5.0)))


def test_an_estimate_made_from_its_numbers_answers_at_its_own_level():
    est = Estimate(0.1, 0.02, 0.06, 0.14, 0.95)
    assert est.confint(0.95) == (0.06, 0.14)
    assert est.p_value() == 2 * stats.norm.sf(5.0)


# -- CausalDecomposition -----------------------------------------------------------------------------------------
def test_decomposition_confint_at_its_level_is_to_frame_exactly(normal, bootstrap):
    for result in (normal, bootstrap):
        frame, stored = result.confint(0.95), result.to_frame()
        assert list(frame.columns) == ["subject", "measure", "estimate", "ci_low", "ci_high", "level", "contrast"]
        pd.testing.assert_frame_equal(frame, stored[list(frame.columns)])


def test_decomposition_confint_at_another_level_by_hand(normal):
    frame, stored = normal.confint(0.9), normal.to_frame()
    low, high = _normal_interval(stored["estimate"], stored["se"], 0.9)
    np.testing.assert_allclose(frame["ci_low"], low, rtol=0, atol=1e-15)
    np.testing.assert_allclose(frame["ci_high"], high, rtol=0, atol=1e-15)
    assert (frame["level"] == 0.9).all()


def test_decomposition_confint_equals_a_fit_at_that_level(sample, normal, bootstrap):
    for result, settings in ((normal, {}), (bootstrap, {"n_boot": 60})):
        refit = _decompose(sample, level=0.8, **settings).to_frame()
        pd.testing.assert_frame_equal(result.confint(0.8), refit[["subject", "measure", "estimate", "ci_low", "ci_high", "level", "contrast"]])


def test_one_contrast_has_its_marginal_interval_and_p_as_its_simultaneous_ones_percentile_included(bootstrap):
    # nothing to adjust over one contrast: the simultaneous interval of a percentile estimate is its percentile interval,
    # not estimate ± z·se
    frame = bootstrap.to_frame()
    assert frame["simultaneous_low"].equals(frame["ci_low"]) and frame["simultaneous_high"].equals(frame["ci_high"])
    assert frame["p_simultaneous"].equals(frame["p_value"])
    est = bootstrap.estimate("ctfde")
    assert bootstrap.simultaneous("ctfde", level=0.9) == {"1": est.confint(0.9)}
    assert est.confint(0.9) != (est.estimate - 1.6448536269514722 * est.se, est.estimate + 1.6448536269514722 * est.se)


def test_bootstrap_decomposition_confint_is_the_quantiles_of_the_draws(bootstrap):
    draws = bootstrap.for_contrast().fits["y"].draws["ctfde"].to_numpy()
    row = bootstrap.confint(0.9).set_index(["subject", "measure"]).loc[("y", "ctfde")]
    assert (row["ci_low"], row["ci_high"]) == _percentile(draws, 0.9)


def test_decomposition_p_value_against_a_null_by_hand(normal):
    est = normal.estimate("ctfie", "y")
    for null in (0.0, 0.02, -0.05):
        assert normal.p_value("ctfie", "y", null=null) == 2 * stats.norm.sf(abs(est.estimate - null) / est.se)
    assert normal.p_value("tv") == normal.estimate("tv").p_value()  # outcome defaults to Y


def test_paired_difference_se_comes_from_the_row_differences(normal, sample):
    _, _, predictors = sample
    predictor = predictors[0]
    rows = normal.pseudo_outcomes(predictor)["ctfse"] - normal.pseudo_outcomes("y")["ctfse"]
    estimate, se = rows.mean(), rows.std(ddof=1) / np.sqrt(len(rows))
    diff = normal.difference("ctfse", predictor)
    assert diff.estimate == pytest.approx(estimate, rel=1e-13) and diff.se == pytest.approx(se, rel=1e-13)
    separate = np.hypot(normal.estimate("ctfse", predictor).se, normal.estimate("ctfse", "y").se)
    assert diff.se != pytest.approx(separate, rel=1e-3)  # the columns are dependent: not the independent SE
    np.testing.assert_allclose(diff.confint(0.9), _normal_interval(estimate, se, 0.9), rtol=0, atol=1e-12)
    assert diff.p_value(null=0.01) == pytest.approx(2 * stats.norm.sf(abs(estimate - 0.01) / se), rel=1e-10)
    assert diff.equivalence_p(0.05) == pytest.approx(
        max(stats.norm.sf((estimate + 0.05) / se), stats.norm.cdf((estimate - 0.05) / se)), rel=1e-10)


def test_paired_bootstrap_difference_uses_the_paired_draws(bootstrap, sample):
    _, _, predictors = sample
    draws = bootstrap.for_contrast().fits[predictors[0]].draws["ctfie"].to_numpy() - bootstrap.for_contrast().fits["y"].draws["ctfie"].to_numpy()
    diff = bootstrap.difference("ctfie", predictors[0])
    assert diff.se == draws.std(ddof=1)
    assert diff.confint(0.9) == _percentile(draws, 0.9)


def test_contrast_is_an_estimate_with_the_same_methods(normal):
    ctfde = normal.combination([(1, (0, 0, 1)), (-1, (0, 0, 0))])
    np.testing.assert_allclose(ctfde.confint(0.9), _normal_interval(ctfde.estimate, ctfde.se, 0.9), rtol=0, atol=1e-15)
    assert ctfde.p_value(null=0.1) == 2 * stats.norm.sf(abs(ctfde.estimate - 0.1) / ctfde.se)


def test_cookbook_tests_are_the_estimates_own_tests(normal, sample):
    _, _, predictors = sample
    result = business_necessity_cookbook(normal, "SE", margin=0.05)
    for row in result.tests.itertuples():
        est = (normal.difference(row.measure, row.predictor) if row.in_bn else normal.estimate(row.measure, row.predictor))
        assert (row.estimate, row.se, row.ci_low, row.ci_high) == (est.estimate, est.se, est.ci_low, est.ci_high)
        assert row.p_value == est.p_value() and row.tost_p == est.equivalence_p(0.05)


# -- parity results ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def a2():
    sample = make_appendix_a2(2000, seed=11)
    data = sample.data.copy()
    data["y_hat"] = sample.outcome_mean(data)
    data["y_x0_true"] = sample.potential_outcomes["y_x0"].to_numpy()
    return sample, data


def test_ppm_decomposition_confint_equals_the_stored_and_a_fit_at_that_level(a2):
    sample, data = a2
    result = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=5, n_boot=80, seed=2)
    columns = ["subject", "measure", "estimate", "ci_low", "ci_high", "level", "bin"]
    pd.testing.assert_frame_equal(result.confint(0.95), result.to_frame()[columns])
    at_90 = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=5, n_boot=80, seed=2, level=0.9)
    pd.testing.assert_frame_equal(result.confint(0.9), at_90.to_frame()[columns])
    est = result.estimate("term1", bin=2)
    null = est.estimate - 1.5 * est.se
    p = result.p_value("term1", bin=2, null=null)
    assert p == est.p_value(null=null) and _inverts_its_interval(est, null, p)
    assert result.p_value("ippm") == result.integrated["ippm"].p_value()


def test_ppm_decomposition_without_draws_has_no_interval_at_any_level(a2):
    sample, data = a2
    frame = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=5, n_boot=0).confint(0.9)
    assert frame["ci_low"].isna().all() and frame["level"].isna().all() and frame["estimate"].notna().all()


def test_predictive_parity_confint_and_p_value(a2):
    sample, data = a2
    sfm = SFM(x=sample.sfm.x, x0=sample.sfm.x0, x1=sample.sfm.x1, y=sample.sfm.y)
    result = predictive_parity(data, sfm, "y_hat", n_bins=4, n_boot=80, seed=2)
    columns = ["subject", "measure", "estimate", "ci_low", "ci_high", "level"]
    pd.testing.assert_frame_equal(result.confint(0.95), result.to_frame()[columns])
    pd.testing.assert_frame_equal(result.confint(0.9),
                                  predictive_parity(data, sfm, "y_hat", n_bins=4, n_boot=80, seed=2, level=0.9).to_frame()[columns])
    assert result.p_value("spm", null=0.2) == 2 / 81  # outside all 80 draws: the smallest p they resolve
    assert _inverts_its_interval(result.spm, 1.6, result.p_value("spm", null=1.6))
