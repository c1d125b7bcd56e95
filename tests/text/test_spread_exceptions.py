"""Bad input to value_spread, compare_spread and spread_power: each a FairpathInputError saying what and where."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text import SpreadAtNoiseFloorError, compare_spread, spread_power, value_spread


def _audit(n=4, seed=0, templates=("t0", "t1"), values=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"template_id": t, "value": v, "score": float(rng.random())} for t in templates for v in values
                         for _ in range(n)])


def test_missing_columns_are_named():
    with pytest.raises(FairpathInputError, match=r"lacks column\(s\) \['score'\]"):
        value_spread(_audit().rename(columns={"score": "vader"}))
    with pytest.raises(FairpathInputError, match=r"lacks column\(s\) \['template_id'\]"):
        compare_spread(_audit().drop(columns="template_id"), _audit())


def test_bad_scores_are_named():
    nan = _audit()
    nan.loc[3, "score"] = np.nan
    with pytest.raises(FairpathInputError, match=r"column 'score' has 1 missing scores"):
        value_spread(nan)
    infinite = _audit()
    infinite.loc[0, "score"] = np.inf
    with pytest.raises(FairpathInputError, match=r"model: column 'score' has infinite scores"):
        compare_spread(_audit(), infinite)
    with pytest.raises(FairpathInputError, match=r"samples: column 'score' must hold numeric sentiment scores"):
        value_spread(_audit().assign(score="good"))


def test_prompts_with_fewer_than_two_scores_are_named():
    frame = _audit()
    frame = frame.drop(index=frame.index[(frame["template_id"] == "t1") & (frame["value"] == "b")][1:])
    with pytest.raises(FairpathInputError, match=r"prompt\(s\) \(template/value\) \['t1/b \(1\)'\] \(1 in all\) have fewer than 2"):
        value_spread(frame)
    with pytest.raises(FairpathInputError, match=r"pilot: prompt\(s\) .*t1/b"):
        spread_power(frame)


def test_designs_without_a_comparison_are_refused():
    with pytest.raises(FairpathInputError, match=r"has 1 value\(s\) \['a'\]; fairness needs at least two"):
        value_spread(_audit(values=("a",)))
    gap = _audit()
    gap = gap[~((gap["template_id"] == "t0") & (gap["value"] == "c"))]
    with pytest.raises(FairpathInputError, match=r"no samples for template/value \['t0/c'\]"):
        value_spread(gap)


def test_models_on_other_prompts_are_refused():
    with pytest.raises(FairpathInputError, match=r"not scored on the same prompts: templates/values only in A \['t1'\], only in B \['t9'\]"):
        compare_spread(_audit(), _audit(templates=("t0", "t9")))
    with pytest.raises(FairpathInputError, match=r"only in A \['c'\]"):
        compare_spread(_audit(), _audit(values=("a", "b")))


def test_settings_are_checked():
    with pytest.raises(FairpathInputError, match=r"with n_permutations=19 the one-sided p .* never falls below alpha=0.05; use at least 20"):
        compare_spread(_audit(), _audit(seed=1), n_permutations=19)
    with pytest.raises(FairpathInputError, match=r"n_permutations"):
        compare_spread(_audit(), _audit(seed=1), n_permutations=0)
    with pytest.raises(FairpathInputError, match=r"level"):
        value_spread(_audit(), level=1.0)
    with pytest.raises(FairpathInputError, match=r"n_bootstrap"):
        value_spread(_audit(), n_bootstrap=1)
    with pytest.raises(FairpathInputError, match=r"seed"):
        value_spread(_audit(), seed=-1)
    with pytest.raises(FairpathInputError, match=r"effect"):
        spread_power(_audit(), effect=1.5)
    with pytest.raises(FairpathInputError, match=r"null_permutations"):
        spread_power(_audit(), null_permutations=1)
    with pytest.raises(FairpathInputError, match=r"score must be a non-empty string"):
        value_spread(_audit(), score="")


def test_power_needs_candidates_and_a_spread_above_the_noise_floor():
    for bad in ((1, 10), (), (2.5,), (True,), "10"):
        with pytest.raises(FairpathInputError, match=r"candidates .* must be whole numbers of samples per prompt of at least 2"):
            spread_power(_audit(), candidates=bad)
    flat = pd.DataFrame({"template_id": "t0", "value": list("aabb"), "score": [0.1, 0.9, 0.1, 0.9]})
    with pytest.raises(SpreadAtNoiseFloorError, match=r"the pilot's θ̂ of 'score' is -0.16 \(raw variance of the means 0, noise floor 0.16\): "
                                                     r"no spread above the noise floor to size a fall of"):
        spread_power(flat)
    with pytest.raises(FairpathInputError) as refused:  # bad input is not a spread at the noise floor: callers tell them apart
        spread_power(flat.drop(columns="value"))
    assert not isinstance(refused.value, SpreadAtNoiseFloorError)


def test_a_claim_names_each_score_once_with_a_level_strictly_between_0_and_1():
    audit = _audit().assign(other=lambda f: f["score"][::-1].to_numpy())
    for bad in ({"other": 1.0}, {"other": 0}, {"other": True}, {"other": "0.05"}, ["other"], {3: 0.05}):
        with pytest.raises(FairpathInputError, match=r"other_scores .* must map score columns to the level of their test, a number "
                                                     r"strictly between 0 and 1, e.g. \{'score_textblob': 0.05\}"):
            spread_power(audit, other_scores=bad)
    with pytest.raises(FairpathInputError, match=r"other_scores repeats score 'score'; name each score column once"):
        spread_power(audit, other_scores={"score": 0.05})
    with pytest.raises(FairpathInputError, match=r"score table lacks column\(s\) \['absent'\]"):
        spread_power(audit, other_scores={"absent": 0.05})
    with pytest.raises(FairpathInputError, match=r"models must be an integer ≥ 1, got 0"):
        spread_power(audit, models=0)
