"""Causal data adaptation (Plečko & Meinshausen's fairadapt algorithm), in Python.

Every row of a comparison level gets a *fair twin*: the values its variables would take had it
belonged to the baseline level, keeping the resolving variables (and what only they cause) at
their observed values. Variables are visited in topological order; each affected variable is
transported by quantile matching: its rank u in its own level's conditional distribution given its
parents, then the u-quantile of the baseline level's conditional distribution at the twin's
(already adapted) parents. With K > 2 levels this is fairadapt's method applied to each level in
turn: one engine per level and adapted variable, and every non-baseline level is mapped to the
baseline level's world (the twins of all levels share one distribution, the baseline's).

Conventions of this implementation:
- The protected attribute must have no parents (fairadapt's "root" case); one quantile model per
  level. Confounders joined to X by a bidirected edge (Z in the SFM) are transported as well,
  unless resolving: that is what removes the spurious effect.
- Each comparison level's estimated ranks are calibrated to be uniform (their mid-ranks among the
  group's training ranks) before quantile matching: estimated conditional distributions spread the
  ranks out, and matching carried that into the twins (on Census 2018 the adapted mediators' gaps
  given Z were up to 0.026 standard deviations, against under 0.01 calibrated). New rows
  (``transform``) are calibrated against the same training ranks of their level. For that to hold, a
  training row and a new row must be ranked alike: the forest engine reads every rank out of bag (see
  ``ForestQuantileEngine``), so a new row's twin is made exactly as a training row's is, and the twins
  of new rows from the training rows' population have the distribution the training twins have.
- Discrete variables (non-numeric, integer, boolean, or fewer than ``discrete_max_levels`` distinct
  values) are adapted as integer codes plus uniform jitter in (-1/2, 1/2) and rounded back;
  categories are ordered by their mean outcome on the training rows, numeric levels by value.
  A discrete variable with no resolving ancestor is matched to the baseline level's marginal, each
  comparison level by its own cut points, found on the training rows and reused by ``transform``.
- ``transform`` of new rows: levels of X unseen in training raise an error. A category unseen in training
  (of any covariate, resolving ones included) takes its column's fallback, the category of the training
  rows' median code, with a warning naming the column, the categories and their rows (``_Encoding``); numeric values of a
  discrete variable unseen in training are placed between their neighbouring levels (beyond the
  training range, at the extreme level).
- The adapted data keep the observed protected attribute (so every level stays identifiable); a
  learner trained for a fair predictor should not use it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sklearn.base import BaseEstimator, TransformerMixin

from fairpath._estimators import check_fitted
from fairpath._exceptions import FairpathInputError
from fairpath._vocabulary import Engine

from fairpath._progress import progress as progress_bar
from fairpath._seeds import ENGINES, JITTER, child_rng, child_seed
from fairpath._validation import (
    Integer, Seed, check_columns_arg, check_finite, check_fit_group_sizes, check_frame, check_outcome_varies, python_value,
    validate_params,
)
from fairpath.adaptation._graph import CausalGraph
from fairpath.adaptation._quantile import make_engine, mid_ranks


@dataclass
class _Encoding:
    """How one column maps to numbers: continuous values or 1-based integer codes of ``levels``.

    A categorical column's ``fallback`` is the training category that a category unseen in training takes in
    new rows (``known``): the category of the training rows' median code, codes ordered by mean outcome. New
    rows may come without an outcome, so nothing tells where an unseen category belongs in that order; the
    median row's category is the one a training row's category is nearest to in that order on average (the
    median minimises the mean absolute distance), so it errs least toward either end, and it is never an
    empty or extreme cell: quantile matching transports its rows with a well-populated level. (The most
    frequent category, the other candidate, can sit at either end of the order.)
    """

    kind: str  # "continuous" | "discrete"
    levels: np.ndarray | None = None  # sorted numeric levels, or categories ordered by mean outcome
    categorical: bool = False
    fallback: object = None  # categorical: the category that unseen categories of new rows take

    @classmethod
    def categories(cls, values: pd.Series, outcome: np.ndarray) -> "_Encoding":
        """A categorical column's encoding: its categories ordered by their mean outcome, and its fallback."""
        labels = values.astype(object).to_numpy()
        means = pd.Series(outcome).groupby(labels).mean()
        # Ties in the mean outcome are broken by the category label, for reproducibility.
        order = sorted(means.index, key=lambda level: (means[level], str(level)))
        counts = pd.Series(labels).value_counts().reindex(order).to_numpy()
        median_row = (len(labels) - 1) // 2  # the lower median of the sorted codes, a code of a training row
        fallback = order[int(np.searchsorted(np.cumsum(counts), median_row, side="right"))]
        return cls("discrete", np.array(order, dtype=object), categorical=True, fallback=fallback)

    def known(self, values: pd.Series, column: str) -> pd.Series:
        """``values`` with every category unseen in training replaced by ``fallback``, with a warning that names
        the column, those categories, their rows and the category they take (``values`` itself when none is new)."""
        if not self.categorical:
            return values
        unseen = ~values.isin(self.levels)
        if not unseen.any():
            return values
        names = sorted(map(str, pd.unique(values[unseen])))
        shown = f"{names[:10]}" + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        warnings.warn(
            f"column {column!r} has {len(names)} categor{'y' if len(names) == 1 else 'ies'} unseen in training, {shown}, "
            f"in {int(unseen.sum()):,} row(s): they are treated as {python_value(self.fallback)!r}, the category of the "
            "training rows' median code (categories ordered by mean outcome); to choose otherwise, recode them to a "
            "known category or refit on data that contains them",
            stacklevel=4,  # the caller of FairAdapt.transform
        )
        # the column's own type, but for a pandas categorical, whose categories may lack the fallback
        dtype = object if isinstance(values.dtype, pd.CategoricalDtype) else values.dtype
        return values.astype(object).where(~unseen, self.fallback).astype(dtype)

    def encode(self, values: pd.Series) -> np.ndarray:
        """Numbers of ``values``; a categorical column's values are known categories (see ``known``)."""
        if self.kind == "continuous":
            return values.to_numpy(dtype=float)
        if self.categorical:
            lookup = {level: code for code, level in enumerate(self.levels, start=1)}
            return values.map(lookup).to_numpy(dtype=float)
        numeric = values.to_numpy(dtype=float)
        return np.interp(numeric, self.levels.astype(float), np.arange(1, len(self.levels) + 1))

    def decode(self, codes: np.ndarray) -> np.ndarray:
        if self.kind == "continuous":
            return codes
        index = np.clip(np.rint(codes).astype(int), 1, len(self.levels)) - 1
        return self.levels[index]


@dataclass
class _LevelTransport:
    """The fitted transport of one comparison level's rows of one variable to the baseline level."""

    engine: object  # the level's own conditional distribution: its rows' ranks
    matching_cuts: np.ndarray | None  # continuous cut points -> codes (marginal matching)
    training_ranks: np.ndarray  # the level's estimated ranks in training, sorted

    def calibrate(self, ranks: np.ndarray) -> np.ndarray:
        """Estimated ranks made uniform: each one's position among the training ranks.

        A forest's ranks of a group's own rows are not uniform (noise in the estimated conditional
        distributions spreads them out; in-sample leaves pull them in), and quantile matching would
        carry that distortion into the twins: on a 5-level variable with 85% of its mass at one level
        (100,000 rows) it moved that level's share by 1.0 point with in-sample ranks and 2.5 out of bag,
        against 0.3 calibrated. Their empirical distribution function (mid-ranks) restores uniformity
        and keeps each row's order.
        """
        return mid_ranks(self.training_ranks, ranks)


@dataclass
class _VariableModel:
    """The fitted transport of one adapted variable: the baseline level's engine (quantiles) and, per
    comparison level, the transport of that level's rows."""

    column: str
    parents: list[str]
    engine_baseline: object
    transports: dict  # comparison level -> _LevelTransport


@validate_params({"discrete_max_levels": Integer(2), "random_state": Seed()})
class FairAdapt(TransformerMixin, BaseEstimator):
    """Causal data adaptation with quantile preservation.

    Parameters
    ----------
    graph : CausalGraph over every column used (X, the covariates and the outcome y).
    x, baseline : the protected attribute and the level whose mechanisms the twins follow; rows of
        every other level (the comparison levels: one with two levels, K − 1 with K) get twins.
    y : the outcome column; it is adapted on the training rows only.
    resolving : columns kept at their observed values (with everything only they change).
    engine : ``"forest"`` (quantile regression forest, default), ``"linear"`` or an engine object.
    discrete_max_levels : numeric columns with fewer distinct values are treated as discrete.
    random_state : int seeding the jitter and the engines.

    A scikit-learn transformer (``get_params``, ``clone``): ``fit(train)`` takes a DataFrame holding
    every column of the graph, ``transform(data)`` the covariates of new rows.

    Fitted attributes: ``levels_`` (the baseline, then ``comparisons_``: the other levels, sorted),
    ``comparison_`` (the comparison level with two levels, None with more), ``order_`` (variables adapted,
    in order), ``resolving_`` (given plus implied), ``encodings_``, ``models_``, ``adapted_train_`` (adapted
    training data), ``train_``.
    """

    def __init__(self, graph: CausalGraph, *, x: str, baseline, y: str, resolving=(), engine: Engine | object = "forest",
                 discrete_max_levels: int = 10, random_state: int = 0):
        self.graph = graph
        self.x = x
        self.baseline = baseline
        self.y = y
        self.resolving = resolving
        self.engine = engine
        self.discrete_max_levels = discrete_max_levels
        self.random_state = random_state

    # -- checks --------------------------------------------------------------------------------
    def _check_setup(self, data: pd.DataFrame) -> None:
        graph = self.graph
        if not isinstance(graph, CausalGraph):
            raise FairpathInputError(
                f"graph must be a CausalGraph, got {type(graph).__name__}; build one with graph_from_sfm(sfm), "
                "CausalGraph(nodes, edges, bidirected) or CausalGraph.from_edge_table(table, columns)"
            )
        check_frame(data, "training data")
        for role, column in (("protected attribute", self.x), ("outcome", self.y)):
            if column not in graph.nodes:
                raise FairpathInputError(f"the causal graph omits the {role} {column!r}; add it to the graph")
        missing = [c for c in graph.nodes if c not in data.columns]
        if missing:
            raise FairpathInputError(f"the causal graph names {missing}, which are not columns of the data")
        if graph.parents(self.x):
            raise FairpathInputError(
                f"the protected attribute {self.x!r} has parents {graph.parents(self.x)} in the graph; adaptation needs "
                "X to be a root (model shared causes with a bidirected edge instead)"
            )
        resolving = check_columns_arg("resolving", self.resolving)
        for role, column in (("protected attribute", self.x), ("outcome", self.y)):
            if column in resolving:
                raise FairpathInputError(f"the {role} {column!r} cannot be a resolving variable; remove it from the resolving set")
        unknown = [c for c in resolving if c not in graph.nodes]
        if unknown:
            raise FairpathInputError(f"resolving variables {unknown} are not nodes of the causal graph")
        check_finite(data[graph.nodes], levels=[self.x])
        if not pd.api.types.is_numeric_dtype(data[self.y]):
            raise FairpathInputError(f"the outcome {self.y!r} must be numeric (binary 0/1 or continuous)")
        check_outcome_varies(data[self.y], self.y)
        levels = pd.unique(data[self.x]).tolist()  # Python values: messages show 0, not np.int64(0)
        if self.baseline not in levels:
            raise FairpathInputError(f"baseline level {self.baseline!r} does not occur in {self.x!r} (levels {levels})")
        if len(levels) < 2:
            raise FairpathInputError(f"{self.x!r} has one level ({self.baseline!r}) only: adaptation needs a level to compare with the baseline")
        check_fit_group_sizes(data[self.x].value_counts().to_dict(), self.x)

    def _levels(self, data: pd.DataFrame) -> np.ndarray:
        """Each row's level as its position in ``levels_`` (0: the baseline); unseen levels are refused, all named."""
        values = data[self.x]
        unknown = sorted(map(str, pd.unique(values[~values.isin(self.levels_)])))
        if unknown:
            raise FairpathInputError(f"{self.x!r} has levels {unknown} not seen in training (expected one of {self.levels_})")
        return pd.Categorical(values, categories=self.levels_).codes

    # -- encoding ------------------------------------------------------------------------------
    def _make_encoding(self, values: pd.Series, outcome: np.ndarray) -> _Encoding:
        if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            return _Encoding.categories(values, outcome)
        unique = np.unique(values.to_numpy())
        if pd.api.types.is_integer_dtype(values) or len(unique) < self.discrete_max_levels:
            return _Encoding("discrete", unique)
        return _Encoding("continuous")

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, train: pd.DataFrame, y=None) -> "FairAdapt":
        """Fit the transport of every affected variable and adapt the training rows (outcome included).

        ``y`` is ignored (scikit-learn's signature): the outcome is the graph's column ``self.y``.
        """
        self.random_state_ = self.random_state
        self._check_setup(train)
        # the order of the comparison levels fixes their engines' seeds: sorted (pandas' category order), it does
        # not depend on the order of the rows
        others = [python_value(level) for level in pd.Categorical(train[self.x]).categories if level != self.baseline]
        self.levels_ = [python_value(self.baseline), *others]
        self.comparisons_ = others
        self.comparison_ = self.comparisons_[0] if len(self.comparisons_) == 1 else None
        group = self._levels(train)
        outcome = train[self.y].to_numpy(dtype=float)
        columns = [c for c in self.graph.order_ if c != self.x]
        self.encodings_ = {c: self._make_encoding(train[c], outcome) for c in columns}
        original = {c: self.encodings_[c].encode(train[c]) for c in columns}
        adapted = {c: v.copy() for c, v in original.items()}
        rng = child_rng(self.random_state_, JITTER, 0)

        self.resolving_ = check_columns_arg("resolving", self.resolving)
        self.models_: dict[str, _VariableModel] = {}
        affected = {self.x}
        # On a terminal only, and off with --quiet: quantile forests on large data take minutes.
        for step, column in enumerate(progress_bar(columns, desc="adaptation", unit="variable", leave=False)):
            spurious = self.x in self.graph.spouses(column)
            changed_parents = [p for p in self.graph.parents(column) if p in affected]
            if not spurious and not changed_parents:
                continue
            affected.add(column)
            if column in self.resolving_:
                continue
            if not spurious and all(p in self.resolving_ for p in changed_parents):
                self.resolving_.append(column)
                continue
            parents = [p for p in self.graph.parents(column) if p != self.x]
            target = self._jitter(original[column], column, rng)
            features = _stack(original, parents)
            # one engine per variable and level, each its own stream (seed 0's engines are not seed 1's, nor the jitter's)
            engines = [make_engine(self.engine, child_seed(self.random_state_, ENGINES, step, g)).fit(features[group == g], target[group == g])
                       for g in range(len(self.levels_))]
            model = _VariableModel(column, parents, engines[0], {})
            for g, level in enumerate(self.comparisons_, start=1):
                rows = group == g
                ranks = engines[g].ranks(features[rows], target[rows], in_sample=True)
                training_ranks = np.sort(ranks)
                moved = engines[0].quantiles(_stack(adapted, parents)[rows], mid_ranks(training_ranks, ranks))
                cuts = self._matching_cuts(column, original[column][group == 0], moved)
                model.transports[level] = _LevelTransport(engines[g], cuts, training_ranks)
                adapted[column][rows] = self._to_codes(column, cuts, moved)
            self.models_[column] = model
        self.order_ = list(self.models_)
        self.train_ = train
        self.adapted_train_ = self._assemble(train, adapted)
        return self

    def _jitter(self, values: np.ndarray, column: str, rng: np.random.Generator) -> np.ndarray:
        if self.encodings_[column].kind == "continuous":
            return values
        return values + rng.uniform(-0.5, 0.5, len(values))

    def _matching_cuts(self, column: str, baseline_codes: np.ndarray, moved: np.ndarray) -> np.ndarray | None:
        """Cut points that give one adapted comparison level the baseline level's marginal distribution.

        Only for discrete variables with no resolving ancestor, as in fairadapt; ``None`` otherwise.
        """
        encoding = self.encodings_[column]
        if encoding.kind == "continuous" or self.graph.ancestors(column) & set(self.resolving_):
            return None
        counts = np.bincount(np.rint(baseline_codes).astype(int), minlength=len(encoding.levels) + 1)[1:]
        # Integer running counts over the total stay within [0, 1]; summed float shares can pass 1 by rounding.
        shares = np.cumsum(counts)[:-1] / counts.sum()
        # numpy's default (linear) quantiles of ``moved``, read off one sort instead of a partition per cut
        return np.interp(shares * (len(moved) - 1), np.arange(len(moved)), np.sort(moved))

    def _to_codes(self, column: str, matching_cuts: np.ndarray | None, moved: np.ndarray) -> np.ndarray:
        encoding = self.encodings_[column]
        if encoding.kind == "continuous":
            return moved
        if matching_cuts is not None:
            return np.searchsorted(matching_cuts, moved, side="left").astype(float) + 1
        return np.clip(np.rint(moved), 1, len(encoding.levels))

    def _assemble(self, data: pd.DataFrame, adapted: dict[str, np.ndarray]) -> pd.DataFrame:
        out = data.copy()
        for column in self.models_:
            if column not in adapted:
                continue
            values = self.encodings_[column].decode(adapted[column])
            if self.encodings_[column].kind == "discrete":
                out[column] = pd.Series(values, index=data.index).astype(data[column].dtype)
            else:
                out[column] = values
        return out

    # -- new rows ------------------------------------------------------------------------------
    def transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """Fair twins of new rows: every adapted covariate is transported; the outcome, if present, is left as is.

        Rows of every level seen in training are transported (each with its level's ranks); other levels are refused.
        Categories unseen in training take their column's fallback first, with a warning (see the module docstring).
        """
        self._check_fitted()
        check_frame(data, "data to transform")
        covariates = [c for c in self.graph.nodes if c != self.y]
        missing = [c for c in covariates if c not in data.columns]
        if missing:
            raise FairpathInputError(f"data to transform lacks the column(s) {missing} of the causal graph")
        check_finite(data[covariates], levels=[self.x])
        group = self._levels(data)
        columns = [c for c in self.graph.order_ if c not in (self.x, self.y)]
        data = self._known_categories(data, columns)
        original = {c: self.encodings_[c].encode(data[c]) for c in columns}
        adapted = {c: v.copy() for c, v in original.items()}
        rng = child_rng(self.random_state_, JITTER, 1)
        for column, model in self.models_.items():
            if column == self.y:
                continue
            target = self._jitter(original[column], column, rng)
            for g, level in enumerate(self.comparisons_, start=1):
                rows, transport = group == g, model.transports[level]
                ranks = transport.engine.ranks(_stack(original, model.parents)[rows], target[rows], in_sample=False)
                moved = model.engine_baseline.quantiles(_stack(adapted, model.parents)[rows], transport.calibrate(ranks))
                adapted[column][rows] = self._to_codes(column, transport.matching_cuts, moved)
        return self._assemble(data, adapted)

    def _known_categories(self, data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
        """``data`` with each category unseen in training taking its column's fallback (``_Encoding.known``), in
        resolving and unadapted columns too: the twins then hold training categories only, which the predictor's
        encoder knows. ``data`` itself when every category is known."""
        known = data
        for column in columns:
            values = data[column]
            replaced = self.encodings_[column].known(values, column)
            if replaced is not values:
                known = data.copy() if known is data else known
                known[column] = replaced
        return known

    def fair_twins(self, data: pd.DataFrame | None = None) -> pd.DataFrame:
        """Each row next to its fair twin: columns ``col`` and ``col_twin`` for every adapted column.

        ``data=None`` uses the training rows (outcome adapted too); otherwise ``transform(data)``.
        """
        self._check_fitted()
        source = self.train_ if data is None else data
        twins = self.adapted_train_ if data is None else self.transform(data)
        frame = pd.DataFrame({self.x: source[self.x]}, index=source.index)
        for column in self.graph.nodes:
            if column == self.x or column not in source.columns:
                continue
            frame[column] = source[column]
            if column in self.models_ and (data is None or column != self.y):
                frame[f"{column}_twin"] = twins[column]
        return frame

    def fit_transform(self, train: pd.DataFrame, y=None) -> pd.DataFrame:
        """The adapted training rows (outcome adapted too), as ``fit(train).adapted_train_``."""
        return self.fit(train).adapted_train_

    def _check_fitted(self) -> None:
        check_fitted(self, "models_")

    def __repr__(self) -> str:
        state = f", adapted={self.order_}, resolving={self.resolving_}" if hasattr(self, "order_") else ""
        return f"FairAdapt(x={self.x!r}, baseline={self.baseline!r}, y={self.y!r}, engine={self.engine!r}{state})"


def _stack(values: dict[str, np.ndarray], columns: list[str]) -> np.ndarray:
    n = len(next(iter(values.values())))
    return np.column_stack([values[c] for c in columns]) if columns else np.empty((n, 0))
