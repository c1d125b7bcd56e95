"""The estimation methods as objects: their hooks, seeds spawned per task, and the same numbers on Dask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath._seeds import child_rng, child_seed
from fairpath.causal import METHODS, decompose
from fairpath.causal._methods import DRAWS_PER_TASK, ESTIMATION_METHODS, Debiasing, MedDML, bootstrap_means
from fairpath.datasets import make_binary_sfm

COUNTERFACTUAL = ["ctfde", "ctfie", "ctfse"]


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(600, seed=4)


def test_the_registry_names_every_method_once():
    assert METHODS == ("debiasing", "medDML") and list(ESTIMATION_METHODS) == list(METHODS)
    assert isinstance(ESTIMATION_METHODS["medDML"], MedDML) and isinstance(ESTIMATION_METHODS["debiasing"], Debiasing)
    assert (Debiasing.default_learner, MedDML.default_learner) == ("stack", "rf")
    assert (Debiasing.trims_by_default, MedDML.trims_by_default) == (False, True)


def test_spawned_seeds_differ_per_path_and_repeat_per_seed():
    seeds = {child_seed(0, 1, k) for k in range(100)} | {child_seed(1, 1, k) for k in range(100)}
    assert len(seeds) == 200  # seed 0's fold 1 is not seed 1's fold 0, as with seed + offset
    assert child_seed(7, 2, 3) == child_seed(7, 2, 3)
    assert child_rng(7, 2).integers(1 << 30) == child_rng(7, 2).integers(1 << 30)


def test_meddml_draws_are_those_of_a_manual_two_level_bootstrap(sample):
    """The first refit resamples the fit on the data as given with the stream (seed, 2, 0); the
    reported estimate is the mean of all draws (faircause's convention)."""
    result = decompose(sample.data, sample.sfm, method="medDML", learner="linear", nboot1=3, nboot2=15, seed=5,
                       measures=COUNTERFACTUAL)
    draws = result.fits_["y"].draws
    assert draws.shape == (45, 3)
    rows = result.fits_["y"].rows
    first = bootstrap_means({"y": rows.to_numpy()}, 15, child_rng(5, 2, 0))["y"]
    np.testing.assert_allclose(draws.to_numpy()[:15], first, rtol=0, atol=1e-12)
    assert result.estimate("ctfie").estimate == pytest.approx(draws["ctfie"].mean(), rel=1e-12)


def test_debiasing_draws_come_in_fixed_blocks_of_their_own_streams(sample):
    n_boot = DRAWS_PER_TASK + 7
    result = decompose(sample.data, sample.sfm, learner="linear", n_boot=n_boot, seed=6, measures=COUNTERFACTUAL)
    rows = result.fits_["y"].rows.to_numpy()
    expected = np.vstack([bootstrap_means({"y": rows}, size, child_rng(6, 1, block))["y"]
                          for block, size in enumerate([DRAWS_PER_TASK, 7])])
    np.testing.assert_allclose(result.fits_["y"].draws.to_numpy(), expected, rtol=0, atol=1e-12)
    # the reported estimate stays the mean of the per-row contributions
    assert result.estimate("ctfde").estimate == pytest.approx(rows[:, 0].mean(), rel=1e-12)


def test_meddml_refits_and_bootstrap_blocks_on_a_dask_local_cluster_equal_the_local_run(sample):
    distributed = pytest.importorskip("distributed")
    settings = {"learner": "linear", "seed": 8, "measures": COUNTERFACTUAL}
    local_med = decompose(sample.data, sample.sfm, method="medDML", nboot1=3, nboot2=10, **settings)
    local_boot = decompose(sample.data, sample.sfm, n_boot=DRAWS_PER_TASK + 3, **settings)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dask_med = decompose(sample.data, sample.sfm, method="medDML", nboot1=3, nboot2=10, scheduler=client, **settings)
        dask_boot = decompose(sample.data, sample.sfm, n_boot=DRAWS_PER_TASK + 3, scheduler=client, **settings)
    pd.testing.assert_frame_equal(dask_med.fits_["y"].draws, local_med.fits_["y"].draws)
    pd.testing.assert_frame_equal(dask_boot.fits_["y"].draws, local_boot.fits_["y"].draws)
    assert local_med.fits_["y"].draws["ctfde"].nunique() == 30  # three refits, ten draws each, all distinct
