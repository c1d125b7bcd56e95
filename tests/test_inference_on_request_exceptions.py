"""Bad arguments to inference on request: a clear FairpathInputError naming the argument and what to do."""

import warnings

import numpy as np
import pytest

from fairpath import Estimate, FairpathInputError
from fairpath.causal import SFM, decompose
from fairpath.datasets import make_appendix_a2, make_binary_sfm
from fairpath.parity import ppm_decomposition, predictive_parity

BAD_LEVELS = [0, 1, 1.5, -0.1, float("nan"), "0.9", True, None]


@pytest.fixture(scope="module")
def decomposition():
    sample = make_binary_sfm(600, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return decompose(sample.data, sample.sfm, learner="linear", seed=5, n_rep=1, measures=["tv", "ctfde"])


@pytest.fixture(scope="module")
def parity_results():
    sample = make_appendix_a2(1000, seed=1)
    data = sample.data.assign(y_hat=sample.outcome_mean(sample.data), y_x0=sample.potential_outcomes["y_x0"].to_numpy())
    sfm = SFM(x=sample.sfm.x, x0=sample.sfm.x0, x1=sample.sfm.x1, y=sample.sfm.y)
    return (ppm_decomposition(data, sample.sfm, "y_hat", "y_x0", n_bins=4, n_boot=20),
            predictive_parity(data, sfm, "y_hat", n_bins=4, n_boot=20))


@pytest.mark.parametrize("level", BAD_LEVELS, ids=repr)
def test_a_level_outside_the_open_unit_interval_is_refused_everywhere(level, decomposition, parity_results):
    answering = [Estimate.from_se(0.1, 0.02).confint, Estimate.from_draws(0.1, np.arange(10.0)).confint, decomposition.confint,
                 *(result.confint for result in parity_results)]
    for confint in answering:
        with pytest.raises(FairpathInputError, match=r"level must (be a number|lie in \(0, 1\))"):
            confint(level)


@pytest.mark.parametrize("null", [float("nan"), float("inf"), "0", None])
def test_a_null_must_be_a_finite_number(null, decomposition, parity_results):
    ppm, parity = parity_results
    for p_value in (lambda: Estimate.from_se(0.1, 0.02).p_value(null), lambda: decomposition.p_value("tv", null=null),
                    lambda: ppm.p_value("ippm", null=null), lambda: parity.p_value("spm", null=null)):
        with pytest.raises(FairpathInputError, match="null must"):
            p_value()


@pytest.mark.parametrize("margin", [0, -0.1, float("nan"), "0.1"])
def test_an_equivalence_margin_must_be_positive(margin):
    with pytest.raises(FairpathInputError, match="margin must"):
        Estimate.from_se(0.1, 0.02).equivalence_p(margin)


def test_unknown_measures_and_outcomes_name_the_choices(decomposition, parity_results):
    ppm, parity = parity_results
    with pytest.raises(FairpathInputError, match=r"unknown measure 'ctf_de'; use one of \("):
        decomposition.p_value("ctf_de")
    with pytest.raises(FairpathInputError, match=r"measure 'ctfie' was not estimated .* decompose\(\.\.\., measures="):
        decomposition.p_value("ctfie")
    with pytest.raises(FairpathInputError, match=r"outcome 'score' was not decomposed; available: \['y'\]"):
        decomposition.p_value("tv", "score")
    with pytest.raises(FairpathInputError, match=r"unknown integrated quantity 'ppm'; use one of \['ippm', 'iterm1', 'iterm2'\]"):
        ppm.p_value("ppm")
    with pytest.raises(FairpathInputError, match=r"bin 9 does not exist; bins are 1..4"):
        ppm.p_value("ppm", bin=9)
    with pytest.raises(FairpathInputError, match=r"unknown measure 'auc'; use one of ippm, ippm_weighted, spm$"):  # Y is not binary: no AUC
        parity.p_value("auc")


def test_an_estimate_made_from_its_numbers_says_which_level_it_knows():
    est = Estimate(0.1, 0.02, 0.06, 0.14, 0.95)
    with pytest.raises(FairpathInputError, match=r"knows only its 0.95 interval .* ask for level=0.95"):
        est.confint(0.9)
