"""Nuisance learners: named presets and any scikit-learn compatible estimator.

The presets' classes live in :mod:`fairpath._presets`, imported on the first fit: scikit-learn and
LightGBM take about a second to import, which ``import fairpath.causal``, ``--help`` and an input
error need not pay."""

from __future__ import annotations

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, Optional, Seed, validate_params

PRESETS = ("stack", "gbm", "rf", "linear")
# From this many training rows on, the "gbm" preset grows 63-leaf trees (at least 100 rows a leaf) at
# learning rate 0.2 instead of 15-leaf trees at 0.1. Measured on 400,000 rows of make_mixed_sfm's
# outcome: 48 rounds instead of 212, fit 2.0 s instead of 4.6 s, predicting 500,000 rows 1.7 s
# instead of 6.3 s (prediction was 38% of a 1M-row decomposition), for an RMSE against the true
# E[Y | x, z, w] of 0.093 instead of 0.080 (noise SD 1). Below, the settings are as they were.
LARGE_FIT_ROWS = 25_000  # the settings: fairpath._presets._LARGE_FIT_GBM


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


@validate_params({"seed": Seed(), "n_rows": Optional(Integer(0))})
def make_learner(spec, binary: bool, seed: int, n_rows: int | None = None):
    """A fresh learner for a 0/1 target (``binary``: its prediction is a probability) or a real one.

    ``spec`` is a preset name (``"stack"``, ``"gbm"``, ``"rf"``, ``"linear"``) or a scikit-learn
    estimator; a classifier is used through ``predict_proba``. ``n_rows``, the training rows, sizes
    the ``"gbm"`` preset's trees (see ``LARGE_FIT_ROWS``).
    """
    if isinstance(spec, str):
        if spec not in PRESETS:
            raise FairpathInputError(f"unknown learner {spec!r}; use one of {PRESETS} or a scikit-learn estimator")
        from fairpath._presets import preset

        return preset(spec, binary, seed, large=n_rows is not None and n_rows >= LARGE_FIT_ROWS)
    if not hasattr(spec, "fit"):
        raise FairpathInputError(f"learner {spec!r} is neither a preset name {PRESETS} nor a scikit-learn estimator")
    from sklearn.base import clone  # a user's estimator: scikit-learn is loaded already

    learner = clone(spec)
    if "random_state" in learner.get_params():
        learner.set_params(random_state=seed)
    return learner


def check_learner_for(spec, outcomes: dict[str, bool]) -> None:
    """Refuse a classifier for a continuous outcome column (``outcomes``: column -> is 0/1) before any fit.

    A classifier predicts probabilities of 0/1 targets only; the nested means of a 0/1 outcome
    (targets in [0, 1]) are fitted as soft labels (see :func:`fit_predict`).
    """
    if isinstance(spec, str):
        return
    from sklearn.base import is_classifier

    if not is_classifier(spec):
        return
    continuous = [name for name, binary in outcomes.items() if not binary]
    if continuous:
        raise FairpathInputError(
            f"learner {spec!r} is a classifier, but column(s) {continuous} are not 0/1; "
            "pass a regressor (or a preset such as 'gbm') for a continuous outcome"
        )


def _fit_soft_labels(learner, X, y) -> None:
    """Fit a classifier to targets in [0, 1]: each row once as class 1 with weight y and once as
    class 0 with weight 1 − y, so the weighted log-loss is minimised by P(1 | X) = E[y | X]."""
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import has_fit_parameter

    final = learner.steps[-1] if isinstance(learner, Pipeline) else (None, learner)
    if not has_fit_parameter(final[1], "sample_weight"):
        raise FairpathInputError(
            f"learner {learner!r} is a classifier without sample weights, so it cannot fit the nested means "
            "E[μ | x, z] (targets in [0, 1]) that nde/nie need; pass a regressor or a classifier that accepts "
            "sample_weight, or request only measures without nested means (e.g. tv, ctfde, ctfie, ctfse)"
        )
    key = f"{final[0]}__sample_weight" if final[0] else "sample_weight"
    n = len(y)
    labels = np.r_[np.ones(n, dtype=int), np.zeros(n, dtype=int)]
    learner.fit(np.vstack([X, X]), labels, **{key: np.r_[y, 1.0 - y]})


@validate_params({"seed": Seed()})
def fit_predict(spec, binary: bool, seed: int, X_train, y_train, X_predict) -> list[np.ndarray]:
    """Fit a learner on (X_train, y_train) and predict E[y | X] for each matrix in ``X_predict`` (an
    iterable: a generator builds each matrix only when it is predicted, so one is alive at a time).

    A target that is constant on the training rows gets that constant, with no fit. A classifier
    (a user's, or the logistic "linear" preset) is used through ``predict_proba``: on 0/1 targets
    directly, on targets in [0, 1] (nested means of a 0/1 outcome) as soft labels.
    """
    if np.ptp(y_train) == 0:
        return [np.full(len(X), float(y_train[0])) for X in X_predict]
    from sklearn.base import is_classifier

    learner = make_learner(spec, binary, seed, len(y_train))
    uses_proba = is_classifier(learner)
    if not uses_proba:
        learner.fit(X_train, y_train)
    elif np.isin(y_train, (0.0, 1.0)).all():
        learner.fit(X_train, y_train.astype(int))
    elif y_train.min() >= 0 and y_train.max() <= 1:
        _fit_soft_labels(learner, X_train, y_train)
    else:
        raise FairpathInputError(f"learner {learner!r} is a classifier; it cannot fit a target outside [0, 1]")
    if uses_proba:
        column = list(learner.classes_).index(1)
        return [learner.predict_proba(X)[:, column] for X in X_predict]
    predictions = [learner.predict(X) for X in X_predict]
    return [np.clip(p, 0.0, 1.0) for p in predictions] if binary else predictions
