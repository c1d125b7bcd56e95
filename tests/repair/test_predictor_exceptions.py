"""Bad input to the fair predictor: the floors and messages of the decomposition."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairpath import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.repair import FairPredictor


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(200, seed=0)


@pytest.mark.parametrize("options, message", [
    ({"n_folds": 2.0}, r"n_folds must be an integer, got 2\.0 \(float\); pass 2"),
    ({"random_state": None}, "random_state must be a non-negative integer, got None"),
    ({"learner": LogisticRegression}, r"learner must be None or a scikit-learn estimator instance.*; pass LogisticRegression\(\)"),
])
def test_arguments(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        FairPredictor(sample.sfm, bn="SE", engine="linear", **options).fit(sample.data)


def test_sfm_as_a_dict_and_numpy_data(sample):
    with pytest.raises(FairpathInputError, match="sfm must be a fairpath.causal.SFM, got dict"):
        FairPredictor(sample.sfm.to_dict()).fit(sample.data)
    with pytest.raises(FairpathInputError, match="training data must be a pandas DataFrame, got ndarray"):
        FairPredictor(sample.sfm).fit(sample.data.to_numpy())


def test_missing_column(sample):
    with pytest.raises(FairpathInputError, match=r"column\(s\) \['z2'\] not found in the training data"):
        FairPredictor(sample.sfm).fit(sample.data.drop(columns="z2"))


def test_small_groups_and_classes(sample):
    data = sample.data
    one = pd.concat([data[data.x == 0], data[data.x == 1].head(1)])
    with pytest.raises(FairpathInputError, match=r"group x=1 has 1 rows; 5-fold cross-fitting needs at least 50 \(10 per fold and group\)"):
        FairPredictor(sample.sfm, engine="linear").fit(one)
    rare = pd.concat([data[data.y == 0], data[(data.y == 1) & (data.x == 0)].head(1)])  # groups large enough for 2 folds
    with pytest.raises(FairpathInputError, match=r"class y=1 has 1 rows; 2-fold cross-fitting needs at least 2 \(one per fold\)"):
        FairPredictor(sample.sfm, engine="linear", n_folds=2).fit(rare)


def test_missing_and_infinite_values(sample):
    data = sample.data.copy()
    data.loc[:3, "z1"] = np.nan
    with pytest.raises(FairpathInputError, match=r"missing values \(NaN\) in used columns \('z1': 4\)"):
        FairPredictor(sample.sfm, engine="linear").fit(data)


@pytest.mark.parametrize("bn", ["SE", ["IE"], "Z"])
def test_a_bn_set_and_resolving_columns_together_are_refused(sample, bn):
    with pytest.raises(FairpathInputError, match=r"the BN set .* and the resolving columns \['z1', 'z2'\] are both given; give one"):
        FairPredictor(sample.sfm, bn=bn, resolving=["z1", "z2"], engine="linear").fit(sample.data)


@pytest.mark.parametrize("bn", [(), "none", None])
def test_resolving_columns_with_the_empty_bn_set_define_it(sample, bn):
    fitted = FairPredictor(sample.sfm, bn=bn, resolving=["z1", "z2"], engine="linear", learner=LogisticRegression(), n_folds=2).fit(sample.data)
    assert set(fitted.adapter_.resolving_) >= {"z1", "z2"}
