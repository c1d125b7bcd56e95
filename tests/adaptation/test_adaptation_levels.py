"""Adaptation with K > 2 levels of X: every level's twins follow the baseline level's mechanisms."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fairpath._exceptions import FairpathInputError
from fairpath.adaptation import FairAdapt, graph_from_sfm
from fairpath.datasets import make_multilevel_sfm

QUANTILES = np.array([0.1, 0.5, 0.9])


def residuals(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """The reference level's (0) noise of W1 and W2 in ``frame`` (make_multilevel_sfm: a_0 = b_0 = 0), with its SD:
    under the reference's mechanisms they are N(0, SD²) and independent of Z (and of W1, for W2)."""
    return {"w1": (frame.w1 - 0.5 * frame.z1).to_numpy(), "w2": (frame.w2 - 0.25 * frame.w1**2 + 0.3 * frame.z2).to_numpy()}


SD = {"w1": 1.0, "w2": 0.5}


def gaps_in_se(twins: np.ndarray, reference: np.ndarray, sd: float) -> np.ndarray:
    """Twins' mean and 10/50/90% quantiles minus the reference rows', in two-sample standard errors."""
    scale = np.sqrt(1 / len(twins) + 1 / len(reference))
    mean = (twins.mean() - reference.mean()) / (sd * scale)
    density = stats.norm.pdf(stats.norm.ppf(QUANTILES)) / sd
    quantile = (np.quantile(twins, QUANTILES) - np.quantile(reference, QUANTILES)) / (np.sqrt(QUANTILES * (1 - QUANTILES)) / density * scale)
    return np.r_[mean, quantile]


@pytest.fixture(scope="module", params=[(3, 3000, 1), (4, 4000, 2)], ids=["K=3", "K=4"])
def adapted(request):
    levels, n, seed = request.param
    sample = make_multilevel_sfm(n, seed=seed, levels=levels)
    sfm = sample.sfm.for_contrast(0, None)
    adapter = FairAdapt(graph_from_sfm(sfm), x=sfm.x, baseline=0, y=sfm.y, resolving=list(sfm.z), random_state=0).fit(sample.data)
    return sample.data, adapter


def test_every_level_gets_the_reference_levels_conditional_distribution_given_z(adapted):
    data, adapter = adapted
    assert adapter.levels_ == list(range(len(adapter.levels_))) and adapter.comparison_ is None
    assert adapter.order_ == ["w1", "w2", "y"] and adapter.resolving_ == ["z1", "z2"]
    reference = (data.x == 0).to_numpy()
    observed, twins = residuals(data), residuals(adapter.adapted_train_)
    for level in adapter.comparisons_:
        rows = (data.x == level).to_numpy()
        for column, sd in SD.items():
            # The observed W of a level is far from the reference's (its mechanisms shift W1 by 0.8 to 1.2 SD,
            # W2 through W1 and by -0.4 to 0.6) ...
            assert np.abs(gaps_in_se(observed[column][rows], observed[column][reference], sd)).max() > 8, (level, column)
            # ... its twins' are within 3 SE of the reference's, overall and given Z (z2, and the sign of z1)
            assert np.abs(gaps_in_se(twins[column][rows], observed[column][reference], sd)).max() < 3, (level, column)
            for stratum in (data.z2 == 0, data.z2 == 1, data.z1 < 0, data.z1 >= 0):
                stratum = stratum.to_numpy()
                gaps = gaps_in_se(twins[column][rows & stratum], observed[column][reference & stratum], sd)
                assert np.abs(gaps).max() < 3, (level, column, gaps)
    # The reference level's rows are their own twins; Z (resolving) is kept for everyone.
    pd.testing.assert_frame_equal(adapter.adapted_train_[reference], data[reference])
    pd.testing.assert_frame_equal(adapter.adapted_train_[["z1", "z2"]], data[["z1", "z2"]])


def test_transform_moves_new_rows_of_every_level(adapted):
    data, fitted = adapted
    levels = len(fitted.levels_)
    # Calibrated against training ranks read with the row's own value in its leaves, the tails of new rows'
    # twins came out 3-7 SE too wide here (10% and 90% quantiles); every rank is out of bag now.
    adapter = fitted
    new = make_multilevel_sfm(3000, seed=10 + levels, levels=levels).data
    twins = residuals(adapter.transform(new.drop(columns="y")))
    reference = (data.x == 0).to_numpy()
    observed = residuals(data)
    for level in adapter.comparisons_:
        rows = (new.x == level).to_numpy()
        for column, sd in SD.items():
            assert np.abs(gaps_in_se(twins[column][rows], observed[column][reference], sd)).max() < 3, (level, column)
    kept = (new.x == 0).to_numpy()
    pd.testing.assert_frame_equal(adapter.transform(new.drop(columns="y"))[kept], new.drop(columns="y")[kept])


def test_transform_refuses_unseen_levels_naming_them_all(adapted):
    data, adapter = adapted
    new = data.drop(columns="y").head(30).copy()
    new.loc[new.index[:3], "x"] = 7
    new.loc[new.index[3:5], "x"] = 9
    expected = f"'x' has levels ['7', '9'] not seen in training (expected one of {adapter.levels_})"
    with pytest.raises(FairpathInputError, match=re.escape(expected)):
        adapter.transform(new)
