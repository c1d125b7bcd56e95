"""Conditional quantile engines: ranks and quantiles are inverse to each other and match known distributions."""

import numpy as np
import pytest
from scipy import stats

from fairpath.adaptation import ForestQuantileEngine, LinearQuantileEngine, make_engine
from fairpath.adaptation._quantile import _GRID, _interpolate_rows, _rank_in_rows


def test_rank_and_interpolation_are_inverse_on_a_grid():
    grid_values = np.tile(stats.norm.ppf(np.clip(_GRID, 0.001, 0.999)), (5, 1)) + np.arange(5)[:, None]
    ranks = np.array([0.1, 0.33, 0.5, 0.77, 0.95])
    values = _interpolate_rows(grid_values, ranks)
    np.testing.assert_allclose(_rank_in_rows(grid_values, values), ranks, atol=1e-12)
    np.testing.assert_allclose(values - np.arange(5), stats.norm.ppf(ranks), atol=0.01)


def test_tied_grid_values_get_the_middle_rank():
    grid_values = np.repeat(np.r_[np.zeros(51), np.ones(50)][None, :], 1, axis=0)
    assert _rank_in_rows(grid_values, np.array([0.0]))[0] == pytest.approx(0.25)
    assert _rank_in_rows(grid_values, np.array([5.0]))[0] == 1.0


def heteroscedastic(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 2, (n, 1))
    scale = 0.5 + x[:, 0]
    return x, x[:, 0] + scale * rng.standard_normal(n), scale


def test_forest_ranks_are_close_to_the_true_conditional_cdf():
    x, y, scale = heteroscedastic(4000, seed=0)
    # Leaves of 20 rows for a smooth continuous target (the default 5 is tuned for discrete ones).
    engine = ForestQuantileEngine(min_samples_leaf=20, max_samples=0.3, random_state=0).fit(x, y)
    truth = stats.norm.cdf((y - x[:, 0]) / scale)
    ranks = engine.ranks(x, y, in_sample=True)
    assert np.abs(ranks - truth).mean() < 0.05
    default = ForestQuantileEngine(random_state=0).fit(x, y).ranks(x, y, in_sample=True)
    assert np.abs(default - truth).mean() < 0.09
    # Quantiles at given ranks follow the conditional spread.
    probe = np.array([[0.5], [1.5]])
    upper = engine.quantiles(probe, np.array([0.9, 0.9]))
    expected = probe[:, 0] + (0.5 + probe[:, 0]) * stats.norm.ppf(0.9)
    np.testing.assert_allclose(upper, expected, atol=0.35)
    assert upper[1] - upper[0] > 1.5  # the spread grows with x


def test_forest_without_parents_uses_the_empirical_marginal():
    y = np.random.default_rng(1).standard_normal(999)
    engine = ForestQuantileEngine().fit(np.empty((999, 0)), y)
    assert isinstance(engine.forest_, LinearQuantileEngine)
    assert engine.quantiles(np.empty((1, 0)), np.array([0.5]))[0] == pytest.approx(np.median(y))


def test_linear_engine_is_exact_for_a_location_shift():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3000, 2))
    y = 1 + x @ np.array([2.0, -1.0]) + rng.standard_normal(3000)
    engine = LinearQuantileEngine().fit(x, y)
    np.testing.assert_allclose(engine.coef_, [1, 2, -1], atol=0.06)
    ranks = engine.ranks(x, y, in_sample=True)
    assert np.median(np.abs(engine.quantiles(x, ranks) - y)) < 0.01


def test_make_engine_by_name_and_by_prototype():
    assert isinstance(make_engine("linear", seed=0), LinearQuantileEngine)
    prototype = ForestQuantileEngine(n_estimators=7)
    made = make_engine(prototype, seed=11)
    assert made is not prototype and made.n_estimators == 7 and made.random_state == 11


def test_out_of_bag_ranks_when_the_forest_learns_from_a_subset():
    # The forest learns from 600 of 1,000 rows: those are ranked from the trees that did not draw them
    # (quantile-forest's own out-of-bag prediction), the other 400 from a random subset of the trees.
    x, y, _ = heteroscedastic(1000, seed=4)
    engine = ForestQuantileEngine(max_train_rows=600, random_state=0).fit(x, y)
    ranks = engine.ranks(x, y, in_sample=True)
    learned = np.zeros(1000, bool)
    learned[engine.train_rows_] = True
    out_of_bag = engine.forest_.predict(x[learned], quantiles=list(_GRID), oob_score=True, weighted_quantile=False,
                                        indices=np.arange(learned.sum()))
    np.testing.assert_allclose(ranks[learned], _rank_in_rows(out_of_bag, y[learned]))
    every_tree = _rank_in_rows(engine._grid_values(x, slice(None)), y)
    assert not np.allclose(ranks[~learned], every_tree[~learned])
    assert engine.out_of_bag_share_ == pytest.approx(np.exp(-0.5), abs=0.02)  # bootstrap draws of half the rows


def test_new_rows_are_ranked_as_the_training_rows_are():
    # Ranks read off every tree for new rows but with the row's own value in its leaves for training rows
    # had different spreads (so the twins' calibration did not hold for new rows); read out of bag, both
    # samples of ranks come from one distribution.
    x, y, _ = heteroscedastic(3000, seed=5)
    new_x, new_y, _ = heteroscedastic(3000, seed=6)
    engine = ForestQuantileEngine(random_state=0).fit(x, y)
    training, new = engine.ranks(x, y, in_sample=True), engine.ranks(new_x, new_y, in_sample=False)
    assert stats.ks_2samp(training, new).pvalue > 0.05
    assert new.std() == pytest.approx(training.std(), rel=0.03)
    # Before: training rows read off every tree (their own values in half the leaves: spread 0.28), new rows too (0.31).
    training_before = _rank_in_rows(engine._grid_values(x, slice(None)), y)
    new_before = _rank_in_rows(engine._grid_values(new_x, slice(None)), new_y)
    assert stats.ks_2samp(training_before, new_before).pvalue < 0.01
    np.testing.assert_array_equal(new, engine.ranks(new_x, new_y, in_sample=False))  # seeded
