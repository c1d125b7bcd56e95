"""Repetitions as independent tasks: in this process, on threads, or on a Dask cluster.

Public contract
---------------
``run_tasks(function, tasks, *, shared=None, n_jobs=1, scheduler=None, workers=None, processes=True)``
    A generator of ``(position, function(task, **shared))`` for every task, in the order the tasks
    finish. ``n_jobs=1`` (the default) runs them one after another here; ``n_jobs > 1`` on that many
    threads (``-1``: one per core), with BLAS on one thread (``single_threaded_blas``).
    ``scheduler`` (an address such as ``tcp://10.0.0.5:8786`` or a ``distributed.Client``) or
    ``workers`` (a ``LocalCluster`` of that many single-threaded workers, processes unless
    ``processes=False``) runs them as Dask tasks with ``client.map``; ``shared``
    data (values with a ``shape``) are scattered to the workers once instead of travelling with
    every task.
    Each task must take its randomness from its own arguments (a seed), so that where it runs
    changes no number. Needs ``distributed`` only for a scheduler or workers (``pip install
    'fairpath[dask]'``). A ``shared`` value that is a ``distributed.Future`` (data already on the
    workers) is passed to the tasks as it is.
``task_client(scheduler=None, workers=None)``
    A context yielding the ``run_tasks`` options of a computation that runs several of them: one
    client for all (a ``LocalCluster`` started once), or ``{}`` to run here.
``single_threaded_blas()``
    A context in which BLAS runs on one thread, safe to enter from several threads at once: the
    first to enter sets the limit, the last to leave restores the limits it found.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from threadpoolctl import threadpool_limits

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Jobs, Optional, SchedulerAddress, local_workers

_blas_lock = threading.Lock()
_blas_users = 0
_blas_limit = None


@contextlib.contextmanager
def single_threaded_blas():
    """One BLAS thread inside, for tasks that already fill the cores (parallel folds, replications).

    threadpoolctl's limits are process-wide, so two threads that each entered and left their own
    ``threadpool_limits`` would restore them out of order: the first to leave lifts the other's
    limit while it still runs, and the last leaves the process limited. A count shared by all
    threads keeps one limit for as long as any of them is inside.
    """
    global _blas_users, _blas_limit
    with _blas_lock:
        if _blas_users == 0:
            _blas_limit = threadpool_limits(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limit.restore_original_limits()
                _blas_limit = None


def run_tasks(function: Callable, tasks: Sequence, *, shared: dict | None = None, n_jobs: int = 1, scheduler=None,
              workers: int | None = None, processes: bool = True) -> Iterator[tuple[int, Any]]:
    """Yield ``(position, function(task, **shared))`` for each task as it finishes."""
    shared = dict(shared or {})
    _check_options(n_jobs, scheduler, workers)
    tasks = list(tasks)
    if not tasks:
        return iter(())
    if scheduler is not None or workers is not None:
        return _on_dask(function, tasks, shared, scheduler, workers, processes)
    n_jobs = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    if n_jobs == 1:
        return ((position, function(task, **shared)) for position, task in enumerate(tasks))
    return _on_threads(function, tasks, shared, n_jobs)


def _check_options(n_jobs, scheduler, workers) -> None:
    Jobs().check("n_jobs", n_jobs)
    Optional(local_workers()).check("workers", workers)
    Optional(SchedulerAddress()).check("scheduler", scheduler)
    if scheduler is not None and workers is not None:
        raise FairpathInputError("give either a Dask scheduler address or a number of local workers, not both")


def _on_threads(function, tasks, shared, n_jobs) -> Iterator[tuple[int, Any]]:
    # The tasks fill the cores, so BLAS gets one thread; the limit is set here, in the calling
    # thread: OpenBLAS ignores a worker thread's limit once the process has set one.
    with single_threaded_blas(), ThreadPoolExecutor(n_jobs) as pool:
        futures = {pool.submit(function, task, **shared): position for position, task in enumerate(tasks)}
        for future in as_completed(futures):
            yield futures[future], future.result()


def _distributed():
    try:
        import distributed
    except ImportError as error:
        raise FairpathInputError("running on Dask needs the 'distributed' package: pip install 'fairpath[dask]'") from error
    return distributed


@contextlib.contextmanager
def task_client(scheduler=None, workers: int | None = None, processes: bool = True) -> Iterator[dict]:
    """The ``run_tasks`` options for one whole computation: with a scheduler or workers, one Dask client
    (and ``LocalCluster``) that every ``run_tasks`` call inside uses, instead of one each; else ``{}``."""
    _check_options(1, scheduler, workers)
    if scheduler is None and workers is None:
        yield {}
        return
    with contextlib.ExitStack() as stack:
        yield {"scheduler": _client(_distributed(), scheduler, workers, processes, stack)}


def _on_dask(function, tasks, shared, scheduler, workers, processes) -> Iterator[tuple[int, Any]]:
    distributed = _distributed()
    with contextlib.ExitStack() as stack:
        client = _client(distributed, scheduler, workers, processes, stack)
        # Data (anything with a shape) goes to the workers once, futures of data already there stay
        # there; small settings travel with the function. hash=False: a fresh key, never one that an
        # earlier run_tasks call is releasing.
        remote = {name: value if isinstance(value, distributed.Future) else client.scatter(value, broadcast=True, hash=False)
                  for name, value in shared.items() if hasattr(value, "shape") or isinstance(value, distributed.Future)}
        bound = functools.partial(function, **{name: value for name, value in shared.items() if name not in remote})
        # pure=False: two equal tasks are still two runs (dask would otherwise merge them by hash).
        futures = client.map(bound, tasks, pure=False, **remote)
        positions = {future.key: position for position, future in enumerate(futures)}
        for future in distributed.as_completed(futures):
            yield positions[future.key], future.result()


def _client(distributed, scheduler, workers, processes, stack: contextlib.ExitStack):
    if isinstance(scheduler, distributed.Client):
        return scheduler
    if scheduler is not None:
        try:
            return stack.enter_context(distributed.Client(scheduler, timeout="30s"))
        except (OSError, TimeoutError) as error:
            raise FairpathInputError(f"cannot connect to the Dask scheduler at {scheduler!r} ({error}); "
                                     "start one with `dask scheduler` or use --workers N for a local cluster") from error
    cluster = stack.enter_context(distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                                           dashboard_address=None))
    return stack.enter_context(distributed.Client(cluster))
