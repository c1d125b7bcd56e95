"""Bad input to the audit: each is reported before any model is fitted."""

import numpy as np
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.parity import audit


@pytest.fixture(scope="module")
def sample():
    sample = make_binary_sfm(400, seed=0)
    sample.data["score"] = sample.outcome_mean(sample.data)
    return sample


def test_bn_entry_other_than_de_ie_se(sample):
    with pytest.raises(FairpathInputError, match="business-necessity entry 'TE' is not a pathway"):
        audit(sample.data, sample.sfm, ["score"], "SE,TE", progress=False)


def test_predictor_not_numeric(sample):
    data = sample.data.assign(score=np.where(sample.data["score"] > 0.5, "high", "low"))
    with pytest.raises(FairpathInputError, match="predictor column 'score' is not numeric"):
        audit(data, sample.sfm, ["score"], "SE", progress=False)


def test_predictor_with_nan(sample):
    data = sample.data.copy()
    data.loc[:4, "score"] = np.nan
    with pytest.raises(FairpathInputError, match=r"'score': 5"):
        audit(data, sample.sfm, ["score"], "SE", progress=False)


def test_predictor_named_as_the_outcome(sample):
    with pytest.raises(FairpathInputError, match="predictor 'y' is the outcome column itself"):
        audit(sample.data, sample.sfm, ["y"], "SE", progress=False)


def test_no_predictor(sample):
    with pytest.raises(FairpathInputError, match="no predictor column given"):
        audit(sample.data, sample.sfm, [], "SE", progress=False)


def test_empty_bin(sample):
    data = sample.data.copy()
    top = data["score"] > data["score"].quantile(0.9)
    data.loc[top, "x"] = 1
    with pytest.raises(FairpathInputError, match=r"bin .* of predictor 'score' has no rows with x = [01] .*use fewer bins"):
        audit(data, sample.sfm, ["score"], "SE", progress=False)
