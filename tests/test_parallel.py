"""Repetitions on threads and on a Dask LocalCluster give the numbers of a one-thread run."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from fairpath._parallel import run_tasks, single_threaded_blas


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


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def _record_blas_threads(task):
    with single_threaded_blas():  # a nested entry, as decompose's inside a task: leaving it keeps the limit
        pass
    return _blas_threads()


def test_tasks_on_threads_run_on_one_blas_thread_and_the_limits_come_back_after():
    with threadpool_limits(limits=2, user_api="blas"):
        seen = dict(run_tasks(_record_blas_threads, range(6), n_jobs=2))
        after = _blas_threads()
    assert seen == {position: {1} for position in range(6)}
    assert after == {2}
