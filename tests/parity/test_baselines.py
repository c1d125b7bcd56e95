"""The paper's baseline predictors: Ŷ^PP (out-of-fold scores) and Ŷ^SP (group thresholds)."""

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from fairpath.datasets import make_binary_sfm
from fairpath.parity import GroupThresholdPredictor, UnconstrainedPredictor, baseline_predictors


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(1500, seed=2)


def test_sp_baseline_equalises_selection_rates(sample):
    data, sfm = sample.data, sample.sfm
    baselines = baseline_predictors(data, sfm, selection_rate=0.3, learner="linear", seed=0)
    rates = baselines.groupby(data["x"])[["pp", "sp"]].mean()
    assert rates.loc[0, "sp"] == pytest.approx(0.3, abs=2 / (data["x"] == 0).sum())
    assert rates.loc[1, "sp"] == pytest.approx(0.3, abs=2 / (data["x"] == 1).sum())
    assert baselines["pp"].mean() == pytest.approx(0.3, abs=2 / len(data))
    # the unconstrained decision follows the groups' different risk, the SP one does not
    assert rates.loc[1, "pp"] - rates.loc[0, "pp"] > 0.1


def test_pp_scores_are_out_of_fold_and_seeded(sample):
    data, sfm = sample.data, sample.sfm
    model = UnconstrainedPredictor(learner="gbm", n_folds=5, random_state=3)
    scores = model.fit_predict(data, sfm)
    again = UnconstrainedPredictor(learner="gbm", n_folds=5, random_state=3).fit_predict(data, sfm)
    np.testing.assert_array_equal(scores, again)
    assert ((scores >= 0) & (scores <= 1)).all()
    # out-of-fold scores rank like the true E[Y | x, z, w] but do not memorise Y
    truth = sample.outcome_mean(data)
    assert np.corrcoef(scores, truth)[0, 1] > 0.8
    assert roc_auc_score(data["y"], scores) <= roc_auc_score(data["y"], truth) + 0.02


def test_decisions_with_a_rate_and_default_rate(sample):
    data, sfm = sample.data, sample.sfm
    model = UnconstrainedPredictor(learner="linear", selection_rate=0.25)
    decisions = model.fit_predict(data, sfm)
    np.testing.assert_array_equal(decisions, (model.scores_ > model.threshold_).astype(int))
    assert decisions.mean() == pytest.approx(0.25, abs=1 / len(data))
    default = baseline_predictors(data, sfm, learner="linear")
    assert default["pp"].mean() == pytest.approx(data["y"].mean(), abs=1 / len(data))


def test_group_thresholds_are_group_quantiles():
    scores = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    groups = np.array(["a"] * 4 + ["b"] * 4)
    model = GroupThresholdPredictor(0.5).fit(scores, groups)
    assert model.thresholds_ == {"a": pytest.approx(0.25), "b": pytest.approx(0.75)}
    np.testing.assert_array_equal(model.predict(scores, groups), [0, 0, 1, 1, 0, 0, 1, 1])
