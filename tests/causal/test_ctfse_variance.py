"""The Ctf-SE interval's variance against the estimator's Monte Carlo variance (issue 43's acceptance): on a three-level
model from 5,000 rows, whose rare level gets five cross-fitting splits by ``n_rep="auto"``, the mean squared SE of the
rare contrast's Ctf-SE matches the variance of its estimates over independent samples within the simulation error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import chi2

from fairpath.causal import SFM, decompose
from fairpath.causal._decompose import AUTO_SPLITS
from fairpath.datasets import make_multilevel_sfm

REPLICATIONS = 100


@pytest.mark.slow
def test_the_rare_levels_ctfse_se_matches_its_monte_carlo_variance():
    estimates, squared_se, splits = [], [], set()
    for rep in range(REPLICATIONS):
        sample = make_multilevel_sfm(6000, seed=90_000 + rep, levels=3, binary_outcome=True)
        sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
        with warnings.catch_warnings():  # a few rows of weak overlap in some samples: not what is tested here
            warnings.simplefilter("ignore")
            result = decompose(sample.data, sfm, learner="linear", seed=rep, measures=("ctfse",), n_jobs=1, progress=False)
        splits.add(result.settings["n_rep"])
        estimate = result.estimate("ctfse", contrast=result.contrasts[-1])  # the rarest level against the reference
        estimates.append(estimate.estimate)
        squared_se.append(estimate.se**2)
    assert splits == {AUTO_SPLITS}
    ratio = np.var(estimates, ddof=1) / np.mean(squared_se)
    # (R − 1) s² / σ² is χ² with R − 1 degrees of freedom when the SE is right: a two-sided 99.9% band
    low, high = chi2.ppf([0.0005, 0.9995], REPLICATIONS - 1) / (REPLICATIONS - 1)
    assert low < ratio < high, (ratio, low, high)
