"""Cross-fitted nuisance functions of the Standard Fairness Model.

Propensities p(x1 | z) and p(x1 | z, w) are fitted once and shared by all outcome columns; the
outcome regressions μ(x, z), μ(x, z, w) and the nested means ν are fitted per outcome.

With K levels of X (every level analysed) the outcome regressions are pooled over all rows, X
entering as K − 1 indicator columns, and predicted at every level: they do not depend on the
contrast and are fitted once. A contrast (a, b) needs the propensity odds p(a | ·)/p(b | ·), which
the binary propensity P(X = b | ·, X ∈ {a, b}) fitted on the pair's rows gives; it is fitted per
contrast. With two levels the indicator column is X's 0/1 code and the pair is every row: the fits
are those of the binary analysis.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

from fairpath._parallel import run_tasks, single_threaded_blas
from fairpath._progress import RowRate, progress as progress_bar
from fairpath._seeds import FOLD_LAYOUT, FOLDS, child_rng, child_seed

from fairpath.causal._data import PreparedData
from fairpath._learners import LARGE_FIT_ROWS, fit_predict


@dataclass
class OutcomeNuisances:
    """Out-of-fold predictions for one outcome column, each an array over rows."""

    mu_xz: dict[int, np.ndarray] = field(default_factory=dict)  # x -> E[Y | X=x, Z]
    mu_xzw: dict[int, np.ndarray] = field(default_factory=dict)  # x -> E[Y | X=x, Z, W]
    nested: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)  # (x_w, x_y) -> ν_{x_y}(x_w, Z)


@dataclass
class Nuisances:
    # contrast (a, b) -> P(X = b | Z, X ∈ {a, b}) per row (NaN outside the pair's rows)
    px_z: dict[tuple[int, int], np.ndarray]
    px_zw: dict[tuple[int, int], np.ndarray]  # the same given Z and W
    outcomes: dict[str, OutcomeNuisances]


def pair_rows(x: np.ndarray, contrast: tuple[int, int]):
    """The rows of contrast (a, b): X is a or b (a slice of every row when X has no other level)."""
    a, b = contrast
    if contrast == (0, 1) and x.max(initial=0) <= 1:
        return slice(None)
    return np.flatnonzero((x == a) | (x == b))


def level_features(codes, n_levels: int) -> np.ndarray:
    """X as K − 1 indicator columns (column j: X is level j + 1), for ``codes`` (an array) or one level
    (an int: one row, broadcast over the rows). With two levels: the 0/1 code itself."""
    return np.eye(n_levels)[np.atleast_1d(codes), 1:]


def _nested_seed(offset: int, x_y: int) -> int:
    # levels 0 and 1 keep the binary analysis' seeds (offset + 4, offset + 6); the others lie beyond every
    # contrast's propensity seeds (100 + 2j, 101 + 2j)
    return offset + 4 + 2 * x_y if x_y < 2 else offset + 1000 + x_y


def fold_ids(n: int, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    return rng.permutation(np.arange(n) % n_folds)


def _group_constant(values: np.ndarray, x: np.ndarray, level: int, n_rows: int) -> np.ndarray:
    return np.full(n_rows, values[x == level].mean())


@dataclass
class FoldRows:
    """Row indices of one fold: ``base`` fits the propensities and μ(x, z), ``mediator`` fits
    μ(x, z, w), ``nested`` fits ν, and ``test`` receives the predictions.

    ν must be fitted on μ predictions from models that did not see those rows: ``honest`` lists
    (fit rows, predict rows) pairs covering ``nested``; empty when ``nested`` and ``mediator``
    are disjoint, so the ``mediator`` fit itself is honest on ``nested``.
    """

    base: np.ndarray
    mediator: np.ndarray
    nested: np.ndarray
    test: np.ndarray
    honest: tuple = ()


class _Fold:
    """Fit and predict the nuisances of one cross-fitting fold.

    ``per_group`` fits outcome regressions separately within X = x0 and X = x1 (faircause's
    medDML); otherwise X enters a pooled regression as a feature and is set to each level.
    """

    def __init__(self, data: PreparedData, learner, seed: int, rows: FoldRows, per_group: bool, nested: bool = True,
                 on_fit=None, contrasts=((0, 1),)):
        self.data, self.learner, self.seed, self.rows, self.per_group = data, learner, seed, rows, per_group
        self.nested, self.contrasts = nested, tuple(contrasts)
        self.n_levels = len(data.levels)
        self.on_fit = on_fit  # called with each fit's training rows (the progress line's rows per second)
        self.has_z, self.has_w = data.z.shape[1] > 0, data.w.shape[1] > 0
        # The "gbm" preset at its large-data size bins each feature set of the fold's rows once (SharedBins).
        self._bins = {} if learner == "gbm" and len(rows.base) >= LARGE_FIT_ROWS else None

    def _fit(self, offset, X_train, y_train, X_predict, binary):
        predictions = fit_predict(self.learner, binary, child_seed(self.seed, offset), X_train, y_train, X_predict)
        if self.on_fit is not None:
            self.on_fit(len(y_train))
        return predictions

    def _training_data(self, blocks, rows, with_x: bool):
        """The fit's training matrix of ``rows`` (X's column first when ``with_x``), or with shared bins
        those rows of the fold's binned matrix (rows outside the fold's ``base`` rows get a matrix)."""
        x_column = level_features(self.data.x[rows], self.n_levels) if with_x else None
        if self._bins is None:
            return design(blocks, rows, x_column=x_column)
        base = self.rows.base
        positions = np.searchsorted(base, rows)
        # LightGBM takes a subset's rows in increasing order: only sorted rows of ``base`` are shared
        inside = positions.size and positions.max() < len(base) and np.array_equal(base[positions], rows)
        if not inside or np.any(np.diff(rows) <= 0):
            return design(blocks, rows, x_column=x_column)
        key = (tuple(id(block) for block in blocks), with_x)
        if key not in self._bins:
            from fairpath._presets import SharedBins

            x_base = level_features(self.data.x[base], self.n_levels) if with_x else None
            self._bins[key] = SharedBins(design(blocks, base, x_column=x_base))
        return self._bins[key].rows(positions)

    def _by_level(self, offset, blocks, y, rows, predict_rows, binary, levels=(0, 1)):
        """E[y | X = v, features] for each v in ``levels`` at each row set of ``predict_rows``: {v: [arrays]}.

        ``blocks`` are the feature arrays over all rows (Z, or Z and W); the matrices of the fit and of
        each prediction are built for their rows only, and the prediction matrices one at a time."""
        x = self.data.x
        if sum(block.shape[1] for block in blocks) == 0:
            return {v: [_group_constant(y[rows], x[rows], v, len(P)) for P in predict_rows] for v in levels}
        if self.per_group:
            out = {}
            for v in levels:
                fit_rows = rows[x[rows] == v]
                out[v] = self._fit(offset + v, design(blocks, fit_rows), y[fit_rows], (design(blocks, P) for P in predict_rows), binary)
            return out
        at_level = (design(blocks, P, x_column=level_features(v, self.n_levels)) for v in levels for P in predict_rows)
        predictions = self._fit(offset, self._training_data(blocks, rows, with_x=True), y[rows], at_level, binary)
        k = len(predict_rows)
        return {v: predictions[i * k:(i + 1) * k] for i, v in enumerate(levels)}

    def propensities(self) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
        """{contrast (a, b): (P(X = b | z), P(X = b | z, w)) among the pair's rows} on the fold's test rows of the pair."""
        return {contrast: self._pair_propensities(j, contrast) for j, contrast in enumerate(self.contrasts)}

    def _pair_propensities(self, j: int, contrast: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        d, base, t = self.data, self.rows.base, self.rows.test
        pair = pair_rows(d.x, contrast)
        if not isinstance(pair, slice):
            base, t = np.intersect1d(base, pair), np.intersect1d(t, pair)
        x = (d.x == contrast[1]).astype(float)
        offsets = (1, 2) if j == 0 else (100 + 2 * j, 101 + 2 * j)  # the first contrast keeps the binary seeds
        if self.has_z:
            (px_z,) = self._fit(offsets[0], self._training_data((d.z,), base, with_x=False), x[base], [design((d.z,), t)], True)
        else:  # a constant: the sample share, which makes the estimates of E[Y | x] exact
            px_z = np.full(len(t), x[pair].mean())
        if not self.has_w:
            return px_z, px_z
        (px_zw,) = self._fit(offsets[1], self._training_data((d.z, d.w), base, with_x=False), x[base], [design((d.z, d.w), t)], True)
        return px_z, px_zw

    def outcome(self, y: np.ndarray, binary: bool, known: dict[int, np.ndarray] | None = None) -> OutcomeNuisances:
        """The outcome regressions of column ``y`` on this fold. ``known`` ({x: f(x, Z, W) per row},
        for a predictor whose function is known) replaces the fits of μ(x, z, w), and of μ(x, z)
        when W is empty, by those values; see ``fairpath.causal._known``."""
        d, r = self.data, self.rows
        # Every outcome column gets the same learner seeds: identical columns get identical fits.
        offset = 10
        result = OutcomeNuisances()
        levels = tuple(range(self.n_levels))
        known_test = None if known is None else {v: known[v][r.test] for v in levels}
        if known_test is not None and not self.has_w:
            result.mu_xz = result.mu_xzw = known_test
            return result
        # Without Z, μ(x) is a group mean; taken over all rows, E[Y | x] is estimated exactly.
        mu_rows = r.base if self.has_z else np.arange(d.n)
        mu_xz = self._by_level(offset, (d.z,), y, mu_rows, [r.test], binary, levels)
        result.mu_xz = {v: mu_xz[v][0] for v in levels}
        if not self.has_w:
            result.mu_xzw = result.mu_xz
            return result
        if known_test is not None:
            result.mu_xzw = known_test
            honest = known  # not fitted on any row, so honest on the nested rows as it stands
        else:
            honest = self._mediator_means(offset, y, binary, result)
        if self.nested:
            for x_y, partners in self._partners().items():
                nested = self._by_level(_nested_seed(offset, x_y), (d.z,), honest[x_y], r.nested, [r.test], False, levels=partners)
                for x_w in partners:
                    result.nested[(x_w, x_y)] = nested[x_w][0]
        return result

    def _partners(self) -> dict[int, tuple[int, ...]]:
        """{x_y: the levels x_w it is paired with in a contrast}: the nested means ν_{x_y}(x_w, z) the contrasts use."""
        partners: dict[int, list[int]] = {}
        for a, b in self.contrasts:
            partners.setdefault(b, []).append(a)
            partners.setdefault(a, []).append(b)
        return {x_y: tuple(sorted(set(x_ws))) for x_y, x_ws in sorted(partners.items())}

    def _mediator_means(self, offset: int, y: np.ndarray, binary: bool, result: OutcomeNuisances):
        """Fit μ(x, z, w) into ``result``; with ν requested, also μ's honest predictions on the
        nested rows ({x: array over all rows}), which ν is fitted to."""
        d, r = self.data, self.rows
        zw, levels = (d.z, d.w), tuple(range(self.n_levels))
        if not self.nested:  # no requested measure uses ν: skip its fits (about half of a fold's work)
            mu = self._by_level(offset + 2, zw, y, r.mediator, [r.test], binary, levels)
            result.mu_xzw = {v: mu[v][0] for v in levels}
            return None
        honest = {v: np.zeros(d.n) for v in levels}
        if r.honest:
            mu = self._by_level(offset + 2, zw, y, r.mediator, [r.test], binary, levels)
            for j, (fit_rows, predict_rows) in enumerate(r.honest):
                inner = self._by_level(offset + 20 + 2 * j, zw, y, fit_rows, [predict_rows], binary, levels)
                for v in levels:
                    honest[v][predict_rows] = inner[v][0]
        else:
            mu = self._by_level(offset + 2, zw, y, r.mediator, [r.test, r.nested], binary, levels)
            for v in levels:
                honest[v][r.nested] = mu[v][1]
        result.mu_xzw = {v: mu[v][0] for v in levels}
        return honest


def design(blocks: tuple[np.ndarray, ...], rows: np.ndarray, x_column=None) -> np.ndarray:
    """The learner's matrix for ``rows``: X's columns first (``x_column``: :func:`level_features` of
    ``rows`` or of one level for all), then the columns of each block, filled in place (no full-size
    intermediate copy)."""
    widths = [block.shape[1] for block in blocks]
    first = 0 if x_column is None else x_column.shape[1]
    out = np.empty((len(rows), first + sum(widths)))
    if first:
        out[:, :first] = x_column
    for block, start in zip(blocks, np.cumsum([first, *widths[:-1]])):
        out[:, start:start + block.shape[1]] = block[rows]
    return out


def _fold_rows(n: int, n_folds: int, method, rng: np.random.Generator) -> list[FoldRows]:
    folds = fold_ids(n, n_folds, rng)
    layout = []
    for k in range(n_folds):
        test = np.flatnonzero(folds == k)
        train = np.flatnonzero(folds != k)
        train = train[rng.permutation(len(train))]
        half_a, half_b = np.sort(train[: len(train) // 2]), np.sort(train[len(train) // 2 :])
        layout.append(method.fold_rows(np.sort(train), half_a, half_b, test))
    return layout


def cross_fit(data: PreparedData, outcomes: list[str], learner, n_folds: int, seed: int,
              method, n_jobs: int = 1, nested: bool = True, progress: bool = False, where: dict | None = None,
              contrasts=((0, 1),)) -> Nuisances:
    """K-fold cross-fitting of all nuisances.

    ``method`` (a ``fairpath.causal._methods.EstimationMethod``) splits each fold's training rows
    among the fits (``method.fold_rows``) and says whether outcome regressions are fitted within
    each group (``per_group_fits``). Debiasing: the propensities and pooled outcome regressions
    are fitted on all of a fold's training rows; the nested means too, on μ predictions from an
    inner 2-fold split, so no row's μ comes from a model that saw it. medDML follows faircause's
    mediation DML: propensities and μ(x, z) on all training rows, per-group μ(x, z, w) on one half
    and the nested means on the other. The fits run in ``n_jobs`` threads (the learners release
    the GIL), one task per fold and outcome column and one per fold's propensities; every fold has
    its own seed (a ``SeedSequence`` child of ``seed``), so results do not depend on ``n_jobs``.
    ``nested=False`` skips the nested means (and their inner split); the other fits keep their
    seeds and values. ``progress`` shows a bar that advances per task. ``where`` (``run_tasks``'
    scheduler / workers) runs the tasks on Dask instead, with the same numbers. ``contrasts`` lists the
    pairs of level codes (a, b) whose propensities are fitted (see the module's docstring).
    """
    n = data.n
    layout = fold_layout(n, n_folds, method, seed)
    # One task per fold and outcome column (the heavy ones first) rather than per fold: 5 folds on
    # 2 cores would leave one core idle for the last fold. Each task's fits keep their fold's
    # seeds, so the values do not depend on the grouping.
    tasks = [(k, name) for name in outcomes for k in range(n_folds)] + [(k, None) for k in range(n_folds)]
    settings = {"learner": learner, "n_folds": n_folds, "seed": seed, "method": method, "nested": nested,
                "contrasts": tuple(contrasts)}
    bar = progress_bar(desc="cross-fitting", total=len(tasks), unit="task", enabled=progress, leave=False)
    with bar:
        if where:  # run_tasks options of a Dask client (task_client); empty to run here
            parts = _on_dask(data, tasks, settings, where, bar)
        else:
            parts = _on_threads(data, tasks, settings, n_jobs, bar, layout)
    px_z = {contrast: np.full(n, np.nan) for contrast in contrasts}
    px_zw = {contrast: np.full(n, np.nan) for contrast in contrasts}
    per_outcome = {name: OutcomeNuisances() for name in outcomes}
    for k, rows in enumerate(layout):
        for contrast, (p_z, p_zw) in parts[(k, None)].items():
            test = rows.test if isinstance(pair := pair_rows(data.x, contrast), slice) else np.intersect1d(rows.test, pair)
            px_z[contrast][test], px_zw[contrast][test] = p_z, p_zw
        for name in outcomes:
            _scatter(per_outcome[name], parts[(k, name)], rows.test, n)
    return Nuisances(px_z=px_z, px_zw=px_zw, outcomes=per_outcome)


def fold_layout(n: int, n_folds: int, method, seed: int) -> list[FoldRows]:
    """The rows of every fold, from the seed alone (so a worker can rebuild them instead of receiving them)."""
    return _fold_rows(n, n_folds, method, child_rng(seed, FOLD_LAYOUT))


def fold_part(task: tuple[int, str | None], *, data: PreparedData, learner, n_folds: int, seed: int, method, nested: bool,
              layout: list[FoldRows] | None = None, on_fit=None, contrasts=((0, 1),)):
    """One fold's fits of outcome column ``name``, or its propensities (``name`` None): ``task`` is (k, name)."""
    k, name = task
    layout = layout or fold_layout(data.n, n_folds, method, seed)
    fold = _Fold(data, learner, child_seed(seed, FOLDS, k), layout[k], per_group=method.per_group_fits, nested=nested, on_fit=on_fit,
                 contrasts=contrasts)
    return fold.propensities() if name is None else fold.outcome(data.outcomes[name], data.binary(name), data.known.get(name))


def _on_threads(data, tasks, settings, n_jobs, bar, layout) -> dict:
    rate = RowRate(bar)

    def run(task):
        part = fold_part(task, data=data, layout=layout, on_fit=rate.add, **settings)
        bar.update()
        return part

    # Learners' UserWarnings (e.g. feature names) are silenced here, in the calling thread: the
    # warning filters are process-wide, and catch_warnings inside the worker threads would
    # restore them out of order (leaving them changed after decompose returns). BLAS runs on one
    # thread, also with n_jobs=1: the GLMs' matrices are small, and a multi-threaded BLAS beside
    # other busy threads (parallel folds, replications, another program) oversubscribes the
    # cores: 1.5x slower with parallel folds, 5x with n_jobs=1 beside a busy process.
    with warnings.catch_warnings(), single_threaded_blas():
        warnings.simplefilter("ignore", UserWarning)
        return dict(zip(tasks, Parallel(n_jobs=n_jobs, backend="threading")(delayed(run)(task) for task in tasks)))


def _quiet_fold_part(task, **options):
    """``fold_part`` in a Dask worker, which has its own warning filters and one thread."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fold_part(task, **options)


def _on_dask(data, tasks, settings, where, bar) -> dict:
    """The fold tasks on Dask; ``data`` is a PreparedData or the future of one already on the workers
    (a partitioned table encoded there, see ``fairpath.causal._distributed``)."""
    client = where.get("scheduler")
    if data.remote is not None:
        remote = data.remote
    elif hasattr(client, "scatter"):  # a pandas table's arrays travel to the workers once, not with every task
        remote = client.scatter(data, hash=False)
    else:
        remote = data
    shared = {"data": remote, **settings}
    parts, started = {}, time.monotonic()
    for position, part in run_tasks(_quiet_fold_part, tasks, shared=shared, **where):
        parts[tasks[position]] = part
        bar.update()
        rows = data.n * len(parts) / len(tasks)  # the table's rows cross-fitted so far
        bar.set_postfix_str(f"{rows / max(time.monotonic() - started, 1e-9):,.0f} table rows/s")
    return parts


def _scatter(target: OutcomeNuisances, part: OutcomeNuisances, rows: np.ndarray, n: int) -> None:
    for attribute in ("mu_xz", "mu_xzw", "nested"):
        full, piece = getattr(target, attribute), getattr(part, attribute)
        for key, values in piece.items():
            full.setdefault(key, np.empty(n))[rows] = values
