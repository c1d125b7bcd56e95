"""Nuisance learners: named presets and any scikit-learn compatible estimator."""

from __future__ import annotations

import warnings

import lightgbm as lgb
import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairpath._exceptions import FairpathInputError

PRESETS = ("gbm", "rf", "linear")


class EarlyStoppingGBM(BaseEstimator):
    """LightGBM with early stopping on an internal validation split (the default learner).

    Rounds are chosen on ``validation_fraction`` of the training rows, so no tuning is needed;
    the model keeps the trees fitted on the remaining rows.
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
        # One OpenMP thread everywhere (datasets, training, prediction): folds run in parallel
        # Python threads, and concurrent OpenMP regions inside LightGBM are not safe.
        dataset_params = {"verbose": -1, "num_threads": 1}
        train = lgb.Dataset(X[~valid], y[~valid], params=dataset_params)
        valid_set = lgb.Dataset(X[valid], y[valid], reference=train, params=dataset_params)
        self.booster_ = lgb.train(
            params, train, num_boost_round=self.max_rounds, valid_sets=[valid_set],
            callbacks=[lgb.early_stopping(self.early_stopping_rounds, verbose=False)],
        )
        return self

    def predict(self, X):
        return self.booster_.predict(X, num_iteration=self.booster_.best_iteration or None, num_threads=1)


def _random_forest(objective: str, seed: int) -> BaseEstimator:
    # LightGBM's random-forest mode: bagged, unshrunk trees (as ranger), much faster than sklearn's forest.
    return lgb.LGBMRegressor(
        boosting_type="rf", objective=objective, n_estimators=50, subsample=0.632, subsample_freq=1,
        colsample_bytree=1.0, feature_fraction_bynode=0.7, num_leaves=31, min_child_samples=10, max_bin=63, random_state=seed, n_jobs=1,
        verbose=-1, deterministic=True,
    )


def check_learner(spec) -> None:
    """``spec`` is None, a preset name or a scikit-learn estimator *instance* (not its class)."""
    if spec is None:
        return
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise FairpathInputError(f"unknown learner {spec!r}; use one of {PRESETS} or a scikit-learn estimator")
        return
    if isinstance(spec, type):
        raise FairpathInputError(f"learner {spec.__name__} is a class; pass an instance such as {spec.__name__}()")
    if not hasattr(spec, "fit"):
        raise FairpathInputError(f"learner {spec!r} is neither a preset name {PRESETS} nor a scikit-learn estimator")


def make_learner(spec, binary: bool, seed: int) -> BaseEstimator:
    """A fresh learner for a 0/1 target (``binary``: its prediction is a probability) or a real one.

    ``spec`` is a preset name (``"gbm"``, ``"rf"``, ``"linear"``) or a scikit-learn estimator; a
    classifier is used through ``predict_proba``.
    """
    if isinstance(spec, str):
        objective = "cross_entropy" if binary else "regression"
        if spec == "gbm":
            return EarlyStoppingGBM(objective=objective, random_state=seed)
        if spec == "rf":
            return _random_forest(objective, seed)
        if spec == "linear":
            if binary:
                return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
            return make_pipeline(StandardScaler(), LinearRegression())
        raise FairpathInputError(f"unknown learner {spec!r}; use one of {PRESETS} or a scikit-learn estimator")
    if not hasattr(spec, "fit"):
        raise FairpathInputError(f"learner {spec!r} is neither a preset name {PRESETS} nor a scikit-learn estimator")
    learner = clone(spec)
    if "random_state" in learner.get_params():
        learner.set_params(random_state=seed)
    return learner


def fit_predict(spec, binary: bool, seed: int, X_train, y_train, X_predict: list) -> list[np.ndarray]:
    """Fit a learner on (X_train, y_train) and predict E[y | X] for each matrix in ``X_predict``.

    A 0/1 target whose training part holds a single class gets that constant, with no fit.
    """
    if binary and np.ptp(y_train) == 0:
        return [np.full(len(X), float(y_train[0])) for X in X_predict]
    learner = make_learner(spec, binary, seed)
    uses_proba = is_classifier(learner)  # a user's classifier, or the logistic "linear" preset
    target = y_train.astype(int) if uses_proba else y_train
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        learner.fit(X_train, target)
    if uses_proba:
        column = list(learner.classes_).index(1)
        return [learner.predict_proba(X)[:, column] for X in X_predict]
    predictions = [learner.predict(X) for X in X_predict]
    return [np.clip(p, 0.0, 1.0) for p in predictions] if binary else predictions
