"""The estimation methods of ``decompose``, one object each, with the hooks ``decompose`` calls.

A method decides three things, and nothing outside this module compares method names:

* how a cross-fitting fold's training rows are split among the nuisance fits (``fold_rows``) and
  whether outcome regressions are fitted within each group or pooled with X as a feature;
* how pseudo-outcomes of cross-world measures are averaged (``group_means``);
* where the uncertainty comes from (``draws``) and which number is reported (``point_estimate``).

``Debiasing``: the one-step influence-function estimator; normal intervals from the influence
function, or percentile intervals from ``n_boot`` resamples of the pseudo-outcomes.
``MedDML``: faircause's doubly robust mediation DML with its two-level bootstrap: ``nboot1`` refits
on resampled rows (the first on the data as given), ``nboot2`` resampled means per refit; the
estimate and SE are the mean and SD of all draws.

Every refit and every block of bootstrap draws is an independent task with its own
``SeedSequence`` child of the user's seed, so the tasks run one after another, on threads or on a
Dask cluster (``fairpath._parallel.run_tasks``) and give the same numbers wherever they run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from fairpath._parallel import run_tasks
from fairpath._progress import progress as progress_bar
from fairpath._seeds import BOOTSTRAP, REFITS, child_rng, child_seed
from fairpath.causal._data import PreparedData
from fairpath._measures import MEASURE_TERMS
from fairpath.causal._nuisance import FoldRows
from fairpath.causal._pseudo import PseudoOutcomes

# Bootstrap resamples are drawn in chunks of about this many counts (8 bytes each), so memory does
# not grow with the number of draws.
_BOOTSTRAP_CHUNK_CELLS = 1 << 22
# Debiasing's resamples run as tasks of this many draws each: a fixed size, so that the numbers do
# not depend on how many workers share them.
DRAWS_PER_TASK = 250


def measure_frame(pseudo: PseudoOutcomes, measures) -> pd.DataFrame:
    """Per-row contributions (columns: measures) of one outcome's pseudo-outcomes, filled into one
    array that the frame wraps (a frame built from columns copies them all: 80 MB at 1M rows)."""
    rows = np.empty((len(pseudo.x), len(measures)))
    for column, name in enumerate(measures):
        rows[:, column] = sum(sign * pseudo(*key) for sign, key in MEASURE_TERMS[name])
    return pd.DataFrame(rows, columns=list(measures), copy=False)


def bootstrap_means(values: dict[str, np.ndarray], n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Means of ``n_draws`` row resamples of every (n, m) array in ``values`` (the same resamples
    for all): {name: (n_draws, m)}.

    The multinomial resampling counts are drawn a chunk of draws at a time, so peak memory is
    about ``_BOOTSTRAP_CHUNK_CELLS`` counts whatever ``n_draws`` is; the random stream is consumed
    as by one call for all draws, so the numbers do not depend on the chunk size.
    """
    n = len(next(iter(values.values())))
    chunk = max(1, _BOOTSTRAP_CHUNK_CELLS // n)
    p = np.full(n, 1.0 / n)
    out = {name: np.empty((n_draws, v.shape[1])) for name, v in values.items()}
    for start in range(0, n_draws, chunk):
        stop = min(start + chunk, n_draws)
        counts = rng.multinomial(n, p, size=stop - start).astype(float)
        for name, v in values.items():
            out[name][start:stop] = counts @ v / n
    return out


def subset(data: PreparedData, rows: np.ndarray) -> PreparedData:
    """The rows ``rows`` of ``data`` (with repeats, for a resample)."""
    return PreparedData(
        x=data.x[rows], z=data.z[rows], w=data.w[rows], outcomes={k: v[rows] for k, v in data.outcomes.items()},
        index=data.index[rows], z_names=data.z_names, w_names=data.w_names, n_excluded=data.n_excluded, levels=data.levels,
        known={name: {v: means[rows] for v, means in by_level.items()} for name, by_level in data.known.items()},
    )


@dataclass
class DrawRequest:
    """What a method's ``draws`` hook needs: the fitted frames, the data and fitter for refits,
    the settings, and where tasks run (``run_tasks`` options)."""

    frames: dict[str, pd.DataFrame]  # outcome -> (rows, measures) contributions of the fit on the data
    data: PreparedData
    fitter: object  # callable(data, seed) -> [ContrastFit] (one for a binary X)
    measures: tuple
    seed: int
    n_boot: int = 0
    nboot1: int = 1
    nboot2: int = 100
    progress: bool = False
    where: dict = field(default_factory=dict)  # n_jobs / scheduler / workers for run_tasks


class EstimationMethod:
    """Base of the estimation methods; subclasses set the class attributes and the hooks."""

    name: ClassVar[str]
    default_learner: ClassVar[str]
    trims_by_default: ClassVar[bool]
    per_group_fits: ClassVar[bool]  # outcome regressions within each group, else pooled with X as a feature
    group_means: ClassVar[bool]  # cross-world pseudo-outcomes averaged within the group (faircause)
    repeats_splits: ClassVar[bool]  # n_rep > 1 cross-fitting splits, aggregated by their mean

    def fold_rows(self, train: np.ndarray, half_a: np.ndarray, half_b: np.ndarray, test: np.ndarray) -> FoldRows:
        raise NotImplementedError

    def settings(self, n_boot: int, nboot1: int, nboot2: int) -> dict:
        """The uncertainty settings this method uses (the others recorded as None)."""
        raise NotImplementedError

    def draws(self, request: DrawRequest) -> dict[str, pd.DataFrame] | None:
        """Draws of every measure per outcome (rows: draws), or None for influence-function SEs."""
        raise NotImplementedError

    def point_estimate(self, rows_mean: float, draws: np.ndarray) -> float:
        """The reported estimate given the mean of the per-row contributions and the draws."""
        return rows_mean

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _stacked(parts: dict[str, list[np.ndarray]], frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {name: pd.DataFrame(np.vstack(chunks), columns=frames[name].columns) for name, chunks in parts.items()}


def _as_arrays(frames: dict[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    return {name: frame.to_numpy() for name, frame in frames.items()}


def _bootstrap_task(task: tuple[int, int], *, values: dict, seed: int) -> dict[str, np.ndarray]:
    block, n_draws = task
    return bootstrap_means(values, n_draws, child_rng(seed, BOOTSTRAP, block))


def _refit_task(rep: int, *, data: PreparedData, fitter, measures, nboot2: int, seed: int, first: dict | None = None):
    """One medDML refit: rep 0 resamples the fit on the data as given (``first``), rep r > 0 refits
    on a row resample; then ``nboot2`` resampled means."""
    rng = child_rng(seed, REFITS, rep)
    if rep == 0:
        values = first
    else:
        rows = rng.integers(0, data.n, data.n)
        pseudo = fitter(subset(data, rows), child_seed(seed, REFITS, rep, 0))[0].pseudo
        values = _as_arrays({name: measure_frame(pseudo[name], measures) for name in pseudo})
    return bootstrap_means(values, nboot2, rng)


def collect_in_order(results, n_tasks: int, desc: str, progress: bool) -> list:
    """Results of ``run_tasks`` in task order, with a progress bar over the tasks."""
    ordered = [None] * n_tasks
    for position, result in progress_bar(results, desc=desc, total=n_tasks, unit="task", enabled=progress and n_tasks > 1):
        ordered[position] = result
    return ordered


class Debiasing(EstimationMethod):
    name = "debiasing"
    # The stack at every size: at n = 100,000 the GBM alone left ctfde and ctfie biased by 1.6 SD on
    # confounded_sfm (coverage 0.67 and 0.53 over 100 replications) where the stack covers; its trees
    # extrapolate μ(x1, z, w) flat into the x0 group's W. From LARGE_FIT_ROWS its GLM is fitted on a
    # subsample (see StackedLearner), which keeps it cheap.
    default_learner = "stack"
    trims_by_default = False
    per_group_fits = False
    group_means = False
    repeats_splits = True

    def fold_rows(self, train, half_a, half_b, test):
        # Every fit sees all training rows; ν is fitted on μ predictions from an inner 2-fold split.
        return FoldRows(train, train, train, test, honest=((half_a, half_b), (half_b, half_a)))

    def settings(self, n_boot, nboot1, nboot2):
        return {"n_boot": n_boot, "nboot1": None, "nboot2": None}

    def draws(self, request):
        if not request.n_boot:
            return None
        sizes = [min(DRAWS_PER_TASK, request.n_boot - start) for start in range(0, request.n_boot, DRAWS_PER_TASK)]
        values = _as_arrays(request.frames)
        results = run_tasks(_bootstrap_task, list(enumerate(sizes)), shared={"values": values, "seed": request.seed},
                            **request.where)
        blocks = collect_in_order(results, len(sizes), "bootstrap", request.progress)
        return _stacked({name: [block[name] for block in blocks] for name in values}, request.frames)


class MedDML(EstimationMethod):
    name = "medDML"
    default_learner = "rf"  # as faircause
    trims_by_default = True  # as faircause
    per_group_fits = True
    group_means = True
    repeats_splits = False  # its uncertainty comes from the nboot1 refits instead

    def fold_rows(self, train, half_a, half_b, test):
        # Propensities and μ(x, z) on all training rows, μ(x, z, w) on one half, ν on the other.
        return FoldRows(np.sort(train), half_a, half_b, test)

    def settings(self, n_boot, nboot1, nboot2):
        return {"n_boot": n_boot, "nboot1": nboot1, "nboot2": nboot2}

    def draws(self, request):
        shared = {"data": request.data, "fitter": request.fitter, "measures": request.measures,
                  "nboot2": request.nboot2, "seed": request.seed, "first": _as_arrays(request.frames)}
        results = run_tasks(_refit_task, range(request.nboot1), shared=shared, **request.where)
        refits = collect_in_order(results, request.nboot1, "medDML refits", request.progress)
        return _stacked({name: [refit[name] for refit in refits] for name in request.frames}, request.frames)

    def point_estimate(self, rows_mean, draws):
        return float(draws.mean())  # faircause reports the mean over all bootstrap draws


ESTIMATION_METHODS: dict[str, EstimationMethod] = {method.name: method for method in (Debiasing(), MedDML())}
METHODS = tuple(ESTIMATION_METHODS)


def resolve_method(name: str) -> EstimationMethod:
    """The method object for a name in ``METHODS``."""
    return ESTIMATION_METHODS[name]
