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


# -- issue 11 -------------------------------------------------------------------------------------

def test_sfm_as_a_dict_and_numpy_data(sample):
    with pytest.raises(FairpathInputError, match=r"sfm must be a fairpath\.causal\.SFM, got dict; build one with SFM\(\*\*sfm\)"):
        audit(sample.data, sample.sfm.to_dict(), ["score"], "SE", progress=False)
    with pytest.raises(FairpathInputError, match="data must be a pandas DataFrame, got ndarray"):
        audit(sample.data.to_numpy(), sample.sfm, ["score"], "SE", progress=False)


@pytest.mark.parametrize("options, message", [
    ({"seed": None}, "seed must be a non-negative integer, got None"),
    ({"n_bins": 2.5}, r"n_bins must be an integer, got 2\.5 \(float\)"),
    ({"n_boot": 1}, "n_boot must be an integer ≥ 2, got 1"),
])
def test_argument_types(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        audit(sample.data, sample.sfm, "score", "SE", progress=False, **options)


def test_infinite_predictor_values(sample):
    data = sample.data.copy()
    data.loc[:4, "score"] = np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('score': 5\)"):
        audit(data, sample.sfm, "score", "SE", progress=False)


@pytest.mark.parametrize("label", ["", "   ", None, 3])
def test_data_label_that_names_no_data(sample, label):
    with pytest.raises(FairpathInputError, match="data_label must be a non-empty string naming the data the rows are"):
        audit(sample.data, sample.sfm, ["score"], "SE", data_label=label, progress=False)
