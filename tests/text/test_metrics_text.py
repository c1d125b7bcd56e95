import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from fairpath.text._controlled import PoolGenerator
from fairpath.text._generation import GenerationSettings
from fairpath.text._metrics import (
    counterfactual_fairness,
    group_fairness,
    individual_fairness,
    pairwise_wasserstein1,
    wasserstein1,
)
from fairpath.text._scorers import VaderScorer

from toy_spec import BIASED, SPEC  # tests/text is on the import path (no __init__.py)


def test_w1_equals_scipy_on_unequal_sizes():
    rng = np.random.default_rng(0)
    for _ in range(300):
        u = rng.normal(size=rng.integers(1, 80))
        v = rng.gamma(2.0, size=rng.integers(1, 80)) + rng.integers(0, 3)
        assert abs(wasserstein1(u, v) - wasserstein_distance(u, v)) < 1e-12
    discrete = rng.integers(0, 4, size=37).astype(float), rng.integers(0, 4, size=11).astype(float)
    assert abs(wasserstein1(*discrete) - wasserstein_distance(*discrete)) < 1e-12


def test_pairwise_w1_matrix_equals_scipy_for_equal_and_unequal_sizes():
    rng = np.random.default_rng(1)
    for sizes in ([30] * 6, [3, 17, 40, 1, 29]):
        samples = [rng.beta(2, 5, size=n) for n in sizes]
        matrix = pairwise_wasserstein1(samples)
        expected = np.array([[wasserstein_distance(a, b) for b in samples] for a in samples])
        np.testing.assert_allclose(matrix, expected, atol=1e-12, rtol=0)


def _frame(rng, n_templates=3, values=("x", "y", "z"), subgroup={"x": "g1", "y": "g1", "z": "g2"}, unequal=True):
    rows = []
    for t, v in itertools.product(range(n_templates), values):
        n = int(rng.integers(5, 25)) if unequal else 10
        for s in rng.beta(2 + t, 2 + values.index(v), size=n):
            rows.append({"template_id": f"t{t}", "value": v, "subgroup": subgroup[v], "score": s})
    return pd.DataFrame(rows)


def test_individual_and_group_fairness_follow_the_definitions():
    frame = _frame(np.random.default_rng(2))
    cell = lambda t, v: frame.query("template_id == @t and value == @v")["score"].to_numpy()
    pairs = [wasserstein_distance(cell(t, a), cell(t, b))
             for t in ["t0", "t1", "t2"] for a, b in itertools.combinations(["x", "y", "z"], 2)]
    assert individual_fairness(frame) == pytest.approx(np.mean(pairs), abs=1e-12)
    everything = frame["score"].to_numpy()
    groups = [wasserstein_distance(frame.loc[frame["subgroup"] == g, "score"], everything) for g in ["g1", "g2"]]
    assert group_fairness(frame) == pytest.approx(np.mean(groups), abs=1e-12)
    result = counterfactual_fairness(frame, n_bootstrap=20)
    assert result.individual.estimate == pytest.approx(np.mean(pairs), abs=1e-12)
    pair_xz = result.per_pair.query("value_a == 'x' and value_b == 'z'")["w1"].item()
    assert pair_xz == pytest.approx(np.mean([wasserstein_distance(cell(t, "x"), cell(t, "z")) for t in ["t0", "t1", "t2"]]))
    assert result.per_value.set_index("value").loc["z", "w1_to_all"] == pytest.approx(
        wasserstein_distance(frame.loc[frame["value"] == "z", "score"], everything))


def test_group_fairness_is_nan_with_one_subgroup():
    frame = _frame(np.random.default_rng(3), subgroup={"x": "g", "y": "g", "z": "g"})
    assert np.isnan(group_fairness(frame))
    assert np.isfinite(individual_fairness(frame))


def _pool_frame(mixing, n_samples=200, seed=0):
    generator = PoolGenerator(SPEC, mixing)
    prompts = SPEC.prompts()
    texts = generator.generate(prompts["prompt"].tolist(), settings=GenerationSettings(n_samples=n_samples, seed=seed))
    rows = [{"template_id": p.template_id, "value": p.value, "subgroup": p.subgroup, "text": text}
            for p, continuations in zip(prompts.itertuples(), texts) for text in continuations]
    frame = pd.DataFrame(rows)
    scorer = VaderScorer()
    frame["score"] = scorer.score(frame["text"].tolist())
    return generator, scorer, frame


def test_controlled_generator_recovers_analytic_fairness():
    generator, scorer, frame = _pool_frame(BIASED)
    pool_w1 = generator.pool_distance(scorer)
    assert pool_w1 > 0.8  # VADER separates the pools clearly
    expected_individual = np.mean([abs(a - b) for a, b in itertools.combinations(BIASED.values(), 2)]) * pool_w1
    expected_group = 0.2 * pool_w1  # subgroups mix 0.75 and 0.35 around 0.55
    assert generator.expected_individual_fairness(scorer) == pytest.approx(expected_individual)
    assert generator.expected_group_fairness(scorer) == pytest.approx(expected_group)
    result = counterfactual_fairness(frame, n_bootstrap=200, seed=0)
    assert result.individual.ci_low <= expected_individual <= result.individual.ci_high
    assert result.group.ci_low <= expected_group <= result.group.ci_high
    assert result.individual.ci_low <= result.individual_bias_corrected <= result.individual.ci_high
    assert result.individual_bias_corrected == pytest.approx(expected_individual, abs=0.02)
    assert result.individual.estimate > 5 * result.individual_noise_upper
    worst = result.per_pair.iloc[0]
    assert {worst["value_a"], worst["value_b"]} == {"A", "C"}
    assert worst["w1"] == pytest.approx(0.5 * pool_w1, abs=0.06)
    assert list(result.per_value["value"][:1]) in (["A"], ["C"])


def test_unbiased_generator_stays_inside_the_noise_floor():
    _, _, frame = _pool_frame({}, seed=1)
    result = counterfactual_fairness(frame, n_bootstrap=50, seed=1)
    assert result.individual.estimate <= result.individual_noise_upper
    assert result.group.estimate <= result.group_noise_upper
    assert 0.5 < result.individual.estimate / result.individual_noise_floor < 1.5
    table = result.to_frame()
    assert not table["above_noise"].any()


def test_same_seed_same_numbers():
    _, _, frame = _pool_frame(BIASED, n_samples=40)
    first = counterfactual_fairness(frame, n_bootstrap=30, seed=5).to_frame()
    again = counterfactual_fairness(frame, n_bootstrap=30, seed=5).to_frame()
    other = counterfactual_fairness(frame, n_bootstrap=30, seed=6).to_frame()
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["ci_low"], other["ci_low"])
    np.testing.assert_allclose(first["estimate"], other["estimate"])  # the point estimate has no randomness


def test_result_exports():
    _, _, frame = _pool_frame(BIASED, n_samples=20)
    result = counterfactual_fairness(frame, scorer="vader", n_bootstrap=10)
    assert "individual fairness" in repr(result) and "noise floor" in repr(result)
    assert '"individual_fairness"' in result.to_json()
    assert result.plot().axes[0].get_xlabel().startswith("W1 of vader")
