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
