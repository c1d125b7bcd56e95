"""Bad input to constrained learning."""

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.repair import ConstrainedLearner

TARGETS = {"DE": 0.0, "IE": 0.0, "SE": 0.0}


def test_missing_sfm_column_and_extra_group():
    synthetic = make_binary_sfm(300, seed=0)
    with pytest.raises(FairpathInputError, match=r"column\(s\) \['w2'\] not found in the data"):
        ConstrainedLearner(synthetic.sfm, targets=TARGETS).fit(synthetic.data.drop(columns="w2"))
    data = synthetic.data.copy()
    data.loc[0, "x"] = 3
    with pytest.raises(FairpathInputError, match="must have exactly the levels 0 and 1"):
        ConstrainedLearner(synthetic.sfm, targets=TARGETS).fit(data)


def test_bad_bn_and_predict_before_fit():
    synthetic = make_binary_sfm(300, seed=0)
    with pytest.raises(FairpathInputError, match="BN set entries must be among"):
        ConstrainedLearner(synthetic.sfm, "XE", targets=TARGETS).fit(synthetic.data)
    with pytest.raises(FairpathInputError, match="not fitted yet"):
        ConstrainedLearner(synthetic.sfm).predict(synthetic.data)


def test_design_keeps_its_columns_on_a_subset_and_refuses_new_categories():
    import pandas as pd

    from fairpath.repair._constrained import _Design

    data = pd.DataFrame({"charge": ["F", "M", "M", "F"], "age": [20.0, 30.0, 40.0, 50.0]})
    design = _Design(data, ["charge", "age"])
    subset = design.covariate_matrix(data.iloc[[1, 2]])
    full = design.covariate_matrix(data)
    assert subset.shape == (2, 2)
    assert (subset == full[[1, 2]]).all()
    with pytest.raises(FairpathInputError, match=r"column 'charge' has categories \['X'\]"):
        design.covariate_matrix(pd.DataFrame({"charge": ["X"], "age": [1.0]}))
