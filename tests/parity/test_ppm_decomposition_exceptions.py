"""Bad input to the predictive parity decomposition: clear errors naming the culprit."""

import numpy as np
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.causal import SFM
from fairpath.datasets import make_appendix_a2
from fairpath.parity._ppm_decomposition import ppm_decomposition


@pytest.fixture(scope="module")
def sample():
    sample = make_appendix_a2(600, seed=0)
    data = sample.data.copy()
    data["y_hat"] = sample.outcome_mean(data)
    data["y_x0"] = sample.potential_outcomes["y_x0"].to_numpy()
    return data, sample.sfm


def test_sfm_with_confounders_is_refused(sample):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match=r"without confounders Z.*\['w1'\]"):
        ppm_decomposition(data, SFM(x="x", x0=0, x1=1, y="y", z=["w1"], w=["w2"]), "y_hat", "y_x0")


def test_missing_predictor_column(sample):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match=r"\['score'\] not found in the data"):
        ppm_decomposition(data, sfm, "score", "y_x0")


def test_non_numeric_predictor(sample):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match="predictor column 'label' is not numeric"):
        ppm_decomposition(data.assign(label="high"), sfm, "label", "y_x0")


def test_predictor_with_missing_values(sample):
    data, sfm = sample
    broken = data.copy()
    broken.loc[broken.index[:3], "y_hat"] = np.nan
    with pytest.raises(FairpathInputError, match="'y_hat': 3"):
        ppm_decomposition(broken, sfm, "y_hat", "y_x0")


def test_unknown_counterfactual_column(sample):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match="y_x0 column 'y_cf' not in the data"):
        ppm_decomposition(data, sfm, "y_hat", "y_cf")


def test_counterfactual_array_of_wrong_length(sample):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match=r"one value per row of the data \(600\), got shape \(10,\)"):
        ppm_decomposition(data, sfm, "y_hat", np.zeros(10))


def test_counterfactual_missing_for_x1_rows(sample):
    data, sfm = sample
    values = data["y_x0"].to_numpy().copy()
    x1_rows = np.flatnonzero(data["x"].to_numpy() == 1)[:4]
    values[x1_rows] = np.nan
    with pytest.raises(FairpathInputError, match="y_x0 is missing for 4 row"):
        ppm_decomposition(data, sfm, "y_hat", values)


def test_counterfactual_missing_for_x0_rows_is_fine(sample):
    data, sfm = sample
    values = np.where(data["x"] == 0, np.nan, data["y_x0"])
    result = ppm_decomposition(data, sfm, "y_hat", values, n_bins=4, n_boot=0)
    assert np.isfinite(result.integrated["ippm"].estimate)


def test_bin_without_one_group_raises_by_default(sample):
    data, sfm = sample
    shifted = data.assign(y_hat=data["y_hat"] + 100 * data["x"])
    with pytest.raises(FairpathInputError, match="hold no rows of x=0 or of x=1.*empty_bins='drop'"):
        ppm_decomposition(shifted, sfm, "y_hat", "y_x0", n_bins=4)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_boot": 1}, "n_boot must be 0"),
        ({"n_boot": 100_001}, r"n_boot must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
        ({"level": 95}, r"level must lie in \(0, 1\), got 95\.0"),
        ({"empty_bins": "skip"}, "unknown empty_bins 'skip'; use one of raise, drop"),
        ({"n_bins": 1}, "n_bins must be an integer ≥ 2, got 1"),
    ],
)
def test_bad_settings(sample, kwargs, message):
    data, sfm = sample
    with pytest.raises(FairpathInputError, match=message):
        ppm_decomposition(data, sfm, "y_hat", "y_x0", **kwargs)


def test_unknown_quantity_or_bin_in_estimate(sample):
    data, sfm = sample
    result = ppm_decomposition(data, sfm, "y_hat", "y_x0", n_bins=4, n_boot=0)
    with pytest.raises(FairpathInputError, match="unknown integrated quantity 'ppm'"):
        result.estimate("ppm")
    with pytest.raises(FairpathInputError, match="bin 9 does not exist; bins are 1..4"):
        result.estimate("ppm", bin=9)
    with pytest.raises(FairpathInputError, match="unknown per-bin quantity 'gap'"):
        result.estimate("gap", bin=1)
