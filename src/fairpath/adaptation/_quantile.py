"""Conditional quantile engines for data adaptation.

An engine learns the conditional distribution of one variable given its parents within one group.
It answers two questions: the quantile rank u of an observed value in its own conditional
distribution (``ranks``) and the value at rank u in the distribution at given parent values
(``quantiles``). Any object with ``fit(features, target)``, ``ranks(features, target, in_sample)``
and ``quantiles(features, ranks)`` can serve; ``make_engine`` builds the named ones.
"""

from __future__ import annotations

import copy

import numpy as np
from quantile_forest import RandomForestQuantileRegressor

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, Jobs, Optional, Seed, validate_params

# Ranks are read off this grid of predicted quantiles, row by row, by linear interpolation.
_GRID = np.linspace(0.0, 1.0, 101)
_CHUNK_ROWS = 20_000  # bounds the (rows x grid) quantile matrix to a few MB at a time


@validate_params({"n_estimators": Integer(1), "n_jobs": Optional(Jobs()), "random_state": Optional(Seed())})
class ForestQuantileEngine:
    """Quantile regression forest (``quantile-forest``, Cython).

    Leaves of at least ``min_samples_leaf`` rows (5: larger leaves, such as ranger's 20 in fairadapt,
    smooth the conditional distributions and visibly attenuate the transported effects of binary
    outcomes; 30 trees aggregate ~150 values per row).
    The forest learns from at most ``max_train_rows`` rows of the group (a random subset; None uses
    all), each tree draws ``max_samples`` (a share) of them, at most ``max_rows_per_tree``, and a leaf
    keeps at most ``max_leaf_values`` of its training values (a random subset; None keeps all): this
    keeps the trees fast and makes fitting cost constant in n on large data, where discrete parents
    leave leaves of hundreds of identical rows. Both questions are answered from each
    row's quantiles on a grid of 101 levels, read off the values pooled from the row's leaves in every
    tree (quantile-forest's unweighted-leaves, leaves-aggregated-first prediction, computed here in
    vectorised numpy, which is several times faster); rows with equal parents share one prediction.

    Ranks are always out of bag, so that every row is ranked alike, seen in training or new: a row the
    forest learned from is read off the trees that did not draw it (fairadapt's choice), and any other
    row (a new one, or a training row beyond ``max_train_rows``) off a random subset of the trees, each
    kept with the share of trees a learned row is out of bag of (seeded by ``random_state``). Ranks read
    with the row's own value in its leaves are pulled in, ranks of new rows off every tree are not, so
    the calibration ``FairAdapt`` fits on the training ranks did not hold for new rows: on COMPAS the
    held-out twins of priors overshot the baseline by 0.60 given Z (t = −2.3; in sample −0.003) and the
    fair predictor kept a held-out Ctf-IE of +2.0 pp. Read alike, both sets of ranks carry the same
    estimation noise, and the calibration maps both to uniform.
    """

    def __init__(self, n_estimators: int = 30, min_samples_leaf: int = 5, max_samples: float = 0.5,
                 max_rows_per_tree: int = 10_000, max_train_rows: int | None = 20_000, max_leaf_values: int | None = 16,
                 n_jobs: int | None = 1, random_state: int | None = 0):
        self.n_estimators = n_estimators
        self.min_samples_leaf = min_samples_leaf
        self.max_samples = max_samples
        self.max_rows_per_tree = max_rows_per_tree
        self.max_train_rows = max_train_rows
        self.max_leaf_values = max_leaf_values
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, features: np.ndarray, target: np.ndarray) -> "ForestQuantileEngine":
        if features.shape[1] == 0:
            # No parents: the conditional distribution is the marginal, whose empirical version is exact
            # (and a forest of single huge leaves would be slow).
            self.forest_ = LinearQuantileEngine().fit(features, target)
            return self
        self.train_rows_ = np.arange(len(target))  # which of the given rows the forest learns from
        if self.max_train_rows is not None and len(target) > self.max_train_rows:
            self.train_rows_ = np.sort(np.random.default_rng(self.random_state).choice(len(target), self.max_train_rows, replace=False))
            features, target = features[self.train_rows_], target[self.train_rows_]
        rows_per_tree = max(2 * self.min_samples_leaf, min(int(self.max_samples * len(target)), self.max_rows_per_tree))
        self.forest_ = RandomForestQuantileRegressor(
            n_estimators=self.n_estimators,
            min_samples_leaf=self.min_samples_leaf,
            max_samples_leaf=self.max_leaf_values,
            max_samples=min(rows_per_tree, len(target)),
            max_features=1.0,
            n_jobs=self.n_jobs,
            random_state=self.random_state,
        ).fit(features, target)
        # Per tree and node, 1-based positions of the leaf's values in the sorted targets (0 pads).
        self.leaf_values_ = np.asarray(self.forest_.forest_.y_train_leaves)[:, :, 0, :].astype(np.int32)
        self.sorted_targets_ = np.asarray(self.forest_.forest_.y_train)[0]
        # Which learned rows each tree drew (rows x trees), and the share of trees a learned row is out of bag of.
        self.in_bag_ = np.zeros((len(target), self.n_estimators), dtype=bool)
        for tree, drawn in enumerate(self.forest_.estimators_samples_):
            self.in_bag_[drawn, tree] = True
        self.out_of_bag_share_ = 1.0 - float(self.in_bag_.mean())
        return self

    def _grid_values(self, features: np.ndarray, rows: slice) -> np.ndarray:
        """The quantiles on ``_GRID`` (rows x 101) of ``features[rows]``, read off every tree."""
        unique, inverse = np.unique(features[rows], axis=0, return_inverse=True)
        return self._pooled_quantiles(self.forest_.apply(unique))[inverse.ravel()]

    def _out_of_bag_grid_values(self, features: np.ndarray, rows: slice, in_sample: bool) -> np.ndarray:
        """The quantiles on ``_GRID`` of ``features[rows]``, each row read off the trees that did not draw it;
        with ``in_sample`` the rows are those given to ``fit``, of which it learned from ``train_rows_``."""
        positions = np.arange(len(features))[rows]
        trees = self._random_trees(positions, in_sample)
        if in_sample:
            order = np.minimum(np.searchsorted(self.train_rows_, positions), len(self.train_rows_) - 1)
            learned = self.train_rows_[order] == positions
            trees[learned] = ~self.in_bag_[order[learned]]
        trees[~trees.any(axis=1)] = True  # a row every tree drew (or no tree kept) is read off all of them
        return self._pooled_quantiles(self.forest_.apply(features[rows]), trees)

    def _random_trees(self, positions: np.ndarray, in_sample: bool) -> np.ndarray:
        """Per row, the trees it is read off when no tree learned from it: each kept with the out-of-bag share, drawn
        from a stream seeded by the engine's seed, the kind of rows and the chunk's first position (chunks start at
        fixed positions, so the draws depend on the seed and the rows only)."""
        stream = 1 if in_sample else 2
        seeds = np.random.SeedSequence([self.random_state or 0, stream, int(positions[0]) if len(positions) else 0])
        draws = np.random.default_rng(seeds).uniform(size=(len(positions), self.in_bag_.shape[1]))
        return draws < self.out_of_bag_share_

    def _pooled_quantiles(self, leaves: np.ndarray, trees: np.ndarray | None = None) -> np.ndarray:
        """Quantiles on ``_GRID`` of the values pooled from each row's leaves (``leaves``: rows x trees), of the
        trees marked in ``trees`` (rows x trees, boolean; None: every tree).

        Positions in the sorted targets order the values, so sorting the integer positions sorts the
        values; the padding zeros come first. Linear interpolation between order statistics (numpy's
        default quantile) within each row's own count of values.
        """
        values_in_leaves = self.leaf_values_[np.arange(leaves.shape[1]), leaves]
        if trees is not None:
            values_in_leaves = values_in_leaves * trees[:, :, None]  # zeros: the padding of unused values
        pooled = np.sort(values_in_leaves.reshape(len(leaves), -1), axis=1)
        empty = (pooled == 0).sum(axis=1)
        position = empty[:, None] + _GRID[None, :] * (pooled.shape[1] - empty - 1)[:, None]
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, pooled.shape[1] - 1)
        frac = position - low
        values = self.sorted_targets_
        return (1 - frac) * values[np.take_along_axis(pooled, low, 1) - 1] + frac * values[np.take_along_axis(pooled, high, 1) - 1]

    def ranks(self, features: np.ndarray, target: np.ndarray, in_sample: bool) -> np.ndarray:
        if isinstance(self.forest_, LinearQuantileEngine):
            return self.forest_.ranks(features, target, in_sample)
        return _in_chunks(lambda rows: _rank_in_rows(self._out_of_bag_grid_values(features, rows, in_sample), target[rows]), len(target))

    def quantiles(self, features: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        if isinstance(self.forest_, LinearQuantileEngine):
            return self.forest_.quantiles(features, ranks)
        return _in_chunks(lambda rows: _interpolate_rows(self._grid_values(features, rows), ranks[rows]), len(ranks))


def _in_chunks(compute, n: int) -> np.ndarray:
    """Apply ``compute(rows)`` to slices of at most ``_CHUNK_ROWS`` rows (bounds the grid matrices' memory)."""
    out = np.empty(n)
    for start in range(0, n, _CHUNK_ROWS):
        rows = slice(start, start + _CHUNK_ROWS)
        out[rows] = compute(rows)
    return out


def _rank_in_rows(grid_values: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Rank of each value in its row's distribution given by quantiles on ``_GRID`` (inverse of ``_interpolate_rows``).

    Between two distinct grid quantiles the rank is interpolated linearly; a value equal to several
    grid quantiles (a tie) gets the middle of their levels; outside the grid it gets 0 or 1.
    """
    step = 1.0 / (len(_GRID) - 1)
    below = (grid_values < values[:, None]).sum(axis=1)
    at_most = (grid_values <= values[:, None]).sum(axis=1)
    rows = np.arange(len(values))
    upper = np.clip(below, 1, len(_GRID) - 1)
    low_value, high_value = grid_values[rows, upper - 1], grid_values[rows, upper]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(high_value > low_value, (values - low_value) / (high_value - low_value), 0.5)
    inside = (upper - 1 + np.clip(frac, 0.0, 1.0)) * step
    tied = (below + at_most - 1) / 2 * step
    ranks = np.where(at_most > below, tied, inside)
    ranks = np.where(below == len(_GRID), 1.0, np.where(at_most == 0, 0.0, ranks))
    return np.clip(ranks, 0.0, 1.0)


class LinearQuantileEngine:
    """Location-shift linear model: least squares mean plus the empirical distribution of residuals.

    Exact for linear-Gaussian (and any homoscedastic linear) structural equations; fast, no randomness.
    """

    def fit(self, features: np.ndarray, target: np.ndarray) -> "LinearQuantileEngine":
        design = np.column_stack([np.ones(len(target)), features])
        self.coef_, *_ = np.linalg.lstsq(design, target, rcond=None)
        self.residuals_ = np.sort(target - design @ self.coef_)
        return self

    def _mean(self, features: np.ndarray) -> np.ndarray:
        return self.coef_[0] + features @ self.coef_[1:]

    def ranks(self, features: np.ndarray, target: np.ndarray, in_sample: bool) -> np.ndarray:
        return mid_ranks(self.residuals_, target - self._mean(features))

    def quantiles(self, features: np.ndarray, ranks: np.ndarray) -> np.ndarray:
        # Hazen's plotting positions (k + 1/2) / n invert the mid-ranks of ``ranks`` exactly: numpy's
        # quantile(method="hazen"), read off the sorted residuals by interpolation (no partition per rank).
        n = len(self.residuals_)
        return self._mean(features) + np.interp(np.clip(ranks, 0.0, 1.0) * n - 0.5, np.arange(n), self.residuals_)


def mid_ranks(sorted_sample: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each value's mid-rank in ``sorted_sample``: the share below it plus half the share equal to it."""
    below = np.searchsorted(sorted_sample, values, side="left")
    at_most = np.searchsorted(sorted_sample, values, side="right")
    return (below + at_most) / (2.0 * len(sorted_sample))


def _interpolate_rows(grid_values: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Value at rank u for each row, from that row's quantiles on ``_GRID``."""
    position = np.clip(ranks, 0.0, 1.0) * (len(_GRID) - 1)
    low = np.floor(position).astype(int)
    high = np.minimum(low + 1, len(_GRID) - 1)
    frac = position - low
    rows = np.arange(len(ranks))
    return (1 - frac) * grid_values[rows, low] + frac * grid_values[rows, high]


ENGINES = {"forest": ForestQuantileEngine, "linear": LinearQuantileEngine}


@validate_params({"seed": Optional(Seed())})
def make_engine(engine, seed: int):
    """A fresh engine from a name in ``ENGINES`` or a prototype object (deep-copied, seeded when it takes one)."""
    if isinstance(engine, str):
        if engine not in ENGINES:
            raise FairpathInputError(f"unknown quantile engine {engine!r}; choose one of {sorted(ENGINES)} or pass an engine object")
        made = ENGINES[engine]()
    else:
        for method in ("fit", "ranks", "quantiles"):
            if not callable(getattr(engine, method, None)):
                raise FairpathInputError(f"a quantile engine needs a {method}() method; {type(engine).__name__} has none")
        made = copy.deepcopy(engine)
    if hasattr(made, "random_state"):
        made.random_state = seed
    return made
