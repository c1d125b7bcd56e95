"""fairpath's estimators follow scikit-learn's protocol: parameters stored unchanged, ``get_params`` /
``clone`` round-trips, ``random_state`` (``seed`` deprecated), ``check_is_fitted``, ``predict`` labels and
``predict_proba`` probabilities, categories learned at ``fit``.

Of ``sklearn.utils.estimator_checks`` only the checks that construct, clone, inspect or call an
unfitted estimator apply (``CONSTRUCTION_CHECKS``). Every check that fits (``check_fit2d_*``,
``check_estimators_dtypes``, ``check_fit_idempotent``, ``check_classifiers_train``,
``check_transformer_general``, ``check_n_features_in``, ``check_estimators_pickle`` on fitted
estimators, ...) generates bare numpy arrays, while these estimators fit a DataFrame whose columns
carry causal roles (X, Z, W, Y named by an SFM or a graph): there is no role to give those arrays.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils import estimator_checks

from fairpath import FairpathInputError
from fairpath.adaptation import FairAdapt, graph_from_sfm
from fairpath.causal import SFM
from fairpath.datasets import make_binary_sfm
from fairpath.parity import GroupThresholdPredictor, UnconstrainedPredictor
from fairpath.repair import ConstrainedLearner, FairPredictor
from fairpath.repair._predictor import encode_features

TARGETS = {"DE": 0.0, "IE": 0.05, "SE": 0.04}
CONSTRUCTION_CHECKS = (
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_parameters_default_constructible",
    "check_mixin_order",
    "check_estimators_unfitted",
)


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(800, seed=4)


def _estimators(sfm):
    """One instance of each estimator with non-default parameters (so a round-trip that dropped one shows)."""
    return [
        FairAdapt(graph_from_sfm(sfm), x=sfm.x, baseline=sfm.x1, y=sfm.y, resolving=("z1",), engine="linear", random_state=3),
        FairPredictor(sfm, bn=("SE",), engine="linear", learner=LogisticRegression(C=0.5), n_folds=3, random_state=3),
        ConstrainedLearner(sfm, bn="SE", lambdas=(0.0, np.inf), targets=TARGETS, random_state=3),
        UnconstrainedPredictor(learner="linear", n_folds=3, selection_rate=0.4, random_state=3),
        GroupThresholdPredictor(0.3),
    ]


def _comparable(params: dict) -> dict:
    return {k: (v.to_dict() if hasattr(v, "to_dict") else v.get_params() if hasattr(v, "get_params") else v) for k, v in params.items()}


@pytest.mark.parametrize("index", range(5))
def test_clone_and_get_params_round_trip(sample, index):
    estimator = _estimators(sample.sfm)[index]
    copy = clone(estimator)
    assert type(copy) is type(estimator) and copy is not estimator
    assert _comparable(copy.get_params()) == _comparable(estimator.get_params())
    rebuilt = type(estimator)(**estimator.get_params(deep=False))
    assert _comparable(rebuilt.get_params()) == _comparable(estimator.get_params())


# GroupThresholdPredictor.predict(scores, groups) takes two arrays, not sklearn's one X; UnconstrainedPredictor
# has no predict (it returns out-of-fold scores from fit_predict(data, sfm)).
_UNFITTED_CALLS = {0, 1, 2}


@pytest.mark.parametrize(("index", "check"), [(i, c) for i in range(5) for c in CONSTRUCTION_CHECKS
                                              if c != "check_estimators_unfitted" or i in _UNFITTED_CALLS])
def test_applicable_estimator_checks(sample, index, check):
    estimator = _estimators(sample.sfm)[index]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        getattr(estimator_checks, check)(type(estimator).__name__, estimator)


def test_fair_adapt_stores_its_arguments_unchanged(sample):
    resolving = ("z1",)
    adapter = FairAdapt(graph_from_sfm(sample.sfm), x="x", baseline=1, y="y", resolving=resolving)
    assert adapter.resolving is resolving and adapter.get_params()["resolving"] is resolving
    adapter.fit(sample.data)
    assert adapter.resolving is resolving and adapter.resolving_[0] == "z1"


def test_a_clone_refits_to_the_same_result_and_starts_unfitted(sample):
    data, sfm = sample.data, sample.sfm
    predictor = FairPredictor(sfm, bn=("SE",), engine="linear", learner=LogisticRegression(), random_state=5).fit(data)
    copy = clone(predictor)
    with pytest.raises(NotFittedError, match="this FairPredictor is not fitted yet; call fit first"):
        copy.predict(data)
    np.testing.assert_array_equal(copy.fit(data).predict_proba(data), predictor.predict_proba(data))


def test_not_fitted_is_both_a_fairpath_input_error_and_sklearns(sample):
    for estimator, method in ((FairAdapt(graph_from_sfm(sample.sfm), x="x", baseline=1, y="y"), "transform"),
                              (ConstrainedLearner(sample.sfm), "predict_proba"), (GroupThresholdPredictor(0.3), None)):
        call = (lambda: estimator.predict([0.5], [0])) if method is None else (lambda: getattr(estimator, method)(sample.data))
        with pytest.raises(FairpathInputError, match="is not fitted yet") as caught:
            call()
        assert isinstance(caught.value, NotFittedError)


def test_predict_gives_labels_and_predict_proba_probabilities(sample):
    data, sfm = sample.data, sample.sfm
    for model in (FairPredictor(sfm, bn=("SE",), engine="linear", learner=LogisticRegression(), random_state=0),
                  ConstrainedLearner(sfm, bn="SE", lambdas=(0.0,), targets=TARGETS, random_state=0)):
        model.fit(data)
        labels, proba = model.predict(data), model.predict_proba(data)
        assert set(np.unique(labels)) <= {0, 1} and proba.shape == (len(data), 2)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(labels, (proba[:, 1] > 0.5).astype(int))
        np.testing.assert_array_equal(model.classes_, [0, 1])
    continuous = data.assign(y=data["w1"] + data["z1"])
    learner = ConstrainedLearner(sfm, bn="SE", lambdas=(0.0,), targets=TARGETS).fit(continuous)
    assert len(np.unique(learner.predict(continuous))) > 2
    with pytest.raises(FairpathInputError, match="predict_proba needs a binary 0/1 outcome; 'y' is continuous"):
        learner.predict_proba(continuous)


@pytest.fixture(scope="module")
def categorical(sample):
    """The binary SFM with the confounder z1 cut into three named categories."""
    data = sample.data.assign(zc=pd.cut(sample.data["z1"], [-np.inf, -0.5, 0.5, np.inf], labels=["low", "mid", "high"]).astype(str))
    sfm = SFM(x="x", x0=0, x1=1, z=["zc", "z2"], w=["w1", "w2"], y="y")
    return data[list(sfm.columns)], sfm


def test_a_test_set_lacking_a_category_is_encoded_with_the_training_categories(categorical):
    data, sfm = categorical
    predictor = FairPredictor(sfm, bn=("SE",), engine="linear", learner=LogisticRegression(), random_state=0).fit(data)
    assert predictor.encoder_.categories_["zc"] == ["high", "low", "mid"]
    test = data[data["zc"] != "low"].head(200)
    twins = predictor.adapter_.transform(test)
    codes = {"high": 0.0, "low": 1.0, "mid": 2.0}  # the full-category encoding, by hand
    full = twins[predictor.features_].assign(zc=twins["zc"].map(codes)).to_numpy(dtype=float)
    expected = predictor.learner_.predict_proba(full)
    np.testing.assert_allclose(predictor.predict_proba(test), expected, rtol=1e-12)
    # Codes recomputed on the test rows alone (the old behaviour) shift "mid" from 2 to 1 and change the scores.
    recomputed = predictor.learner_.predict_proba(encode_features(twins, predictor.features_))
    assert np.abs(recomputed - expected).max() > 1e-3


def test_an_unseen_category_of_a_resolving_column_is_scored_as_its_fallback_and_the_encoder_still_refuses_it(categorical):
    data, sfm = categorical
    predictor = FairPredictor(sfm, bn=("SE",), engine="linear", learner=LogisticRegression(), random_state=0).fit(data)
    assert "zc" in predictor.adapter_.resolving_  # BN = {SE} keeps Z: zc reaches the learner as it is
    fallback = predictor.adapter_.encodings_["zc"].fallback
    with pytest.warns(UserWarning, match=rf"column 'zc' has 1 category unseen in training, \['huge'\], in 5 row\(s\): they are treated as '{fallback}'"):
        scores = predictor.predict_proba(data.head(5).assign(zc="huge"))
    np.testing.assert_array_equal(scores, predictor.predict_proba(data.head(5).assign(zc=fallback)))
    with pytest.raises(FairpathInputError, match=r"column 'zc' has categories \['huge'\] that the predictor never saw in training"):
        predictor.encoder_.transform(data.head(5).assign(zc="huge"))
