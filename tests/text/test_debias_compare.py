"""The paired permutation test of two models' fairness: its statistic, its size and its power."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._metrics import group_fairness, individual_fairness
from fairpath.text.debias._compare import paired_fairness_test

TEMPLATES, VALUES = ["t0", "t1"], ["a", "b", "c", "d"]
SUBGROUP = {"a": "x", "b": "x", "c": "y", "d": "y"}


def _samples(rng, n=12, shift=None):
    rows = []
    for t in TEMPLATES:
        for v in VALUES:
            scores = rng.uniform(size=n) + (shift or {}).get(v, 0.0)
            rows += [{"template_id": t, "value": v, "subgroup": SUBGROUP[v], "sample_index": i, "score": s}
                     for i, s in enumerate(scores)]
    return pd.DataFrame(rows).sample(frac=1.0, random_state=0)  # row order must not matter


def test_statistics_are_the_audit_metrics():
    rng = np.random.default_rng(0)
    a, b = _samples(rng), _samples(rng, shift={"a": 0.5})
    result = paired_fairness_test(a, b, n_permutations=19, seed=0)
    assert result.individual_a == pytest.approx(individual_fairness(a)) and result.individual_b == pytest.approx(individual_fairness(b))
    assert result.group_a == pytest.approx(group_fairness(a)) and result.group_b == pytest.approx(group_fairness(b))
    assert result.individual_difference == pytest.approx(result.individual_a - result.individual_b)
    assert result.n_pairs == len(a)
    assert paired_fairness_test(a, b, n_permutations=19, seed=0) == result  # seeded


def test_size_under_the_null_and_power_against_a_biased_model():
    rng = np.random.default_rng(1)
    p_values = np.array([paired_fairness_test(_samples(rng), _samples(rng), n_permutations=99, seed=k).individual_p
                         for k in range(200)])
    # exact test: P(p <= 0.05) <= 0.05; 200 draws put the rejection count within 4 sd of 10
    assert (p_values <= 0.05).sum() <= 10 + 4 * np.sqrt(200 * 0.05 * 0.95)
    assert (p_values <= 0.05).sum() >= 2  # and not a test that never rejects
    biased = paired_fairness_test(_samples(rng, n=30), _samples(rng, n=30, shift={"a": 0.6, "c": -0.4}),
                                  n_permutations=199, seed=0)
    assert biased.individual_difference < 0 and biased.individual_p == pytest.approx(1 / 200)
    assert biased.group_p < 0.05


def test_unpaired_samples_are_refused():
    rng = np.random.default_rng(2)
    a = _samples(rng)
    with pytest.raises(FairpathInputError, match="not sampled on the same .template, value, sample_index. rows"):
        paired_fairness_test(a, a[a["sample_index"] > 0])
    with pytest.raises(FairpathInputError, match=r"lack column\(s\) \['subgroup'\]"):
        paired_fairness_test(a.drop(columns="subgroup"), a)
