import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._metrics import compare_models, counterfactual_fairness, individual_fairness, wasserstein1


def _frame():
    return pd.DataFrame({"template_id": ["t0"] * 4 + ["t1"] * 4, "value": ["a", "a", "b", "b"] * 2,
                         "subgroup": ["a", "a", "b", "b"] * 2, "score": np.linspace(0, 1, 8)})


def test_missing_columns_and_scores():
    with pytest.raises(FairpathInputError, match=r"lacks column\(s\) \['subgroup'\]"):
        individual_fairness(_frame().drop(columns="subgroup"))
    frame = _frame()
    frame.loc[3, "score"] = np.nan
    with pytest.raises(FairpathInputError, match="column 'score' has 1 missing scores"):
        individual_fairness(frame)


def test_one_value_and_incomplete_design():
    frame = _frame()
    with pytest.raises(FairpathInputError, match=r"has 1 value\(s\) \['a'\]; fairness needs at least two"):
        individual_fairness(frame[frame["value"] == "a"])
    with pytest.raises(FairpathInputError, match=r"no samples for template/value \['t1/b'\]"):
        individual_fairness(frame[~((frame["template_id"] == "t1") & (frame["value"] == "b"))])


def test_value_in_two_subgroups_and_empty_samples():
    frame = _frame()
    frame.loc[0, "subgroup"] = "b"
    with pytest.raises(FairpathInputError, match=r"values \['a'\] appear with several subgroups"):
        individual_fairness(frame)
    with pytest.raises(FairpathInputError, match="W1 needs two non-empty samples, got sizes 0 and 2"):
        wasserstein1([], [1, 2])


def test_permutations_are_bounded():
    with pytest.raises(FairpathInputError, match=r"n_permutations must be an integer ≤ 1,000,000 \(fairpath's bound\), got 1,000,001"):
        counterfactual_fairness(_frame(), n_permutations=1_000_001)


@pytest.mark.parametrize("n_permutations, message", [(0, "n_permutations must be an integer ≥ 1, got 0"),
                                                     (-5, "n_permutations must be an integer ≥ 1, got -5"),
                                                     (2.5, r"n_permutations must be an integer, got 2\.5 \(float\)"),
                                                     (True, r"n_permutations must be an integer, got True \(bool\)")])
def test_bad_number_of_permutations(n_permutations, message):
    with pytest.raises(FairpathInputError, match=message):
        counterfactual_fairness(_frame(), n_permutations=n_permutations)
    with pytest.raises(FairpathInputError, match=message):
        compare_models(_frame(), _frame(), n_permutations=n_permutations)


def test_bad_alpha():
    with pytest.raises(FairpathInputError, match=r"alpha must lie in \(0, 1\), got 0"):
        counterfactual_fairness(_frame(), alpha=0)


def test_compare_models_needs_the_same_prompts():
    other = _frame()
    other["template_id"] = other["template_id"].replace({"t1": "t9"})
    with pytest.raises(FairpathInputError, match=r"not scored on the same prompts: templates/values only in A \['t1'\], only in B \['t9'\]"):
        compare_models(_frame(), other)
    regrouped = _frame()
    regrouped["subgroup"] = "a"
    with pytest.raises(FairpathInputError, match=r"values with another subgroup \['b'\]"):
        compare_models(_frame(), regrouped)
    extra = pd.concat([_frame(), _frame().assign(value="c", subgroup="c")])
    with pytest.raises(FairpathInputError, match=r"only in B \['c'\]"):
        compare_models(_frame(), extra)
    with pytest.raises(FairpathInputError, match=r"score table lacks column\(s\) \['score'\]"):
        compare_models(_frame(), _frame().drop(columns="score"))
