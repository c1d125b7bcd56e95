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
    with pytest.raises(FairpathInputError, match="business-necessity entry .XE. is not a pathway"):
        ConstrainedLearner(synthetic.sfm, bn="XE", targets=TARGETS).fit(synthetic.data)
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


# -- issue 11: degenerate input ---------------------------------------------------------------------

def test_constant_outcome_infinite_values_and_tiny_groups():
    import numpy as np
    import pandas as pd

    synthetic = make_binary_sfm(300, seed=0)
    data, sfm = synthetic.data, synthetic.sfm
    with pytest.raises(FairpathInputError, match=r"outcome column 'y' is constant \(0\.0\)"):
        ConstrainedLearner(sfm, targets=TARGETS).fit(data.assign(y=0.0))
    bad = data.copy()
    bad.loc[:1, "z2"] = np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('z2': 2\)"):
        ConstrainedLearner(sfm, targets=TARGETS).fit(bad)
    one = pd.concat([data[data.x == 0], data[data.x == 1].head(1)])
    with pytest.raises(FairpathInputError, match=r"group x=1 has 1 rows; fitting needs at least 10 \(10 per group\): use more data or merge levels"):
        ConstrainedLearner(sfm, targets=TARGETS).fit(one)
    twelve = pd.concat([data[data.x == 0], data[data.x == 1].head(12)])  # enough in all, too few once split
    with pytest.raises(FairpathInputError, match=r"part of the λ choice \(holdout=0\.3\)"):
        ConstrainedLearner(sfm, targets=TARGETS, random_state=1).fit(twelve)


def test_seed_and_sfm_arguments():
    synthetic = make_binary_sfm(300, seed=0)
    with pytest.raises(FairpathInputError, match="random_state must be an integer ≥ 0, got -1"):
        ConstrainedLearner(synthetic.sfm, targets=TARGETS, random_state=-1).fit(synthetic.data)
    with pytest.raises(FairpathInputError, match="sfm must be a fairpath.causal.SFM, got dict"):
        ConstrainedLearner(synthetic.sfm.to_dict(), targets=TARGETS).fit(synthetic.data)


@pytest.mark.parametrize("options, message", [
    ({"lambdas": (0.0, -1.0)}, r"each λ in lambdas must be a number ≥ 0, got -1\.0 \(float\)"),
    ({"lambdas": (1.0, 0.0)}, r"lambdas must increase .*got \[1\.0, 0\.0\]; sort them"),
    ({"lambdas": ()}, "lambdas is empty"),
    ({"lambdas": "0,1"}, "lambdas must be a list of penalties ≥ 0"),
    ({"tolerance": -0.01}, "tolerance must be a number ≥ 0"),
    ({"l2": -1}, "l2 must be a number ≥ 0"),
    ({"smooth": 0}, r"smooth must lie in \(0, inf\]"),
    ({"random_state": 2**32}, "must be an integer ≤ 4294967295, got 4294967296"),
])
def test_penalties_and_seed(options, message):
    synthetic = make_binary_sfm(300, seed=0)
    with pytest.raises(FairpathInputError, match=message):
        ConstrainedLearner(synthetic.sfm, bn="SE", targets=TARGETS, **options).fit(synthetic.data)


@pytest.mark.parametrize("options, message", [
    ({"bn": 3}, "the business-necessity set must be a text such as 'SE' or 'IE,SE' or a list of pathways such as \\[.IE., .SE.\\], got 3"),
    ({"targets": [0.1]}, r"targets must be a mapping pathway -> Ctf-CE\(y\)"),
    ({"targets": {"DE": 0.0}}, r"targets lack the BN pathway\(s\) \['SE'\]"),
    ({"targets": {"SE": "0.1"}}, r"the target of SE must be a number, got '0\.1' \(str\)"),
])
def test_bn_and_targets(options, message):
    synthetic = make_binary_sfm(300, seed=0)
    with pytest.raises(FairpathInputError, match=message):
        ConstrainedLearner(synthetic.sfm, **{"bn": "SE", **options}).fit(synthetic.data)
