import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, wasserstein_distance

from fairpath.text._controlled import PoolGenerator
from fairpath.text import GenerationSettings
from fairpath._stats import holm
from fairpath.text._metrics import (
    _Design,
    _Layout,
    _statistics,
    compare_models,
    counterfactual_fairness,
    group_fairness,
    individual_fairness,
    pairwise_wasserstein1,
    permutation_p_value,
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
    result = counterfactual_fairness(frame, n_permutations=20)
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
    generator = PoolGenerator(SPEC, mixing=mixing)
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
    result = counterfactual_fairness(frame, n_permutations=199, seed=0)
    # With 200 samples per prompt the plug-in is close to the analytic W1; the excess over the null mean
    # is smaller than the truth (the pooled null mixes the values' pools) but clearly positive.
    assert result.individual.estimate == pytest.approx(expected_individual, abs=0.03)
    assert result.group.estimate == pytest.approx(expected_group, abs=0.03)
    assert 0.5 * expected_individual < result.individual.excess < result.individual.estimate
    for test in (result.individual, result.group):
        assert test.p_value == pytest.approx(1 / 200) and test.p_holm == pytest.approx(2 / 200) and test.significant
    worst = result.per_pair.iloc[0]
    assert {worst["value_a"], worst["value_b"]} == {"A", "C"}
    assert worst["w1"] == pytest.approx(0.5 * pool_w1, abs=0.06)
    assert worst["p_holm"] == pytest.approx(min(1.0, 6 * worst["p_value"]))
    assert list(result.per_value["value"][:1]) in (["A"], ["C"])


def _tiny_frame():
    scores = {("t0", "x"): [0.1, 0.5], ("t0", "y"): [0.9], ("t0", "z"): [0.3, 0.8],
              ("t1", "x"): [0.2], ("t1", "y"): [0.6, 0.7], ("t1", "z"): [0.05, 0.95]}
    subgroup = {"x": "g1", "y": "g1", "z": "g2"}
    return pd.DataFrame([{"template_id": t, "value": v, "subgroup": subgroup[v], "score": s}
                         for (t, v), cell in scores.items() for s in cell])


def _brute_force_metrics(frame, labels):
    """Individual and group fairness straight from the definitions, with scipy's W1, for relabelled values."""
    scores, templates = frame["score"].to_numpy(), frame["template_id"].to_numpy()
    labels = np.asarray(labels)
    pairs = [wasserstein_distance(scores[(templates == t) & (labels == a)], scores[(templates == t) & (labels == b)])
             for t in ("t0", "t1") for a, b in itertools.combinations("xyz", 2)]
    in_g1 = np.isin(labels, ["x", "y"])
    groups = [wasserstein_distance(scores[in_g1], scores), wasserstein_distance(scores[~in_g1], scores)]
    return np.mean(pairs), np.mean(groups)


def test_permutation_p_value_equals_a_brute_force_enumeration_of_all_relabellings():
    frame = _tiny_frame()  # rows are in the layout's order: template, then value
    assignments = {t: sorted(set(itertools.permutations(frame.loc[frame["template_id"] == t, "value"])))
                   for t in ("t0", "t1")}
    assert [len(a) for a in assignments.values()] == [30, 30]  # 5! / (2! 1! 2!) each
    labellings = [[*first, *second] for first, second in itertools.product(assignments["t0"], assignments["t1"])]
    brute = np.array([_brute_force_metrics(frame, labels) for labels in labellings])
    # The vectorised statistics of every relabelling equal the definitions.
    layout = _Layout.from_designs([_Design.from_frame(frame, "score")])
    values = np.array([["xyz".index(v) for v in labels] for labels in labellings])
    pair_w1, group = _statistics(layout, values, np.zeros_like(values))
    np.testing.assert_allclose(pair_w1[:, 0].mean(axis=1), brute[:, 0], atol=1e-12)
    np.testing.assert_allclose(group[:, 0], brute[:, 1], atol=1e-12)
    observed = brute[labellings.index(list(frame["value"]))]
    exact = (brute >= observed - 1e-12).mean(axis=0)
    assert 0.05 < exact[0] < 0.95 and 0.05 < exact[1] < 0.95  # a case where the p-value is informative
    result = counterfactual_fairness(frame, n_permutations=20_000, seed=0)
    tolerance = 4 * np.sqrt(exact * (1 - exact) / 20_000)
    assert abs(result.individual.p_value - exact[0]) < tolerance[0]
    assert abs(result.group.p_value - exact[1]) < tolerance[1]
    assert result.individual.null_mean == pytest.approx(brute[:, 0].mean(), abs=4 * brute[:, 0].std() / np.sqrt(20_000))
    assert result.individual.p_holm == pytest.approx(holm([result.individual.p_value, result.group.p_value])[0])


def _null_scores(n_replicates, n_samples, seed):
    """Score tables of the unbiased controlled generator: every continuation one of its 12 sentences, uniformly."""
    generator = PoolGenerator(SPEC)
    pool = np.asarray(VaderScorer().score(list(generator.positive + generator.negative)))
    prompts = SPEC.prompts()[["template_id", "value", "subgroup"]]
    prompts = prompts.loc[prompts.index.repeat(n_samples)].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    for _ in range(n_replicates):
        yield prompts.assign(score=rng.choice(pool, size=len(prompts)))


def _within_binomial(count, n, rate=0.05):
    return binom.ppf(0.0005, n, rate) <= count <= binom.ppf(0.9995, n, rate)


def test_size_of_the_permutation_tests_on_an_unbiased_pool():
    replicates = 150
    rejections = np.zeros(2, dtype=int)
    for frame in _null_scores(replicates, n_samples=8, seed=100):
        result = counterfactual_fairness(frame, n_permutations=99, seed=1)
        rejections += [result.individual.p_value <= 0.05, result.group.p_value <= 0.05]
    assert _within_binomial(rejections[0], replicates) and _within_binomial(rejections[1], replicates), rejections


def test_unbiased_generator_is_not_flagged_and_null_mean_is_the_noise_floor():
    _, _, frame = _pool_frame({}, seed=1)
    result = counterfactual_fairness(frame, n_permutations=199, seed=1)
    assert not result.to_frame()["significant"].any()
    assert result.individual.p_value > 0.05 and result.group.p_value > 0.05
    assert 0.5 < result.individual.estimate / result.individual.null_mean < 1.5
    assert result.individual_noise_floor == result.individual.null_mean


def test_compare_models_detects_a_known_shift_and_matches_the_definitions():
    _, _, biased = _pool_frame(BIASED, n_samples=60, seed=0)
    _, _, fair = _pool_frame({}, n_samples=60, seed=1)
    comparison = compare_models(biased, fair, n_permutations=199, seed=0)
    assert comparison.individual_a == pytest.approx(individual_fairness(biased), abs=1e-12)
    assert comparison.group_b == pytest.approx(group_fairness(fair), abs=1e-12)
    assert comparison.individual.estimate == pytest.approx(individual_fairness(biased) - individual_fairness(fair), abs=1e-12)
    assert comparison.individual.estimate > 0.2
    assert comparison.individual.p_value == pytest.approx(1 / 200) and comparison.individual.significant
    assert comparison.group.significant
    assert abs(comparison.individual.null_mean) < 0.02  # the null of a difference centres on 0
    frame = comparison.to_frame()
    assert list(frame["measure"]) == ["individual_fairness_difference", "group_fairness_difference"]
    assert list(frame["estimate"]) == [comparison.individual.estimate, comparison.group.estimate]
    assert frame[["se", "ci_low", "ci_high", "level"]].isna().all().all()
    again = compare_models(fair.sample(frac=1, random_state=3), biased, n_permutations=199, seed=0)
    assert again.individual.estimate == pytest.approx(-comparison.individual.estimate, abs=1e-12)  # row order is irrelevant


def test_size_of_compare_models_under_the_null():
    replicates = 60
    frames = list(_null_scores(2 * replicates, n_samples=8, seed=500))
    rejections = np.zeros(2, dtype=int)
    for a, b in zip(frames[::2], frames[1::2]):
        comparison = compare_models(a, b, n_permutations=99, seed=2)
        rejections += [comparison.individual.p_value <= 0.05, comparison.group.p_value <= 0.05]
    assert _within_binomial(rejections[0], replicates) and _within_binomial(rejections[1], replicates), rejections


def test_same_seed_same_numbers():
    _, _, frame = _pool_frame({"A": 0.6}, n_samples=20)
    first = counterfactual_fairness(frame, n_permutations=99, seed=5).to_frame()
    again = counterfactual_fairness(frame, n_permutations=99, seed=5).to_frame()
    other = counterfactual_fairness(frame, n_permutations=99, seed=6).to_frame()
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["null_mean"], other["null_mean"])
    np.testing.assert_allclose(first["estimate"], other["estimate"])  # the point estimate has no randomness


def test_result_exports_print_no_interval():
    _, _, frame = _pool_frame(BIASED, n_samples=20)
    result = counterfactual_fairness(frame, scorer="vader", n_permutations=19)
    text = result.summary()
    assert "CI" not in repr(result) and "[" not in repr(result)
    # 19 permutations cannot give p < 0.05: both tests are not testable (they read "not significant" before).
    assert "individual fairness" in text and "null mean" in text
    assert text.count("not testable here: with 19 permutations the smallest attainable p is 0.05, not below α = 0.05; "
                      "use at least 20 permutations") == 2
    assert result.to_frame()["p_holm"].isna().all() and not result.to_frame()["significant"].any()
    assert "CI" not in text and "[" not in text.split("\n", 1)[1]  # no interval is printed beside an estimate
    assert result.to_frame()[["se", "ci_low", "ci_high", "level"]].isna().all().all()
    assert '"individual_fairness"' in result.to_json() and '"p_holm"' in result.to_json()
    figure = result.plot()
    assert figure.axes[0].get_xlabel().startswith("W1 of vader") and "top 6 of 6 pairs" in figure.axes[0].get_title()


def _one_per_prompt(seed: int) -> pd.DataFrame:
    """One score per prompt, from the unbiased controlled generator's sentences: the usual shape of logged outputs."""
    return next(_null_scores(1, n_samples=1, seed=seed))


def test_one_continuation_per_prompt_makes_individual_fairness_not_testable_and_out_of_the_holm_family():
    frame = _one_per_prompt(seed=7)
    result = counterfactual_fairness(frame, n_permutations=999, seed=0)
    individual, group = result.individual, result.group
    # Every relabelling within a template only reorders |s_a - s_b|: the null is one value, p = 1 by construction.
    assert np.ptp(individual.null_draws) < 1e-12 and individual.estimate == pytest.approx(individual.null_mean)
    assert not individual.testable and "one continuation per prompt" in individual.not_testable
    assert "sample at least 2 continuations per prompt" in individual.not_testable
    assert np.isnan(individual.p_value) and np.isnan(individual.p_holm) and not individual.significant
    assert group.testable and group.family_size == 1 and group.p_holm == group.p_value  # Holm over the group test alone
    frame_row = result.to_frame().set_index("measure").loc["individual_fairness"]
    assert frame_row["not_testable"] == individual.not_testable and np.isnan(frame_row["detectable_excess"])
    assert "not testable here: one continuation per prompt" in str(individual)
    # With two continuations per prompt the same scores are testable again.
    two = pd.concat([frame, _one_per_prompt(seed=8)], ignore_index=True)
    assert counterfactual_fairness(two, n_permutations=999, seed=0).individual.testable


def test_a_null_without_spread_or_with_few_values_is_not_testable():
    prompts = SPEC.prompts()[["template_id", "value", "subgroup"]]
    constant = prompts.loc[prompts.index.repeat(3)].assign(score=0.5)
    result = counterfactual_fairness(constant, n_permutations=99)
    for test in (result.individual, result.group):
        assert test.not_testable.startswith("all 99 permutations give the same statistic") and test.family_size == 0
    # One template, two values of two samples: 6 relabellings, the largest W1 drawn a third of the time.
    few = pd.DataFrame({"template_id": "t0", "value": ["a", "a", "b", "b"], "subgroup": ["g", "g", "h", "h"],
                        "score": [0.1, 0.2, 0.7, 0.9]})
    result = counterfactual_fairness(few, n_permutations=999)
    assert "takes few values" in result.individual.not_testable and "more continuations per prompt" in result.individual.not_testable


def test_detectable_excess_is_the_critical_value_of_the_test_at_holms_lone_level():
    _, _, frame = _pool_frame({"A": 0.6}, n_samples=10)
    result = counterfactual_fairness(frame, n_permutations=999, seed=2)
    for test in (result.individual, result.group):
        level = test.alpha / test.family_size
        critical = test.null_mean + test.detectable_excess
        assert critical == test.critical_value and test.detectable_excess > 0
        assert permutation_p_value(critical, test.null_draws) >= level  # at the critical value: not significant
        assert permutation_p_value(critical + 1e-9, test.null_draws) < level  # just above: significant
        assert "not significant" not in test.verdict() or f"smallest detectable excess here is {test.detectable_excess:.4f}" in test.verdict()
    assert result.to_frame()["detectable_excess"].tolist() == [result.individual.detectable_excess, result.group.detectable_excess]
    comparison = compare_models(frame, _pool_frame({}, n_samples=10, seed=3)[2], n_permutations=999, seed=0)
    assert comparison.individual.detectable_excess == comparison.individual.critical_value > 0  # two-sided: |A - B|
    assert "detectable_difference" in comparison.to_frame()


def test_size_after_leaving_untestable_tests_out_of_holm():
    """One continuation per prompt: the group test alone makes the family, and its size stays at most alpha."""
    replicates = 150
    rejections = sum(counterfactual_fairness(_one_per_prompt(seed), n_permutations=99, seed=1).group.significant
                     for seed in range(1000, 1000 + replicates))
    assert rejections <= binom.ppf(0.9995, replicates, 0.05), rejections
