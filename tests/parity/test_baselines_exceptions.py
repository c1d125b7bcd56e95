"""Bad input to the baseline predictors."""

import numpy as np
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.parity import GroupThresholdPredictor, UnconstrainedPredictor


@pytest.mark.parametrize("rate", [0, 1, -0.2])
def test_selection_rate_outside_0_1(rate):
    with pytest.raises(FairpathInputError, match="selection_rate must lie in"):
        GroupThresholdPredictor(rate).fit([0.1, 0.2], ["a", "b"])


def test_unseen_group():
    model = GroupThresholdPredictor(0.5).fit([0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"])
    with pytest.raises(FairpathInputError, match=r"group\(s\) \['c'\] were not seen by fit"):
        model.predict([0.5], ["c"])


def test_lengths_differ():
    with pytest.raises(FairpathInputError, match=r"scores \(3\) and groups \(2\) differ in length"):
        GroupThresholdPredictor(0.5).fit([0.1, 0.2, 0.3], ["a", "b"])


def test_rows_outside_the_two_groups_are_refused():
    sample = make_binary_sfm(300, seed=0)
    data = sample.data.copy()
    data["x"] = np.where(np.arange(len(data)) < 5, 7, data["x"])
    with pytest.warns(UserWarning, match="5 rows excluded"):
        with pytest.raises(FairpathInputError, match="5 rows have x neither 0 nor 1"):
            UnconstrainedPredictor(learner="linear").fit_predict(data, sample.sfm)


@pytest.mark.parametrize("options, message", [
    ({"selection_rate": "0.3"}, r"selection_rate must be a number, got '0\.3' \(str\)"),
    ({"selection_rate": 1.5}, r"selection_rate must lie in \(0, 1\), got 1\.5"),
    ({"n_folds": 1.5}, r"n_folds must be an integer, got 1\.5 \(float\)"),
    ({"random_state": 2**32}, "random_state must be an integer ≤ 4294967295"),
])
def test_settings_are_checked_before_fitting(options, message):
    sample = make_binary_sfm(200, seed=0)
    with pytest.raises(FairpathInputError, match=message):
        UnconstrainedPredictor(**options).fit_predict(sample.data, sample.sfm)
