"""Power of the paired comparison of two models' individual fairness (fairpath.text._power)."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text import compare_models, counterfactual_fairness, individual_fairness_power
from fairpath.text._power import _individual_equal


def _base(n_templates=3, n_values=5, per_prompt=20, bias=0.15, seed=1):
    rng = np.random.default_rng(seed)
    shift = np.linspace(-bias, bias, n_values)
    return pd.DataFrame([{"template_id": f"t{t}", "value": f"v{v}", "subgroup": f"v{v}", "sample_index": k,
                          "score": float(np.clip(rng.beta(2, 2) + shift[v], 0, 1))}
                         for t in range(n_templates) for v in range(n_values) for k in range(per_prompt)])


def test_fast_statistic_equals_compare_models():
    rng = np.random.default_rng(0)
    a, b = rng.random((3, 4, 5)), rng.random((3, 4, 5))
    frame = lambda x: pd.DataFrame([{"template_id": t, "value": v, "subgroup": v, "score": x[t, v, k]}
                                    for t in range(3) for v in range(4) for k in range(5)])
    comparison = compare_models(frame(a), frame(b), n_permutations=9)
    fast = _individual_equal(np.sort(a, axis=-1)) - _individual_equal(np.sort(b, axis=-1))
    assert fast == pytest.approx(comparison.individual.estimate, abs=1e-12)


def test_power_result_and_the_shrink_that_removes_the_stated_share_of_the_excess():
    base = _base()
    result = individual_fairness_power(base, candidates=(5, 40), n_replicates=20, n_permutations=199, seed=3)
    measured = counterfactual_fairness(base, n_permutations=199, seed=3).individual
    assert result.base_estimate == pytest.approx(measured.estimate)
    assert result.base_excess == pytest.approx(result.base_estimate - result.base_null_mean)
    assert result.shrink == pytest.approx(0.3 * result.base_excess / result.base_estimate)
    table = result.table
    assert list(table.columns) == ["n", "power", "se", "rejections"]
    assert np.allclose(table["se"], np.sqrt(table["power"] * (1 - table["power"]) / 20))
    assert result.to_dict()["table"][0]["n"] == 5
    again = individual_fairness_power(base, candidates=(5, 40), n_replicates=20, n_permutations=199, seed=3)
    assert again.table.equals(table)  # seeded


def test_no_effect_rejects_at_about_alpha():
    result = individual_fairness_power(_base(n_templates=2, n_values=4), candidates=(10,), effect=0.0, alpha=0.05,
                                       n_replicates=200, n_permutations=99, seed=5)
    power = result.table["power"].iloc[0]
    assert result.shrink == 0.0 and abs(power - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / 200)


def test_power_settings_name_the_remedy():
    with pytest.raises(FairpathInputError, match=r"candidates \[1\] must be .* at least 2"):
        individual_fairness_power(_base(), candidates=(1,))
    with pytest.raises(FairpathInputError, match=r"with n_permutations=50 no p-value falls below alpha=0.01; use at least 100"):
        individual_fairness_power(_base(), n_permutations=50)
    with pytest.raises(FairpathInputError, match=r"effect must"):
        individual_fairness_power(_base(), effect=1.5)
    with pytest.raises(FairpathInputError, match=r"no bias above the noise floor to reduce"):
        same = pd.DataFrame([{"template_id": "t0", "value": v, "score": s} for v in ("a", "b") for s in (0.1, 0.5, 0.9)])
        individual_fairness_power(same, n_replicates=1)  # every value's scores alike: W1 and its floor are 0
