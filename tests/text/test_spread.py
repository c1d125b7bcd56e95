"""The between-value spread of mean sentiment (fairpath.text._spread): the estimator's exact value and its
unbiasedness, the bootstrap interval's coverage, the paired one-sided test (against a slow loop, its size,
its power) and the power simulation's size, for one test and for a claim of several."""

import numpy as np
import pandas as pd
import pytest

from fairpath._stats import holm
from fairpath.text import compare_spread, spread_power, value_spread
from fairpath.text._metrics import permutation_p_value
from fairpath.text._spread import _thetas


def _frame(effects: np.ndarray, counts, sd: float = 0.16, seed: int = 0, centre: float = 0.5) -> pd.DataFrame:
    """Normal scores around centre + effects[t, v], counts[t, v] (or n) per prompt."""
    rng = np.random.default_rng(seed)
    counts = np.broadcast_to(counts, effects.shape)
    templates, values, scores = [], [], []
    for t in range(effects.shape[0]):
        for v in range(effects.shape[1]):
            k = int(counts[t, v])
            templates += [f"t{t}"] * k
            values += [f"v{v}"] * k
            scores.append(centre + effects[t, v] + rng.normal(0, sd, k))
    return pd.DataFrame({"template_id": templates, "value": values, "score": np.concatenate(scores)})


TINY = pd.DataFrame({
    "template_id": ["t0"] * 7 + ["t1"] * 7,
    "value": list("aabbbcc") * 2,
    "score": [0, 1, 1, 2, 3, 2, 2, 1, 3, 0, 0, 3, 4, 6],
})


def test_hand_computation_of_both_measures():
    # t0: means (.5, 2, 2), S = 3/4, floor mean(.5/2, 1/3, 0/2) = 7/36; t1: means (2, 1, 5), S = 13/3, floor 1
    # group: M = (5/4, 3/2, 7/2), var 73/48; floors (2·.5 + 2·2)/16, (3·1 + 3·3)/36, (2·0 + 2·2)/16: mean 43/144
    result = value_spread(TINY, n_bootstrap=9)
    assert result.individual.theta.estimate == pytest.approx(35 / 18, abs=1e-12)
    assert result.individual.raw == pytest.approx((3 / 4 + 13 / 3) / 2, abs=1e-12)
    assert result.individual.noise_floor == pytest.approx((7 / 36 + 1) / 2, abs=1e-12)
    assert result.group.theta.estimate == pytest.approx(11 / 9, abs=1e-12)
    assert result.group.noise_floor == pytest.approx(43 / 144, abs=1e-12)
    assert result.individual.spread == pytest.approx(np.sqrt(35 / 18))
    assert result.to_dict()["group"]["spread"] == pytest.approx(np.sqrt(11 / 9))
    assert result.n_prompts == 6 and result.n_samples == 14 and result.level == 0.95


def test_the_spread_is_linear_in_the_gap_and_zero_at_the_noise_floor():
    # constant scores within each prompt: no noise, θ̂ is the variance of the effects and scales with their square
    effects = np.array([[0.0, 0.1, -0.2], [0.3, 0.0, 0.1]])
    for c in (1.0, 2.5):
        frame = _frame(c * effects, 3, sd=0.0)
        assert value_spread(frame, n_bootstrap=9).individual.spread == pytest.approx(c * np.sqrt(np.var(effects, axis=1, ddof=1).mean()))
    null = value_spread(_frame(np.zeros((4, 3)), 5, seed=2), n_bootstrap=99)  # equal values: here θ̂ < 0
    assert null.individual.theta.estimate < 0 and null.individual.spread == 0.0 and null.individual.at_noise_floor


def _simulated_thetas(mu: np.ndarray, counts: np.ndarray, n_sims: int, rng, uniform: bool) -> tuple[np.ndarray, np.ndarray]:
    """θ̂ individual and group of n_sims audits: cell (t, v) has counts[t, v] scores of mean mu[t, v], SD 0.2."""
    means, variances = np.empty((n_sims, *mu.shape)), np.empty((n_sims, *mu.shape))
    for (t, v), n in np.ndenumerate(counts):
        noise = (rng.random((n_sims, n)) - 0.5) * np.sqrt(12) * 0.2 if uniform else rng.normal(0, 0.2, (n_sims, n))
        scores = mu[t, v] + noise
        means[:, t, v], variances[:, t, v] = scores.mean(axis=1), scores.var(axis=1, ddof=1)
    return _thetas(means, variances, counts)


@pytest.mark.parametrize("uniform", [False, True])
def test_unbiased_under_the_null_and_for_a_known_spread(uniform):
    rng = np.random.default_rng(11)
    counts = rng.integers(2, 9, size=(4, 3))  # unequal counts per prompt
    template = np.array([[0.1], [0.4], [0.0], [-0.2]])  # template effects: not part of either θ
    gaps = np.array([[0.0, 0.1, -0.1], [0.05, -0.05, 0.15], [0.2, 0.0, 0.0], [-0.1, 0.1, 0.0]])
    # no effect at all (both θ = 0); template effects only (individual θ = 0; the group θ is not 0 with unequal
    # counts: the count-weighted value means take the template effects in unequal shares); value gaps
    for mu in (np.zeros((4, 3)), np.zeros((4, 3)) + template, template + gaps):
        pooled = (counts * mu).sum(axis=0) / counts.sum(axis=0)
        truth = (np.var(mu, axis=1, ddof=1).mean(), np.var(pooled, ddof=1))
        for estimates, theta in zip(_simulated_thetas(mu, counts, 4000, rng, uniform), truth):
            se = estimates.std(ddof=1) / np.sqrt(len(estimates))
            assert abs(estimates.mean() - theta) < 3 * se, (estimates.mean(), theta, se)


def test_bootstrap_interval_covers_at_about_its_level():
    # 10 templates x 6 values x 40 scores, SD 0.16, effects with spread 0.03: the realistic size of a VADER audit.
    # 300 replicates: the coverage's Monte Carlo SE at 0.95 is 0.0126; the band is about ±3 SE around 0.95.
    rng = np.random.default_rng(5)
    effects = rng.normal(0, 1, (10, 6))
    effects = 0.03 * (effects - effects.mean(axis=1, keepdims=True)) / np.sqrt(np.var(effects, axis=1, ddof=1).mean())
    theta = np.var(effects, axis=1, ddof=1).mean()
    assert np.sqrt(theta) == pytest.approx(0.03)
    covered = [value_spread(_frame(effects, 40, seed=seed), n_bootstrap=499, seed=seed).individual.theta
               for seed in range(300)]
    coverage = np.mean([e.ci_low <= theta <= e.ci_high for e in covered])
    inside = np.mean([e.ci_low <= e.estimate <= e.ci_high for e in covered])
    assert inside == 1.0
    assert 0.91 <= coverage <= 0.99, coverage


def _slow_p(reference: pd.DataFrame, model: pd.DataFrame, n_permutations: int, seed: int) -> tuple[float, np.ndarray]:
    """compare_spread's individual p by an obvious loop: the labels shuffled one prompt and one draw at a time (the
    random stream of the fast version's single chunk), θ̂ of each model from pandas' groupby."""
    pooled = pd.concat([reference.assign(model=0), model.assign(model=1)]).sort_values(["template_id", "value", "model"], kind="stable")
    pooled = pooled.reset_index(drop=True)

    def theta(frame):
        cells = frame.groupby(["template_id", "value"])["score"].agg(["mean", "var", "count"]).reset_index()
        per_template = cells.groupby("template_id").apply(lambda c: c["mean"].var(ddof=1) - (c["var"] / c["count"]).mean(),
                                                          include_groups=False)
        return per_template.mean()

    def delta(labels):
        return theta(pooled[labels == 1]) - theta(pooled[labels == 0])

    rng = np.random.default_rng(seed)
    draws = np.tile(pooled["model"].to_numpy(), (n_permutations, 1))
    for _, block in pooled.groupby(["template_id", "value"], sort=False).groups.items():
        for d in range(n_permutations):
            row = draws[d, block]
            rng.shuffle(row)
            draws[d, block] = row
    null = np.array([delta(labels) for labels in draws])
    observed = delta(pooled["model"].to_numpy())
    return (1 + np.sum(null <= observed + 1e-12)) / (1 + n_permutations), null


def test_fast_permutation_test_equals_a_slow_loop():
    rng = np.random.default_rng(3)
    reference = _frame(np.array([[0.0, 0.2, -0.1], [0.1, -0.2, 0.0]]), rng.integers(2, 6, (2, 3)), seed=1)
    model = _frame(np.array([[0.0, 0.05, 0.0], [0.0, -0.05, 0.0]]), rng.integers(2, 6, (2, 3)), seed=2)
    fast = compare_spread(reference, model, n_permutations=99, seed=7)
    slow, _ = _slow_p(reference, model, 99, 7)
    assert fast.individual.p_value == pytest.approx(slow, abs=1e-12)
    # the statistic is the difference of the two models' own θ̂
    assert fast.individual.difference == pytest.approx(value_spread(model, n_bootstrap=9).individual.theta.estimate
                                                       - value_spread(reference, n_bootstrap=9).individual.theta.estimate)
    assert [fast.individual.p_holm, fast.group.p_holm] == pytest.approx(list(holm([fast.individual.p_value, fast.group.p_value])))


def test_one_sided_p_counts_draws_at_or_below():
    assert permutation_p_value(-(-0.5), -np.array([-1.0, 0.0, 1.0, -0.5])) == pytest.approx(3 / 5)


def test_size_of_the_paired_test_under_the_null_and_power_under_a_fall():
    # H0: both models draw every prompt's scores from one distribution (4 templates x 4 values, unequal counts)
    rng = np.random.default_rng(8)
    effects = rng.normal(0, 0.05, (4, 4))
    counts_a, counts_b = rng.integers(6, 14, (4, 4)), rng.integers(6, 14, (4, 4))
    p = [compare_spread(_frame(effects, counts_a, seed=2 * s), _frame(effects, counts_b, seed=2 * s + 1), n_permutations=199,
                        seed=s).individual.p_value for s in range(400)]
    size = np.mean(np.array(p) <= 0.05)
    assert abs(size - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / 400), size
    # a model without the reference's spread 0.1
    fall = compare_spread(_frame(effects * 2, 20, seed=1), _frame(effects * 0, 20, seed=2), n_permutations=999)
    assert fall.individual.p_value < 0.01 and fall.individual.change == pytest.approx(-1.0)
    assert fall.individual.significant


def test_change_is_undefined_relative_to_a_reference_at_the_noise_floor():
    null = _frame(np.zeros((3, 3)), 5, seed=2)
    result = compare_spread(null, _frame(np.zeros((3, 3)), 5, seed=3), n_permutations=99)
    assert result.individual.theta_reference < 0 and np.isnan(result.individual.change)


def test_power_simulation_size_and_power():
    rng = np.random.default_rng(4)
    pilot = _frame(rng.normal(0, 0.08, (6, 5)), 20, sd=0.16, seed=4)
    measured = value_spread(pilot, n_bootstrap=9).individual
    null = spread_power(pilot, candidates=(10,), effect=0.0, alpha=0.05, n_replicates=400, seed=1)
    size = null.table["power"].iloc[0]
    assert abs(size - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / 400), size  # the normal approximation of the null holds its size
    assert null.base_theta == pytest.approx(measured.theta.estimate)
    assert null.shrink == pytest.approx(np.sqrt(measured.theta.estimate / measured.raw))
    fall = spread_power(pilot, candidates=(5, 40), effect=0.7, alpha=0.01, n_replicates=50, seed=1)
    assert fall.chosen_n == 40 and fall.table["power"].iloc[-1] >= 0.8
    assert list(fall.table.columns) == ["n", "power", "se", "rejections"]
    assert fall.to_dict()["table"] == spread_power(pilot, candidates=(5, 40), effect=0.7, alpha=0.01, n_replicates=50,
                                                   seed=1).to_dict()["table"]  # seeded


def test_power_of_a_claim_of_several_tests():
    rng = np.random.default_rng(5)
    effects = rng.normal(0, 0.08, (6, 5))
    pilot = _frame(effects, 20, seed=5).assign(other=_frame(effects, 20, seed=6)["score"].to_numpy(),
                                               copy=lambda f: f["score"])
    # two scorers with independent noise, no fall, each at 0.2: a claim of both rejects at about 0.2 x 0.2
    null = spread_power(pilot, candidates=(10,), effect=0.0, alpha=0.2, other_scores={"other": 0.2}, n_replicates=400, seed=2)
    size = null.table["power"].iloc[0]
    assert abs(size - 0.04) <= 3 * np.sqrt(0.04 * 0.96 / 400), size
    assert null.models == 1 and null.tests["other"]["alpha"] == 0.2
    assert null.tests["score"]["base_theta"] == null.base_theta == pytest.approx(value_spread(pilot, n_bootstrap=9).individual.theta.estimate)
    # a claim of one test twice is that test; two models must both be found lower, against one reference sample
    single = spread_power(pilot, candidates=(10,), effect=0.5, alpha=0.05, n_replicates=400, seed=3).table["power"].iloc[0]
    twice = spread_power(pilot, candidates=(10,), effect=0.5, alpha=0.05, other_scores={"copy": 0.05}, n_replicates=400,
                         seed=3).table["power"].iloc[0]
    both = spread_power(pilot, candidates=(10,), effect=0.5, alpha=0.05, models=2, n_replicates=400, seed=3).table["power"].iloc[0]
    se = np.sqrt(single * (1 - single) / 400)
    assert abs(twice - single) <= 3 * np.sqrt(2) * se, (twice, single)
    assert single**2 - 3 * se <= both <= single, (both, single)
