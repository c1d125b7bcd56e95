"""The preset learners ("stack", "gbm", "rf", "linear"): LightGBM with early stopping, a quadratic GLM,
their holdout stack, and rows binned once for several fits. Imported on the first fit (see
:mod:`fairpath._learners`)."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairpath._validation import Integer, Probability, Real, Seed, validate_params

# The "gbm" preset's settings from fairpath._learners.LARGE_FIT_ROWS training rows on (measured there).
_LARGE_FIT_GBM = {"learning_rate": 0.2, "num_leaves": 63, "min_child_samples": 100}
# One OpenMP thread everywhere (datasets, training, prediction): folds run in parallel Python
# threads, and concurrent OpenMP regions inside LightGBM are not safe.
_DATASET_PARAMS = {"verbose": -1, "num_threads": 1}


class SharedBins:
    """Rows binned once into a LightGBM Dataset, for several "gbm" fits on them or on subsets of them.

    A cross-fitting fold fits up to three GBMs on the same training rows and features (μ(x, z) and
    both ν; μ(x, z, w) and its two honest halves). Binning (finding every feature's bin edges and
    coding each cell) cost 14% of those fits on Census 2018 (0.19 s of about 1.3 s per fit); here it
    is done once per fold, and each fit takes its training and validation rows as subsets of the
    binned rows (no re-binning; the values themselves are not kept, only their bins).
    ``rows(positions)`` gives what a fit receives in place of its matrix.
    """

    def __init__(self, matrix: np.ndarray):
        self.dataset = lgb.Dataset(matrix, np.zeros(len(matrix)), params=_DATASET_PARAMS).construct()

    def rows(self, positions: np.ndarray) -> "BinnedRows":
        return BinnedRows(self, np.asarray(positions))


class BinnedRows:
    """The rows ``positions`` (sorted) of a :class:`SharedBins`: an :class:`EarlyStoppingGBM`'s training data."""

    def __init__(self, shared: SharedBins, positions: np.ndarray):
        self.shared, self.positions = shared, positions

    def __len__(self) -> int:
        return len(self.positions)

    def subset(self, rows: np.ndarray, label: np.ndarray) -> lgb.Dataset:
        """The binned ``rows`` (positions in these rows, sorted) with their ``label``."""
        subset = self.shared.dataset.subset(self.positions[rows]).construct()
        subset.set_label(label)
        return subset


@validate_params({"learning_rate": Real(0.0, None, open_low=True), "max_rounds": Integer(1), "early_stopping_rounds": Integer(1),
                  "validation_fraction": Probability(), "random_state": Seed()})
class EarlyStoppingGBM(BaseEstimator):
    """LightGBM with early stopping on an internal validation split (the default learner).

    Rounds are chosen on ``validation_fraction`` of the training rows, so no tuning is needed;
    the model keeps the trees fitted on the remaining rows. ``X`` is a matrix, or
    :class:`BinnedRows` of rows binned once for several fits.
    """

    def __init__(self, objective="regression", learning_rate=0.1, num_leaves=15, min_child_samples=20,
                 max_rounds=500, early_stopping_rounds=10, validation_fraction=0.2, random_state=0):
        self.objective = objective
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.max_rounds = max_rounds
        self.early_stopping_rounds = early_stopping_rounds
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        n = len(y)
        valid = rng.random(n) < self.validation_fraction
        params = {
            "objective": self.objective,
            "learning_rate": self.learning_rate,
            "num_leaves": self.num_leaves,
            "min_child_samples": self.min_child_samples,
            "seed": self.random_state,
            "deterministic": True,
            "num_threads": 1,
            "verbose": -1,
        }
        self.validation_mask_ = valid
        if isinstance(X, BinnedRows):
            train, valid_set = X.subset(np.flatnonzero(~valid), y[~valid]), X.subset(np.flatnonzero(valid), y[valid])
        else:
            train = lgb.Dataset(X[~valid], y[~valid], params=_DATASET_PARAMS)
            valid_set = lgb.Dataset(X[valid], y[valid], reference=train, params=_DATASET_PARAMS)
        # keep_training_booster: the booster is used as it stands, without the round trip through
        # a model string that LightGBM makes by default to free the training data (5% of a COMPAS
        # decomposition); the fitted learner lives only as long as its predictions are made.
        self.booster_ = lgb.train(
            params, train, num_boost_round=self.max_rounds, valid_sets=[valid_set],
            callbacks=[lgb.early_stopping(self.early_stopping_rounds, verbose=False)], keep_training_booster=True,
        )
        return self

    def predict(self, X):
        return self.booster_.predict(X, num_iteration=self.booster_.best_iteration or None, num_threads=1)


class QuadraticFeatures(TransformerMixin, BaseEstimator):
    """All squares and pairwise products of the standardised, range-clipped columns, standardised.

    The same features as ``make_pipeline(<clip to the training range>, StandardScaler(),
    PolynomialFeatures(2, include_bias=False), StandardScaler())`` (tested against it), in one
    step: the GLM is fitted about 70 times per decomposition on a few thousand rows, where the four
    steps' input validation cost more than the arithmetic. Clipping keeps the squares from
    extrapolating beyond the training range. ``interacting`` (column positions) keeps the squares
    and products of those columns only, every column entering linearly.
    """

    def __init__(self, interacting=None):
        self.interacting = interacting

    def fit(self, X, y=None):
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        return self._standardise(self._fit(X))  # the pipeline's fit: the features are built once

    def transform(self, X):
        return self._standardise(self._expand(X))

    def _fit(self, X):
        """Learn the clipping range and both standardisations; returns the unstandardised features."""
        X = np.asarray(X, dtype=float)
        self.low_, self.high_ = X.min(axis=0), X.max(axis=0)
        self.center_, self.scale_ = _moments(X)  # the training rows lie within their own range: no clipping
        columns = np.arange(X.shape[1]) if self.interacting is None else np.asarray(self.interacting)
        first, second = np.triu_indices(len(columns))  # PolynomialFeatures' order: (0,0), (0,1), …, (1,1), …
        self.pairs_ = (columns[first], columns[second])
        features = self._expand(X)
        self.poly_center_, self.poly_scale_ = _moments(features)
        return features

    def _inputs(self, X):
        """The columns clipped to the training range and standardised (in place of the clipped copy)."""
        Z = np.clip(np.asarray(X, dtype=float), self.low_, self.high_)
        Z -= self.center_
        Z /= self.scale_
        return Z

    def _expand(self, X):
        Z, (first, second) = self._inputs(X), self.pairs_
        features = np.empty((len(Z), Z.shape[1] + len(first)))
        features[:, :Z.shape[1]] = Z
        np.multiply(Z[:, first], Z[:, second], out=features[:, Z.shape[1]:])
        return features

    def _standardise(self, features):
        """Standardised in place: ``features`` are always a fresh array of :meth:`_expand` (a fit's rows, whose
        copies took 9% of a million-row decomposition)."""
        features -= self.poly_center_
        features /= self.poly_scale_
        return features

    def linear_function(self, X, coef, intercept: float) -> np.ndarray:
        """``transform(X) @ coef + intercept`` without building the features: both standardisations folded
        into the coefficients, the products as ``Σ_ab c_ab z_a z_b = rowsum((Z C) ∘ Z)`` with C holding
        each pair's coefficient. Memory of order n × p instead of n × p²/2: a GLM's predictions on the
        rows of a large fold took 12% of Census 2018's decomposition through the features."""
        weights = np.asarray(coef, dtype=float) / self.poly_scale_
        constant = intercept - weights @ self.poly_center_
        p, Z = len(self.center_), self._inputs(X)
        pairs = np.zeros((p, p))
        pairs[self.pairs_] = weights[p:]  # each (a, b), a ≤ b, once
        return constant + Z @ weights[:p] + np.einsum("ij,ij->i", Z @ pairs, Z)


def _moments(X):
    """Column means and standard deviations, a (near-)constant column's scale 1 (as StandardScaler)."""
    scale = X.std(axis=0)
    scale[scale < 10 * np.finfo(float).eps] = 1.0
    return X.mean(axis=0), scale


def _quadratic_glm(binary: bool, interacting=None) -> BaseEstimator:
    """Ridge (or logistic) regression on :class:`QuadraticFeatures`."""
    final = LogisticRegression(C=1.0, solver="newton-cholesky", max_iter=100) if binary else Ridge(alpha=1.0)
    return make_pipeline(QuadraticFeatures(interacting), final)


@validate_params({"random_state": Seed()})
class StackedLearner(BaseEstimator):
    """A convex combination of :class:`EarlyStoppingGBM` and a quadratic GLM (the "stack" preset).

    The GBM early-stops on its validation split; the GLM is fitted on the same training rows, and
    the weight w ∈ {0, 0.05, …, 1} of the GBM minimises the squared error of w·GBM + (1 − w)·GLM on
    the validation rows (holdout stacking; neither model is refitted, which keeps the cost near
    twice the GBM's). Smooth, near-linear mechanisms get the GLM's small bias, others the trees'
    flexibility; the weight is ``weight_``. ``large`` (the "stack" preset from ``LARGE_FIT_ROWS``
    training rows): the GBM takes its large-fit settings and the GLM, whose few parameters need no
    more rows, is fitted on a subsample of at most ``_GLM_MAX_CELLS`` cells of quadratic features
    (``glm_rows_`` rows). The GLM predicts from its coefficients (:meth:`QuadraticFeatures.linear_function`).
    """

    def __init__(self, binary=False, random_state=0, large=False):
        self.binary = binary
        self.random_state = random_state
        self.large = large

    def fit(self, X, y):
        objective = "cross_entropy" if self.binary else "regression"
        sized = _LARGE_FIT_GBM if self.large else {}
        self.gbm_ = EarlyStoppingGBM(objective=objective, random_state=self.random_state, **sized).fit(X, y)
        valid = self.gbm_.validation_mask_
        self.weight_, self.glm_ = 1.0, None
        if valid.any() and np.ptp(y[~valid]) > 0:  # else nothing to weigh on, or one class to fit
            train, interacting = np.flatnonzero(~valid), None
            if self.large:
                interacting = self._interacting(X.shape[1])
                # its few parameters need no more rows; its quadratic features would fill the memory
                cap = max(_GLM_MAX_CELLS // _quadratic_width(X.shape[1], interacting), _GLM_MIN_ROWS)
                if len(train) > cap:
                    train = np.sort(np.random.default_rng(self.random_state).choice(train, cap, replace=False))
            glm = _quadratic_glm(self.binary, interacting).fit(X[train], y[train])
            self.glm_rows_ = len(train)
            a, b = self.gbm_.predict(X[valid]), self._glm_predict(glm, X[valid])
            losses = [np.mean((y[valid] - (w * a + (1 - w) * b)) ** 2) for w in _STACK_WEIGHTS]
            self.weight_ = float(_STACK_WEIGHTS[int(np.argmin(losses))])
            self.glm_ = glm if self.weight_ < 1 else None
        return self

    def _interacting(self, p: int):
        """The large stack's GLM squares and multiplies the ``_GLM_INTERACTING`` columns the GBM gained most
        from (all of them when there are no more): Census 2018's 31 columns gave 527 quadratic terms,
        whose features took 43% of its decomposition."""
        if p <= _GLM_INTERACTING:
            return None
        gains = self.gbm_.booster_.feature_importance("gain")
        return np.sort(np.argsort(-gains, kind="stable")[:_GLM_INTERACTING])

    def _glm_predict(self, glm, X):
        """The GLM's predictions (``predict``, or ``predict_proba(X)[:, 1]``) from its coefficients."""
        (_, quadratic), (_, final) = glm.steps
        linear = quadratic.linear_function(X, np.ravel(final.coef_), float(np.ravel(final.intercept_)[0]))
        return expit(linear) if self.binary else linear

    def predict(self, X):
        prediction = self.gbm_.predict(X)
        if self.glm_ is None:
            return prediction
        return self.weight_ * prediction + (1 - self.weight_) * self._glm_predict(self.glm_, X)


_STACK_WEIGHTS = np.linspace(0.0, 1.0, 21)
# The large stack's GLM is fitted on at most this many cells of quadratic features (32 MB), and at least
# _GLM_MIN_ROWS rows: 148,000 rows of 6 features (27 terms), 46,500 of Census 2018's 31 (86 terms, see _interacting).
_GLM_MAX_CELLS = 4_000_000
_GLM_MIN_ROWS = 10_000


_GLM_INTERACTING = 10


def _quadratic_width(p: int, interacting=None) -> int:
    k = p if interacting is None else len(interacting)
    return p + k * (k + 1) // 2


def _random_forest(objective: str, seed: int) -> BaseEstimator:
    # LightGBM's random-forest mode: bagged, unshrunk trees (as ranger), much faster than sklearn's forest.
    return lgb.LGBMRegressor(
        boosting_type="rf", objective=objective, n_estimators=50, subsample=0.632, subsample_freq=1,
        colsample_bytree=1.0, feature_fraction_bynode=0.7, num_leaves=31, min_child_samples=10, max_bin=63, random_state=seed, n_jobs=1,
        verbose=-1, deterministic=True,
    )


def preset(name: str, binary: bool, seed: int, large: bool) -> BaseEstimator:
    """A fresh preset learner ``name`` (one of ``fairpath._learners.PRESETS``); ``large``: the training rows
    reach ``fairpath._learners.LARGE_FIT_ROWS``."""
    objective = "cross_entropy" if binary else "regression"
    if name == "stack":
        return StackedLearner(binary=binary, random_state=seed, large=large)
    if name == "gbm":
        return EarlyStoppingGBM(objective=objective, random_state=seed, **(_LARGE_FIT_GBM if large else {}))
    if name == "rf":
        return _random_forest(objective, seed)
    if binary:  # "linear"
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    return make_pipeline(StandardScaler(), LinearRegression())
