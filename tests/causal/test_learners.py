"""Nuisance learners: presets, any scikit-learn regressor or classifier."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from fairpath.causal import MEASURES, decompose
from fairpath.causal._learners import fit_predict
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
