"""Repetitions on threads and on a Dask LocalCluster give the numbers of a one-thread run."""

import numpy as np
import pytest

from fairpath._parallel import run_tasks


def _draw(seed, scale, offsets):
    return scale * np.random.default_rng(seed).normal(size=3) + offsets


def test_threads_return_every_task_once_with_its_own_result():
    offsets = np.arange(3.0)
    results = dict(run_tasks(_draw, range(6), shared={"scale": 2.0, "offsets": offsets}, n_jobs=3))
    assert sorted(results) == list(range(6))
    for seed, values in results.items():
        np.testing.assert_array_equal(values, _draw(seed, 2.0, offsets))


def test_dask_local_cluster_matches_the_local_run():
    pytest.importorskip("distributed")
    offsets = np.arange(3.0)
    local = dict(run_tasks(_draw, [4, 4, 9], shared={"scale": 1.5, "offsets": offsets}))
    on_dask = dict(run_tasks(_draw, [4, 4, 9], shared={"scale": 1.5, "offsets": offsets}, workers=2, processes=False))
    assert sorted(on_dask) == [0, 1, 2]  # two equal tasks are two runs
    for position in local:
        np.testing.assert_array_equal(on_dask[position], local[position])
