"""The baseline predictors of the paper's COMPAS experiment.

Ŷ^PP: an unconstrained learner's out-of-fold probabilities from X, Z and W (predictive parity holds
approximately for a calibrated score), thresholded at a quantile when a binary decision is needed.
Ŷ^SP: group-specific thresholds on a score so that both groups have the same selection rate
(statistical parity).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.model_selection import StratifiedKFold

from fairpath._sfm import check_binary_sfm
from fairpath._estimators import check_fitted
from fairpath._exceptions import FairpathInputError
from fairpath._seeds import child_seed
from fairpath._learners import fit_predict
from fairpath._validation import Frame, Integer, Optional, Probability, Seed, check_fit_group_sizes, validate_params
from fairpath.causal import prepare_data


def _upper_quantile_threshold(scores: np.ndarray, selection_rate: float) -> float:
    # ŷ = 1(score > threshold) selects (about) the top ``selection_rate`` share, as the paper's code does.
    return float(np.quantile(scores, 1 - selection_rate))


@validate_params({"n_folds": Integer(2), "selection_rate": Optional(Probability()), "random_state": Seed()})
class UnconstrainedPredictor(BaseEstimator):
    """Ŷ^PP: out-of-fold probabilities of an unconstrained learner of Y from X, Z and W.

    Parameters
    ----------
    learner : preset name ("gbm", "rf", "linear") or a scikit-learn estimator.
    n_folds : folds of the cross-fitting; every row is predicted by a model that did not see it.
    selection_rate : when given, also a binary decision ŷ = 1(score > the (1 − rate) quantile).
    random_state : seed of the folds and the learner.

    Attributes
    ----------
    scores_ : out-of-fold probabilities; threshold_ and decisions_ when ``selection_rate`` is set.
    """

    def __init__(self, learner="gbm", n_folds: int = 5, selection_rate: float | None = None, random_state: int = 0):
        self.learner = learner
        self.n_folds = n_folds
        self.selection_rate = selection_rate
        self.random_state = random_state

    def fit_predict(self, data: pd.DataFrame, sfm) -> np.ndarray:
        """Fit on ``data`` (roles from ``sfm``) and return the out-of-fold scores, or decisions with a rate."""
        scores = self.fit(data, sfm).scores_
        return scores if self.selection_rate is None else self.decide(self.selection_rate)

    def fit(self, data: pd.DataFrame, sfm) -> "UnconstrainedPredictor":
        """Out-of-fold scores of every row of ``data`` (roles from ``sfm``) in ``scores_``."""
        prepared = prepare_data(data, sfm, [sfm.y])
        check_fit_group_sizes({sfm.x0: int((prepared.x == 0).sum()), sfm.x1: int((prepared.x == 1).sum())}, sfm.x, self.n_folds)
        y = prepared.outcomes[sfm.y]
        binary = prepared.binary(sfm.y)
        if len(prepared.index) != len(data):
            raise FairpathInputError(
                f"{len(data) - len(prepared.index)} rows have {sfm.x} neither {sfm.x0!r} nor {sfm.x1!r}; "
                "the baseline predicts every row: filter the data first"
            )
        features = np.column_stack([prepared.x, prepared.z, prepared.w])
        strata = y if binary else prepared.x
        folds = StratifiedKFold(self.n_folds, shuffle=True, random_state=self.random_state)
        scores = np.empty(len(y))
        for k, (train, test) in enumerate(folds.split(features, strata)):
            (scores[test],) = fit_predict(self.learner, binary, child_seed(self.random_state, k), features[train], y[train], [features[test]])
        self.scores_ = scores
        self.outcome_mean_ = float(y.mean())
        return self

    @validate_params({"selection_rate": Probability()})
    def decide(self, selection_rate: float) -> np.ndarray:
        """Binary decisions 1(score > the (1 − rate) quantile of the fitted scores)."""
        check_fitted(self, "scores_")
        self.threshold_ = _upper_quantile_threshold(self.scores_, selection_rate)
        self.decisions_ = (self.scores_ > self.threshold_).astype(int)
        return self.decisions_


@validate_params({"selection_rate": Probability()})
class GroupThresholdPredictor(BaseEstimator):
    """Ŷ^SP: ŷ = 1(score > t_g) with a threshold per group g chosen so both select ``selection_rate``.

    Attributes
    ----------
    thresholds_ : dict group level -> threshold (the group's (1 − rate) score quantile).
    """

    def __init__(self, selection_rate: float):
        self.selection_rate = selection_rate

    def fit(self, scores, groups) -> "GroupThresholdPredictor":
        rate = self.selection_rate
        scores, groups = np.asarray(scores, dtype=float), np.asarray(groups)
        if len(scores) != len(groups):
            raise FairpathInputError(f"scores ({len(scores)}) and groups ({len(groups)}) differ in length")
        self.thresholds_ = {level: _upper_quantile_threshold(scores[groups == level], rate) for level in pd.unique(groups)}
        return self

    def predict(self, scores, groups) -> np.ndarray:
        """0/1 decisions: each score against its group's threshold."""
        check_fitted(self, "thresholds_")
        scores, groups = np.asarray(scores, dtype=float), np.asarray(groups)
        unknown = sorted({str(g) for g in pd.unique(groups)} - {str(g) for g in self.thresholds_})
        if unknown:
            raise FairpathInputError(f"group(s) {unknown} were not seen by fit(); their threshold is unknown")
        thresholds = np.array([self.thresholds_[g] for g in groups])
        return (scores > thresholds).astype(int)


@validate_params({"data": Frame(), "selection_rate": Optional(Probability()), "n_folds": Integer(2), "seed": Seed()})
def baseline_predictors(data: pd.DataFrame, sfm, selection_rate: float | None = None, *, learner="gbm", n_folds: int = 5, seed: int = 0) -> pd.DataFrame:
    """The paper's baselines as columns ``pp_score`` (probabilities), ``pp`` and ``sp`` (0/1 decisions).

    ``selection_rate`` defaults to the mean of the outcome (the decisions then match its prevalence).
    """
    check_binary_sfm(sfm, "baseline_predictors")
    model = UnconstrainedPredictor(learner=learner, n_folds=n_folds, random_state=seed)
    scores = model.fit_predict(data, sfm)
    rate = model.outcome_mean_ if selection_rate is None else selection_rate
    pp = model.decide(rate)
    groups = data[sfm.x].to_numpy()
    sp = GroupThresholdPredictor(rate).fit(scores, groups).predict(scores, groups)
    return pd.DataFrame({"pp_score": scores, "pp": pp, "sp": sp}, index=data.index)
