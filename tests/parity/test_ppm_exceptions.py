"""Bad input to the predictive parity measures."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.causal import SFM
from fairpath.parity import predictive_parity, quantile_bins

SFM_XY = SFM(x="x", x0="a", x1="b", y="y")


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    n = 400
    return pd.DataFrame({"x": np.where(rng.random(n) < 0.5, "a", "b"), "score": rng.random(n),
                         "y": rng.integers(0, 2, n)})


def test_non_numeric_predictor(data):
    with pytest.raises(FairpathInputError, match="predictor column 'label' is not numeric"):
        predictive_parity(data.assign(label="high"), SFM_XY, "label")


def test_predictor_with_nan_names_the_count(data):
    score = data["score"].copy()
    score.iloc[:3] = np.nan
    with pytest.raises(FairpathInputError, match=r"missing values \(NaN\).*'score': 3"):
        predictive_parity(data.assign(score=score), SFM_XY, "score")


def test_missing_predictor_column(data):
    with pytest.raises(FairpathInputError, match=r"column\(s\) \['nope'\] not found"):
        predictive_parity(data, SFM_XY, "nope")


def test_empty_bin_for_one_group(data):
    # The top decile of the score holds only group a: its gap is undefined.
    top = data["score"] > data["score"].quantile(0.9)
    skewed = data.assign(x=np.where(top, "a", data["x"]))
    with pytest.raises(FairpathInputError, match=r"bin \(0\.\d+, inf\] of predictor 'score' has no rows with x = 'b'.*fewer bins"):
        predictive_parity(skewed, SFM_XY, "score", n_bins=10)


@pytest.mark.parametrize("n_bins, message", [(1, "n_bins must be an integer ≥ 2, got 1"), (2.5, r"n_bins must be an integer, got 2\.5 \(float\)"),
                                             ("10", "n_bins must be an integer, got '10'"), (True, r"n_bins must be an integer, got True \(bool\)")])
def test_bad_number_of_bins(n_bins, message):
    with pytest.raises(FairpathInputError, match=message):
        quantile_bins(np.arange(10.0), n_bins)


def test_bad_number_of_bootstrap_draws(data):
    with pytest.raises(FairpathInputError, match="n_boot must be an integer ≥ 2, got 1"):
        predictive_parity(data, SFM_XY, "score", n_boot=1)
    with pytest.raises(FairpathInputError, match=r"n_boot must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"):
        predictive_parity(data, SFM_XY, "score", n_boot=100_001)


def test_predictor_is_one_column_name(data):
    with pytest.raises(FairpathInputError, match=r"predictor must be one column name \(a string\), got \['score'\] \(list\)"):
        predictive_parity(data, SFM_XY, ["score"])
