"""Bad predictor_functions: each error names the column and says what to do."""

from __future__ import annotations

import numpy as np
import pytest

from fairpath import FairpathInputError
from fairpath.causal import decompose
from fairpath.datasets import make_binary_sfm


def _score(frame):
    return 1 / (1 + np.exp(-(frame["z1"] + frame["w1"])))


@pytest.fixture(scope="module")
def sample():
    sample = make_binary_sfm(300, seed=0)
    return sample.data.assign(score=_score(sample.data)), sample.sfm


@pytest.mark.parametrize(("functions", "message"), [
    ({"y": _score}, r"names 'y', which is not among the predictors \['score'\].*never for Y"),
    ({"other": _score}, r"names 'other', which is not among the predictors"),
    ({"score": 0.5}, r"predictor_functions\['score'\] is a float, not a function"),
    ([_score], r"must map predictor columns to functions, got list"),
    ({"score": lambda frame: _score(frame) + 0.01}, r"does not reproduce column 'score': it differs on 300 of 300 rows \(at row \d+"),
    ({"score": lambda frame: _score(frame)[:10]}, r"returned 10 values for 300 rows as given; it must return one value per row"),
    ({"score": lambda frame: frame["nope"]}, r"predictor_functions\['score'\] failed on the data as given: KeyError"),
])
def test_bad_functions(sample, functions, message):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match=message):
        decompose(data, sfm, ["score"], predictor_functions=functions, learner="linear")


def test_non_finite_values_at_a_counterfactual_level(sample):
    data, sfm = sample

    def breaks_when_x_changes(frame):
        values = _score(frame).to_numpy().copy()
        if frame["x"].nunique() == 1:
            values[0] = np.nan
        return values

    with pytest.raises(FairpathInputError, match=r"returned non-finite values with x set to 0"):
        decompose(data, sfm, ["score"], predictor_functions={"score": breaks_when_x_changes}, learner="linear")
