"""The estimation methods as objects: their hooks, seeds spawned per task, and the same numbers on Dask."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath._seeds import BOOTSTRAP, FOLDS, REFITS, child_rng, child_seed
from fairpath.causal import METHODS, SFM, decompose
from fairpath.causal._decompose import AUTO_SPLITS, AUTO_SPLITS_BELOW_LEVEL_ROWS, AUTO_SPLITS_BELOW_ROWS, resolve_n_rep
from fairpath.causal._methods import DRAWS_PER_TASK, ESTIMATION_METHODS, Debiasing, MedDML, bootstrap_means
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm

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
    seeds = {child_seed(0, FOLDS, k) for k in range(100)} | {child_seed(1, FOLDS, k) for k in range(100)}
    assert len(seeds) == 200  # seed 0's fold 1 is not seed 1's fold 0, as with seed + offset
    assert child_seed(7, 2, 3) == child_seed(7, 2, 3)
    assert child_rng(7, 2).integers(1 << 30) == child_rng(7, 2).integers(1 << 30)


def test_meddml_draws_are_those_of_a_manual_two_level_bootstrap(sample):
    """The first refit resamples the fit on the data as given with the stream (seed, REFITS, 0); the
    reported estimate is the mean of all draws (faircause's convention)."""
    result = decompose(sample.data, sample.sfm, method="medDML", learner="linear", nboot1=3, nboot2=15, seed=5,
                       measures=COUNTERFACTUAL)
    draws = result.for_contrast().fits["y"].draws
    assert draws.shape == (45, 3)
    rows = result.for_contrast().fits["y"].rows
    first = bootstrap_means({"y": rows.to_numpy()}, 15, child_rng(5, REFITS, 0))["y"]
    np.testing.assert_allclose(draws.to_numpy()[:15], first, rtol=0, atol=1e-12)
    assert result.estimate("ctfie").estimate == pytest.approx(draws["ctfie"].mean(), rel=1e-12)


def test_debiasing_draws_come_in_fixed_blocks_of_their_own_streams(sample):
    n_boot = DRAWS_PER_TASK + 7
    result = decompose(sample.data, sample.sfm, learner="linear", n_boot=n_boot, seed=6, measures=COUNTERFACTUAL)
    rows = result.for_contrast().fits["y"].rows.to_numpy()
    expected = np.vstack([bootstrap_means({"y": rows}, size, child_rng(6, BOOTSTRAP, block))["y"]
                          for block, size in enumerate([DRAWS_PER_TASK, 7])])
    np.testing.assert_allclose(result.for_contrast().fits["y"].draws.to_numpy(), expected, rtol=0, atol=1e-12)
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
    pd.testing.assert_frame_equal(dask_med.for_contrast().fits["y"].draws, local_med.for_contrast().fits["y"].draws)
    pd.testing.assert_frame_equal(dask_boot.for_contrast().fits["y"].draws, local_boot.for_contrast().fits["y"].draws)
    assert local_med.for_contrast().fits["y"].draws["ctfde"].nunique() == 30  # three refits, ten draws each, all distinct


def test_repeated_cross_fitting_aggregates_the_splits_by_their_mean(sample):
    """n_rep = 3: the mean of the three splits' estimates, and √mean(se_s² + (θ_s − θ)²), by hand;
    the first split is the n_rep = 1 fit, the others have their own spawned seeds. The mean keeps
    TV = Ctf-DE − Ctf-IE − Ctf-SE exact."""
    measures = ["tv", *COUNTERFACTUAL]
    one = decompose(sample.data, sample.sfm, learner="linear", seed=3, n_rep=1, measures=measures)
    three = decompose(sample.data, sample.sfm, learner="linear", seed=3, n_rep=3, measures=measures)
    fit = three.for_contrast().fits["y"]
    pd.testing.assert_frame_equal(fit.rows, one.for_contrast().fits["y"].rows)
    by_split = [rows["ctfie"].to_numpy() for rows in fit.all_rows]
    assert len(by_split) == 3 and len({float(r.mean()) for r in by_split}) == 3
    theta = np.array([r.mean() for r in by_split])
    se = np.array([r.std(ddof=1) / np.sqrt(len(r)) for r in by_split])
    e = three.estimate("ctfie")
    assert e.estimate == pytest.approx(theta.mean(), rel=1e-12)
    assert e.se == pytest.approx(np.sqrt(np.mean(se ** 2 + (theta - theta.mean()) ** 2)), rel=1e-12)
    assert e.se >= np.sqrt(np.mean(se ** 2)) - 1e-15 and three.settings["n_rep"] == 3
    parts = {m: three.estimate(m).estimate for m in measures}
    assert parts["tv"] == pytest.approx(parts["ctfde"] - parts["ctfie"] - parts["ctfse"], abs=1e-12)
    # ψ contrasts and paired differences aggregate the same way
    assert three.psi(1, 1, 1).estimate == pytest.approx(np.mean([p(1, 1, 1).mean() for p in fit.all_pseudo]), rel=1e-12)
    assert three.difference("ctfie", "y", "y").estimate == 0.0


def test_auto_splits_follow_the_number_of_rows(sample):
    """n_rep="auto" (the default) is five splits below AUTO_SPLITS_BELOW_ROWS rows or with a level of X
    below AUTO_SPLITS_BELOW_LEVEL_ROWS rows, the same numbers as n_rep=5; one split from both on, for
    medDML and with a bootstrap; a number stays."""
    auto = decompose(sample.data, sample.sfm, learner="linear", seed=3, measures=COUNTERFACTUAL)
    five = decompose(sample.data, sample.sfm, learner="linear", seed=3, n_rep=5, measures=COUNTERFACTUAL)
    assert len(sample.data) < AUTO_SPLITS_BELOW_ROWS and (AUTO_SPLITS, auto.settings["n_rep"]) == (5, 5)
    pd.testing.assert_frame_equal(auto.to_frame(), five.to_frame())
    debiasing, med = ESTIMATION_METHODS["debiasing"], ESTIMATION_METHODS["medDML"]
    level = AUTO_SPLITS_BELOW_LEVEL_ROWS
    assert resolve_n_rep("auto", AUTO_SPLITS_BELOW_ROWS - 1, level, debiasing, n_boot=0) == 5
    assert resolve_n_rep("auto", AUTO_SPLITS_BELOW_ROWS, level, debiasing, n_boot=0) == 1
    assert resolve_n_rep("auto", 10**6, level - 1, debiasing, n_boot=0) == 5
    assert resolve_n_rep("auto", 100, 10, med, n_boot=0) == 1 and resolve_n_rep("auto", 100, 10, debiasing, n_boot=200) == 1
    assert resolve_n_rep(3, 10**6, level, debiasing, n_boot=0) == 3
    booted = decompose(sample.data, sample.sfm, learner="linear", seed=3, n_boot=50, measures=COUNTERFACTUAL)
    assert booted.settings["n_rep"] == 1 and len(booted.for_contrast().fits["y"].draws) == 50


def test_auto_splits_count_the_rarest_level():
    """From AUTO_SPLITS_BELOW_ROWS rows on, a level of X with fewer than AUTO_SPLITS_BELOW_LEVEL_ROWS
    rows still gets five splits (its first-stage fits' noise is in the interval only then); a
    balanced table of the same size gets one."""
    n = AUTO_SPLITS_BELOW_ROWS + 1000
    for levels, splits in ((3, AUTO_SPLITS), (2, 1)):
        sample = make_multilevel_sfm(n, seed=2, levels=levels)
        rarest = np.bincount(sample.data["x"]).min()
        assert (rarest < AUTO_SPLITS_BELOW_LEVEL_ROWS) == (splits == AUTO_SPLITS)
        sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
        assert decompose(sample.data, sfm, learner="linear", seed=1, measures=("tv",), n_jobs=1).settings["n_rep"] == splits


def test_repeated_cross_fitting_on_dask_equals_the_local_run(sample):
    distributed = pytest.importorskip("distributed")
    local = decompose(sample.data, sample.sfm, learner="linear", seed=4, n_rep=3, measures=COUNTERFACTUAL)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = decompose(sample.data, sample.sfm, learner="linear", seed=4, n_rep=3, scheduler=client, measures=COUNTERFACTUAL)
    pd.testing.assert_frame_equal(on_dask.to_frame(), local.to_frame())
