import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._metrics import counterfactual_fairness, individual_fairness, wasserstein1


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
    with pytest.raises(FairpathInputError, match="n_bootstrap must be at least 2"):
        counterfactual_fairness(_frame(), n_bootstrap=1)
