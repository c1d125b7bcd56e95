"""Nuisance learners: presets, any scikit-learn regressor or classifier."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from fairpath.causal import MEASURES, decompose
from fairpath._learners import fit_predict
from fairpath.datasets import make_binary_sfm


def test_a_classifier_fits_soft_labels_to_their_conditional_mean():
    # Targets in [0, 1] (the nested means of a 0/1 outcome) go to a classifier as weighted 0/1 rows,
    # whose log-loss is minimised by P(1 | X) = E[y | X]: a logistic model recovers the mean exactly.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 1))
    mean = expit(0.3 + 1.2 * X[:, 0])
    (predicted,) = fit_predict(LogisticRegression(C=1e6), False, 0, X, mean, [X])
    assert np.abs(predicted - mean).max() < 1e-3


def test_a_classifier_as_learner_estimates_every_measure():
    sample = make_binary_sfm(3000, seed=4)
    result = decompose(sample.data, sample.sfm, learner=LogisticRegression(), seed=1, n_folds=3)
    for measure in MEASURES:
        e = result.estimate(measure)
        assert abs(e.estimate - sample.truth[measure]) < 3 * e.se, measure


def test_stack_preset_weighs_a_quadratic_glm_against_the_gbm():
    from fairpath._learners import make_learner
    from fairpath.causal import StackedLearner
    from fairpath._presets import EarlyStoppingGBM

    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 3))
    y = 1 + X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + 0.3 * X[:, 0] ** 2 + rng.normal(scale=0.5, size=3000)
    stacked = make_learner("stack", False, 0).fit(X, y)
    assert isinstance(stacked, StackedLearner) and stacked.weight_ < 0.5  # the quadratic truth favours the GLM
    truth = 1 + X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + 0.3 * X[:, 0] ** 2
    gbm = EarlyStoppingGBM().fit(X, y)
    assert np.mean((stacked.predict(X) - truth) ** 2) < 0.5 * np.mean((gbm.predict(X) - truth) ** 2)
    assert isinstance(make_learner("stack", True, 0), StackedLearner)


@pytest.mark.parametrize("interacting", [None, [0, 2]])
@pytest.mark.parametrize("binary", [False, True])
def test_the_stacks_glm_predicts_from_its_coefficients_as_through_its_features(binary, interacting):
    from fairpath._presets import StackedLearner, _quadratic_glm

    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=800), rng.exponential(size=800), rng.integers(0, 2, 800), np.full(800, 1.5)])
    y = (rng.random(800) < 1 / (1 + np.exp(-X[:, 0] * X[:, 1]))).astype(float) if binary else X[:, 0] * X[:, 2] + rng.normal(size=800)
    glm = _quadratic_glm(binary, interacting).fit(X[:600], y[:600])
    new = np.vstack([X[600:], X[:20] * 3 - 1])  # rows beyond the training range: clipped alike
    through_features = glm.predict_proba(new)[:, 1] if binary else glm.predict(new)
    from_coefficients = StackedLearner(binary=binary)._glm_predict(glm, new)
    np.testing.assert_allclose(from_coefficients, through_features, rtol=0, atol=1e-12)


def test_quadratic_features_match_the_scikit_learn_pipeline_they_replace():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    from fairpath._presets import QuadraticFeatures

    rng = np.random.default_rng(2)
    train = np.column_stack([rng.normal(size=500), rng.exponential(size=500), np.full(500, 3.0), rng.integers(0, 2, 500)])
    new = np.vstack([train[:50], train[:5] * 4 - 2])  # rows beyond the training range are clipped to it
    low, high = train.min(axis=0), train.max(axis=0)
    reference = make_pipeline(StandardScaler(), PolynomialFeatures(2, include_bias=False), StandardScaler()).fit(train)
    fast = QuadraticFeatures().fit(train)
    np.testing.assert_allclose(fast.transform(train), reference.transform(train), atol=1e-10)
    np.testing.assert_allclose(fast.transform(new), reference.transform(np.clip(new, low, high)), atol=1e-10)
    np.testing.assert_array_equal(QuadraticFeatures().fit_transform(train), fast.transform(train))
