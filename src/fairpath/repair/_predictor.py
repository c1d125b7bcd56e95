"""Fair predictors: a learner trained on fair twins, with out-of-fold scores for honest evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

from fairpath._exceptions import FairpathInputError
from fairpath._validation import check_columns_present, check_cross_fit_sizes, check_frame, check_int, check_seed
from fairpath.adaptation import CausalGraph, FairAdapt, graph_from_sfm, resolving_for_bn
from fairpath.causal import check_sfm


def default_forest(binary: bool, seed: int):
    """A probability forest like ranger's defaults in the paper's code (sqrt(p) features, leaves of 10)."""
    forest = RandomForestClassifier if binary else RandomForestRegressor
    return forest(n_estimators=300, min_samples_leaf=10, max_features="sqrt", oob_score=True, n_jobs=-1, random_state=seed)


def encode_features(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Numbers for a learner: numeric columns as they are, other columns as integer category codes."""
    parts = []
    for column in columns:
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            parts.append(values.to_numpy(dtype=float))
        else:
            parts.append(pd.Categorical(values.astype(str), categories=sorted(values.astype(str).unique())).codes.astype(float))
    return np.column_stack(parts)


def out_of_fold_scores(learner, features: np.ndarray, target: np.ndarray, binary: bool, n_folds: int, seed: int) -> np.ndarray:
    """Scores of every row from a model that did not see it: out-of-bag for forests with ``oob_score``, else K-fold."""
    if getattr(learner, "oob_score", False):
        fitted = clone(learner).fit(features, target)
        scores = fitted.oob_decision_function_[:, 1] if binary else fitted.oob_prediction_
        if np.isnan(scores).any():  # a row in every bootstrap sample: too few trees
            raise FairpathInputError("some rows have no out-of-bag prediction; use a forest with more trees")
        return scores
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed) if binary else KFold(n_folds, shuffle=True, random_state=seed)
    method = "predict_proba" if binary and is_classifier(learner) else "predict"
    scores = cross_val_predict(clone(learner), features, target, cv=splitter, method=method)
    return scores[:, 1] if scores.ndim == 2 else scores


def check_fold_sizes(data: pd.DataFrame, sfm, n_folds: int) -> None:
    """Out-of-fold scores need ``n_folds`` rows in each group and, for a 0/1 outcome, in each class."""
    sizes = data[sfm.x].value_counts()
    if set(pd.unique(data[sfm.y])) <= {0, 1}:
        sizes = pd.concat([sizes, data[sfm.y].value_counts()])
    check_cross_fit_sizes(len(data), int(sizes.min()) if len(sizes) else 0, n_folds)


class FairPredictor:
    """Adapt the data for a BN set, then train a learner on the fair twins.

    Parameters
    ----------
    sfm : the Standard Fairness Model; ``graph`` defaults to ``graph_from_sfm(sfm)``.
    bn : BN set among "IE", "SE" (SE in BN keeps Z, IE in BN keeps W); or give ``resolving`` columns.
    reference : ``"x1"`` (default) or ``"x0"``: the group whose mechanisms every twin follows. The
        counterfactual measures (faircause's conventions) read the effects on the x1 arm
        (Y_{x1, W_{x0}}, Y_{x1}, Y | x1), so twins that follow x1's mechanisms transmit exactly the
        outcome's effect on the kept pathways; with ``"x0"`` (fairadapt's and the paper's choice: the
        majority as baseline) they transmit the x0-arm version, which differs where X interacts
        with Z or W.
    learner : None for the default forest, or any scikit-learn estimator.
    engine : quantile engine for the adaptation. n_folds : folds for out-of-fold scores of a
    learner that has no out-of-bag predictions.

    The learner sees the adapted covariates (Z and W twins), never the protected attribute.
    Fitted attributes: ``adapter_``, ``learner_``, ``features_``, ``oof_scores_`` (training rows).
    """

    def __init__(self, sfm, bn=(), resolving=None, graph: CausalGraph | None = None, reference: str = "x1", learner=None,
                 engine="forest", n_folds: int = 5, seed: int = 0):
        self.sfm = sfm
        self.bn = bn
        self.resolving = resolving
        self.reference = reference
        self.graph = graph
        self.learner = learner
        self.engine = engine
        self.n_folds = n_folds
        self.seed = seed

    def fit(self, train: pd.DataFrame) -> "FairPredictor":
        sfm = check_sfm(self.sfm)
        check_frame(train, "training data")
        check_int("n_folds", self.n_folds, minimum=2)
        check_seed(self.seed)
        if isinstance(self.learner, type) or (self.learner is not None and not hasattr(self.learner, "fit")):
            raise FairpathInputError(f"learner must be None or a scikit-learn estimator instance, got {self.learner!r}"
                                     + (f"; pass {self.learner.__name__}()" if isinstance(self.learner, type) else ""))
        check_columns_present(train, sfm.columns, "the training data")
        check_fold_sizes(train, sfm, self.n_folds)
        graph = self.graph if self.graph is not None else graph_from_sfm(sfm)
        resolving = resolving_for_bn(sfm, self.bn) if self.resolving is None else list(self.resolving)
        if self.reference not in ("x0", "x1"):
            raise FairpathInputError(f"reference must be 'x0' or 'x1', got {self.reference!r}")
        baseline = sfm.x1 if self.reference == "x1" else sfm.x0
        self.adapter_ = FairAdapt(graph, sfm.x, baseline, sfm.y, resolving=resolving, engine=self.engine, seed=self.seed).fit(train)
        self.binary_ = set(pd.unique(train[sfm.y])) <= {0, 1}
        self.features_ = [c for c in graph.nodes if c not in (sfm.x, sfm.y)]
        learner = self.learner if self.learner is not None else default_forest(self.binary_, self.seed)
        features = encode_features(self.adapter_.adapted_train_, self.features_)
        target = self.adapter_.adapted_train_[sfm.y].to_numpy()
        self.oof_scores_ = out_of_fold_scores(learner, features, target, self.binary_, self.n_folds, self.seed)
        self.learner_ = clone(learner).fit(features, target)
        return self

    def predict(self, data: pd.DataFrame) -> np.ndarray:
        """Scores of new rows: the learner applied to their fair twins."""
        if not hasattr(self, "learner_"):
            raise FairpathInputError("this FairPredictor is not fitted yet; call fit(train) first")
        twins = self.adapter_.transform(data)
        features = encode_features(twins, self.features_)
        return self.learner_.predict_proba(features)[:, 1] if self.binary_ and is_classifier(self.learner_) else self.learner_.predict(features)

    def twin_frame(self, column: str = "fair") -> pd.DataFrame:
        """The training rows in the twin world: observed X and Y, adapted Z and W, and the out-of-fold scores.

        This is where the predictor's causal effects are measured (as in the paper's code): the
        predictor is a function of the twins, and its pathways run through the twins' covariates.
        """
        frame = self.adapter_.adapted_train_.copy()
        frame[self.sfm.y] = self.adapter_.train_[self.sfm.y]
        frame[column] = self.oof_scores_
        return frame
