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
    ({"n_boot": 100_001}, r"n_boot must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
])
def test_argument_types(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        audit(sample.data, sample.sfm, "score", "SE", progress=False, **options)


def test_infinite_predictor_values(sample):
    data = sample.data.copy()
    data.loc[:4, "score"] = np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('score': 5\)"):
        audit(data, sample.sfm, "score", "SE", progress=False)


@pytest.mark.parametrize("recode, scale", [(lambda y: 2 * y - 1, r"values \{-1, 1\}"), (lambda y: 100 * y, r"values \{0, 100\}")])
def test_outcome_not_on_the_predictor_scale(sample, recode, scale):
    data = sample.data.assign(y=recode(sample.data["y"]))
    with pytest.raises(FairpathInputError, match=rf"predictor column 'score' \(range \[0\.\d+, 0\.\d+\]\) is not on the scale of outcome column 'y' "
                                                 rf"\({scale}\); .*code a binary outcome 0/1 with predictions in \[0, 1\]"):
        audit(data, sample.sfm, ["score"], "SE", progress=False)


def test_predictor_not_on_the_outcome_scale(sample):
    data = sample.data.assign(percent=100 * sample.data["score"])
    with pytest.raises(FairpathInputError, match=r"predictor column 'percent' \(range \[[\d.]+, [\d.]+\]\) is not on the scale of outcome column 'y' \(values \{0, 1\}\)"):
        audit(data, sample.sfm, ["percent"], "SE", progress=False)


def test_dirty_predictor_names_the_token_row_and_remedy(sample):
    data = sample.data.astype({"score": object})
    data.loc[[7, 11], "score"] = "?"
    with pytest.raises(FairpathInputError, match=r"predictor column 'score' is not numeric: 2 of 400 non-missing cells are not numbers, "
                                                 r"token\(s\) '\?' \(2x\), the first in row 7 \(data row 8, line 9 .*--na-values TOKEN"):
        audit(data, sample.sfm, ["score"], "SE", progress=False)


@pytest.mark.parametrize("options, message", [
    ({"n_boot": 1}, "n_boot must be an integer ≥ 2, got 1"),
    ({"n_boot": 10**6}, "n_boot must be an integer ≤ 100,000"),
    ({"seed": 2**32}, "seed must be an integer ≤ 4294967295, got 4294967296"),
])
def test_draws_and_seed_bounds(sample, options, message):
    with pytest.raises(FairpathInputError, match=message):
        audit(sample.data, sample.sfm, ["score"], "SE", progress=False, **options)


@pytest.mark.parametrize("label", ["", "   ", None, 3])
def test_data_label_that_names_no_data(sample, label):
    with pytest.raises(FairpathInputError, match="data_label must be a non-empty string naming the data the rows are"):
        audit(sample.data, sample.sfm, ["score"], "SE", data_label=label, progress=False)
