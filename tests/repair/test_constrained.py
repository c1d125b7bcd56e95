"""Constrained learning: the effects of the model from intervened inputs, and the λ path."""

import numpy as np
import pytest

from fairpath.causal import decompose
from fairpath.datasets import make_binary_sfm
from fairpath.repair import ConstrainedLearner
from fairpath.repair._constrained import PATHWAYS, _Design, _Problem


@pytest.fixture(scope="module")
def synthetic():
    return make_binary_sfm(3000, seed=4)


def test_effects_add_up_to_tv_and_gradients_match_finite_differences(synthetic):
    data, sfm = synthetic.data, synthetic.sfm
    design = _Design(data, [*sfm.z, *sfm.w])
    group = (data[sfm.x] == sfm.x1).to_numpy()
    odds = np.random.default_rng(0).uniform(0.5, 2, len(data))
    problem = _Problem(design.covariate_matrix(data), group, odds, data[sfm.y].to_numpy(float), "logistic")
    beta = np.random.default_rng(1).normal(size=problem.observed.shape[1])
    effects, jac = problem.effects(beta)
    prediction = problem.predict(beta, problem.observed)
    tv = prediction[group].mean() - prediction[~group].mean()
    assert effects[0] - effects[1] - effects[2] == pytest.approx(tv, abs=1e-12)
    step = 1e-6
    for k in range(len(beta)):
        shifted = beta.copy()
        shifted[k] += step
        np.testing.assert_allclose((problem.effects(shifted)[0] - effects) / step, jac[:, k], atol=1e-4)


@pytest.mark.parametrize("bn", ["none", "SE", "IE", "IE,SE"])
def test_chosen_model_meets_its_targets(synthetic, bn):
    targets = {"DE": 0.12, "IE": -0.13, "SE": -0.12}
    learner = ConstrainedLearner(synthetic.sfm, bn=bn, targets=targets, random_state=0).fit(synthetic.data)
    kept = {p.strip() for p in bn.split(",") if p}
    for pathway in PATHWAYS:
        goal = targets[pathway] if pathway in kept else 0.0
        assert learner.effects_[pathway] == pytest.approx(goal, abs=0.02), pathway
    assert learner.coef_[1] == 0.0  # DE is outside every BN set here: X's coefficient is held at 0
    path = learner.path_
    assert list(path["lambda"]) == sorted(path["lambda"]) and path["lambda"].iloc[0] == 0 and np.isinf(path["lambda"].iloc[-1])
    # The chosen λ is the first within tolerance on held-out rows, else the least violating one.
    chosen = path.set_index("lambda").loc[learner.lambda_, "violation"]
    within = path[path["violation"] <= learner.tolerance]
    assert (learner.lambda_ == within["lambda"].iloc[0]) if len(within) else chosen == path["violation"].min()
    assert "ConstrainedPath(BN=" in learner.path_result().summary()
    assert len(learner.path_result().plot().axes) == 2


def test_infinite_lambda_meets_the_targets_exactly_and_de_in_bn_uses_x(synthetic):
    targets = {"DE": 0.12, "IE": -0.13, "SE": -0.12}
    learner = ConstrainedLearner(synthetic.sfm, bn="DE,IE", lambdas=(np.inf,), targets=targets, random_state=0).fit(synthetic.data)
    assert learner.coef_[1] != 0.0
    for pathway, goal in (("DE", 0.12), ("IE", -0.13), ("SE", 0.0)):
        assert learner.effects_[pathway] == pytest.approx(goal, abs=1e-6), pathway


def test_decomposition_of_the_constrained_predictor_agrees(synthetic):
    data, sfm = synthetic.data.copy(), synthetic.sfm
    learner = ConstrainedLearner(sfm, bn="SE", random_state=0).fit(data)
    truth_free = decompose(data, sfm, seed=0)
    assert learner.targets_["SE"] == pytest.approx(truth_free.estimate("ctfse").estimate)
    data["constrained"] = learner.predict_proba(data)[:, 1]
    result = decompose(data, sfm, predictors=["constrained"], seed=0)
    for pathway, measure in (("DE", "ctfde"), ("IE", "ctfie"), ("SE", "ctfse")):
        estimate = result.estimate(measure, outcome="constrained")
        assert abs(estimate.estimate - learner.effects_[pathway]) < max(3 * estimate.se, 0.01), pathway
