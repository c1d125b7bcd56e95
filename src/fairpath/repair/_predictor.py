"""Fair predictors: a learner trained on fair twins, with out-of-fold scores for honest evaluation."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

from fairpath._encoding import CategoryEncoder
from fairpath._estimators import check_fitted
from fairpath._exceptions import FairpathInputError
from fairpath._validation import (
    Integer, Options, Seed, check_class_sizes, check_columns_arg, check_columns_present, check_fit_group_sizes, check_frame,
    check_outcome_varies, validate_params,
)
from fairpath._remedies import remedy
from fairpath._vocabulary import Engine, Reference, parse_bn
from fairpath.adaptation import CausalGraph, FairAdapt, graph_from_sfm, resolving_for_bn
from fairpath._sfm import check_sfm


# The data an audit of the fair predictor runs on: the outcome's effects there differ from the observed data's.
TWIN_LABEL = "on the fair twins"


def default_forest(binary: bool, seed: int):
    """A probability forest like ranger's defaults in the paper's code (sqrt(p) features, leaves of 10)."""
    forest = RandomForestClassifier if binary else RandomForestRegressor
    return forest(n_estimators=300, min_samples_leaf=10, max_features="sqrt", oob_score=True, n_jobs=-1, random_state=seed)


def feature_encoder(columns: list[str]) -> CategoryEncoder:
    """The forests' encoding: numbers as they are, every categorical column as integer codes."""
    return CategoryEncoder(columns, max_one_hot_levels=0, what="the predictor")


def encode_features(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """Codes of ``columns`` with the categories of ``frame`` itself (for data fitted and scored at once)."""
    return feature_encoder(columns).fit_transform(frame)


def _oob_scores(fitted, binary: bool) -> np.ndarray:
    scores = fitted.oob_decision_function_[:, 1] if binary else fitted.oob_prediction_
    if np.isnan(scores).any():  # a row in every bootstrap sample: too few trees
        raise FairpathInputError("some rows have no out-of-bag prediction; use a forest with more trees")
    return scores


def fit_out_of_fold(learner, features: np.ndarray, target: np.ndarray, binary: bool, n_folds: int, seed: int):
    """The learner fitted on all rows and every row's out-of-fold score (see ``out_of_fold_scores``).

    A forest with ``oob_score`` is fitted once: its out-of-bag predictions are the scores.
    """
    if getattr(learner, "oob_score", False):
        fitted = clone(learner).fit(features, target)
        return fitted, _oob_scores(fitted, binary)
    return clone(learner).fit(features, target), out_of_fold_scores(learner, features, target, binary, n_folds, seed)


def out_of_fold_scores(learner, features: np.ndarray, target: np.ndarray, binary: bool, n_folds: int, seed: int) -> np.ndarray:
    """Scores of every row from a model that did not see it: out-of-bag for forests with ``oob_score``, else K-fold."""
    if getattr(learner, "oob_score", False):
        return _oob_scores(clone(learner).fit(features, target), binary)
    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed) if binary else KFold(n_folds, shuffle=True, random_state=seed)
    method = "predict_proba" if binary and is_classifier(learner) else "predict"
    scores = cross_val_predict(clone(learner), features, target, cv=splitter, method=method)
    return scores[:, 1] if scores.ndim == 2 else scores


def check_fold_sizes(data: pd.DataFrame, sfm, n_folds: int) -> None:
    """A varying outcome, decompose's floor per fold and group (every level of X when ``sfm.x1`` is None)
    and, for a 0/1 outcome, ``n_folds`` rows in each class."""
    check_outcome_varies(data[sfm.y], sfm.y)
    levels = (sfm.x0, sfm.x1) if sfm.binary else pd.unique(data[sfm.x])
    check_fit_group_sizes({level: int((data[sfm.x] == level).sum()) for level in levels}, sfm.x, n_folds)
    if set(pd.unique(data[sfm.y])) <= {0, 1}:
        check_class_sizes({level: int((data[sfm.y] == level).sum()) for level in (0, 1)}, sfm.y, n_folds)


def check_levels(data: pd.DataFrame, sfm) -> None:
    """The reference level x0 occurs; a binary SFM's data hold its two levels only (the twins of a third level
    would follow the reference silently)."""
    levels = pd.unique(data[sfm.x]).tolist()
    if not sfm.binary and sfm.x0 not in levels:
        raise FairpathInputError(f"protected attribute {sfm.x!r} has no rows with the reference level {sfm.x0!r}; its levels are {sorted(levels, key=str)[:20]}")
    others = sorted({str(level) for level in levels} - {str(sfm.x0), str(sfm.x1)})
    if sfm.binary and others:
        keep = remedy("keep only the rows of these two levels", "--drop-levels",
                      f"drop the other levels' rows (--drop-levels \"{','.join(others)}\")") or "keep only the rows of these two levels"
        every = remedy(f"give x1=None to repair every level against {sfm.x0!r}")
        raise FairpathInputError(
            f"{sfm.x!r} has levels {others[:20]} besides x0={sfm.x0!r} and x1={sfm.x1!r}; "
            + ", or ".join(way for way in (keep, every) if way)
        )


@validate_params({"reference": Options(("x0", "x1")), "n_folds": Integer(2), "random_state": Seed()})
class FairPredictor(BaseEstimator):
    """Adapt the data for a BN set, then train a learner on the fair twins.

    Parameters
    ----------
    sfm : the Standard Fairness Model; ``graph`` defaults to ``graph_from_sfm(sfm)``. With ``x1=None``
        (every level of X against ``x0``) the twins of every level follow x0's mechanisms.
    bn : BN set among "IE", "SE" (SE in BN keeps Z, IE in BN keeps W); or give ``resolving`` columns
        instead, which keep the BN set they realise (a non-empty ``bn`` with them is refused, not ignored).
    reference : ``"x1"`` (default) or ``"x0"``: the group whose mechanisms every twin follows. The
        counterfactual measures (faircause's conventions) read the effects on the x1 arm
        (Y_{x1, W_{x0}}, Y_{x1}, Y | x1), so twins that follow x1's mechanisms transmit exactly the
        outcome's effect on the kept pathways; with ``"x0"`` (fairadapt's and the paper's choice: the
        majority as baseline) they transmit the x0-arm version, which differs where X interacts
        with Z or W. With ``x1=None`` there is no single x1 whose mechanisms every level could share:
        pass ``reference="x0"`` (the default ``"x1"`` is refused there); every level is mapped to x0's
        world, and a kept SE is each contrast's x0-arm spurious effect E[Y_{x0} | x0] − E[Y_{x0} | x_k].
    learner : None for the default forest, or any scikit-learn estimator.
    engine : quantile engine for the adaptation. n_folds : folds for out-of-fold scores of a
    learner that has no out-of-bag predictions.
    random_state : int seeding the adaptation, the default forest and the folds.

    The learner sees the adapted covariates (Z and W twins), never the protected attribute.

    New rows: ``predict`` scores a new row at its fair twin, made by the fitted adaptation exactly as a
    training row's twin was (every rank out of bag, calibrated against the training rows' ranks), so for
    new rows drawn from the training population the twins, and hence the predictor's pathways, have the
    distribution they have on the training rows: the effects it removed stay removed, up to estimation
    error. :meth:`audit` with new rows (holding the outcome) measures that; ``repair`` does it on held-out rows.
    ``predict`` gives labels (values for a continuous outcome), ``predict_proba`` the probabilities
    of a binary outcome. A category of a covariate that ``fit`` never saw takes a training category, with a
    warning (:class:`~fairpath.adaptation.FairAdapt`'s ``transform``); a level of X it never saw is refused.
    Fitted attributes: ``adapter_``, ``learner_``, ``features_``, ``encoder_``, ``oof_scores_``
    (training rows), ``classes_`` (binary outcome).
    """

    def __init__(self, sfm, *, bn=(), resolving=None, graph: CausalGraph | None = None, reference: Reference = "x1", learner=None,
                 engine: Engine | object = "forest", n_folds: int = 5, random_state: int = 0):
        self.sfm = sfm
        self.bn = bn
        self.resolving = resolving
        self.reference = reference
        self.graph = graph
        self.learner = learner
        self.engine = engine
        self.n_folds = n_folds
        self.random_state = random_state

    def fit(self, train: pd.DataFrame, y=None) -> "FairPredictor":
        """Adapt ``train`` (every column of the SFM) and fit the learner; ``y`` is ignored (the SFM names it)."""
        seed = self.random_state
        sfm = check_sfm(self.sfm)
        self._check_reference(sfm)
        check_frame(train, "training data")
        if isinstance(self.learner, type) or (self.learner is not None and not hasattr(self.learner, "fit")):
            raise FairpathInputError(f"learner must be None or a scikit-learn estimator instance, got {self.learner!r}"
                                     + (f"; pass {self.learner.__name__}()" if isinstance(self.learner, type) else ""))
        check_columns_present(train, sfm.columns, "the training data")
        check_levels(train, sfm)
        check_fold_sizes(train, sfm, self.n_folds)
        graph = self.graph if self.graph is not None else graph_from_sfm(sfm)
        resolving = resolving_for_bn(sfm, self.bn) if self.resolving is None else self._checked_resolving()
        baseline = sfm.x1 if self.reference == "x1" else sfm.x0
        self.adapter_ = FairAdapt(graph, x=sfm.x, baseline=baseline, y=sfm.y, resolving=resolving, engine=self.engine, random_state=seed).fit(train)
        self.binary_ = set(pd.unique(train[sfm.y])) <= {0, 1}
        if self.binary_:
            self.classes_ = np.array([0, 1])
        self.features_ = [c for c in graph.nodes if c not in (sfm.x, sfm.y)]
        learner = self.learner if self.learner is not None else default_forest(self.binary_, seed)
        # The categories of the data and of their twins: the twins of new rows hold training categories (the adaptation
        # gives an unseen one its column's fallback), and a category of comparison rows only may be in no twin.
        twins_and_data = pd.concat([self.adapter_.adapted_train_[self.features_], train[self.features_]])
        self.encoder_ = feature_encoder(self.features_).fit(twins_and_data)
        features = self.encoder_.transform(self.adapter_.adapted_train_)
        target = self.adapter_.adapted_train_[sfm.y].to_numpy()
        self.learner_, self.oof_scores_ = fit_out_of_fold(learner, features, target, self.binary_, self.n_folds, seed)
        return self

    def _check_reference(self, sfm) -> None:
        if self.reference == "x1" and not sfm.binary:
            raise FairpathInputError(
                f"reference='x1' (the default) needs a comparison level x1; this SFM has x1=None (every level of {sfm.x!r} "
                f"against {sfm.x0!r}), whose twins all follow the mechanisms of {sfm.x0!r}: pass reference='x0', or give x1"
            )

    def _twin_features(self, data: pd.DataFrame) -> np.ndarray:
        check_fitted(self, "learner_")
        return self.encoder_.transform(self.adapter_.transform(data))

    def predict(self, data: pd.DataFrame) -> np.ndarray:
        """The learner's predictions at the fair twins of new rows (0/1 labels for a classifier)."""
        features = self._twin_features(data)
        return self.learner_.predict(features)

    def predict_proba(self, data: pd.DataFrame) -> np.ndarray:
        """Probabilities of the classes 0 and 1 (columns) at the fair twins of new rows."""
        features = self._twin_features(data)
        if not (self.binary_ and is_classifier(self.learner_)):
            raise FairpathInputError(
                f"predict_proba needs a binary 0/1 outcome and a classifier; here the outcome {self.sfm.y!r} is "
                f"{'binary' if self.binary_ else 'continuous'} and the learner a {type(self.learner_).__name__}: use predict"
            )
        return self.learner_.predict_proba(features)

    def scores(self, data: pd.DataFrame) -> np.ndarray:
        """Probabilities of a binary outcome (a classifier's), predicted values otherwise, at the fair twins of ``data``."""
        return self._scores_of_features(self._twin_features(data))

    def _scores_of_features(self, features: np.ndarray) -> np.ndarray:
        if self.binary_ and is_classifier(self.learner_):
            return self.learner_.predict_proba(features)[:, 1]
        return self.learner_.predict(features)

    def twin_frame(self, data: pd.DataFrame | None = None, column: str = "fair") -> pd.DataFrame:
        """Rows in the twin world: observed X and Y, adapted Z and W, and the predictor's scores.

        ``data=None``: the training rows with their out-of-fold scores; otherwise the new rows ``data``,
        transformed as the training rows were, with the scores of the predictor (the outcome as observed, if given).
        This is where the predictor's causal effects are measured (as in the paper's code): the
        predictor is a function of the twins, and its pathways run through the twins' covariates.
        """
        check_fitted(self, "learner_")
        if data is None:
            frame = self.adapter_.adapted_train_.copy()
            frame[self.sfm.y] = self.adapter_.train_[self.sfm.y]
            return frame.assign(**{column: self.oof_scores_})
        twins = self.adapter_.transform(data)  # once: the scores are the learner's at these twins
        return twins.assign(**{column: self._scores_of_features(self.encoder_.transform(twins))})

    def _checked_resolving(self) -> list[str]:
        """The resolving columns; given with a non-empty BN set they are refused, since either alone says what adaptation keeps."""
        if parse_bn(self.bn):
            raise FairpathInputError(
                f"the BN set {self.bn!r} and the resolving columns {self.resolving!r} are both given; give one: resolving columns "
                "keep the BN set they realise (Z resolving keeps SE, W resolving keeps IE), so the BN set would be ignored "
                "(on the command line: --bn or --resolving, not both)")
        return check_columns_arg("resolving", self.resolving)

    def audit(self, data: pd.DataFrame | None = None, *, column: str = "fair_predictor", **options):
        """Audit the predictor on fair twins under the BN set it serves: those of the training rows with their
        out-of-fold scores (``data=None``), or those of new rows ``data`` (which must hold the outcome).

        As in the paper's code, Ŷ^FP is measured in the twin world, where its pathways run through
        the twins' covariates (:meth:`twin_frame`); new rows' twins are made as the training rows' are
        (see :class:`~fairpath.adaptation.FairAdapt`), so the two audits estimate the same effects and
        a held-out audit shows whether fairness carries over to rows the predictor never saw. With an
        SFM of ``x1=None`` the audit covers every contrast against x0. With ``reference="x1"`` the twins follow x1's
        mechanisms, so Y's spurious effect measured there estimates its spurious effect in the data: the
        quantity Ŷ^FP must reproduce when SE is in the BN set. The outcome is labelled ``y (on the fair
        twins)``: its effects here differ from those of an audit of the observed data. ``options`` go to
        :func:`fairpath.parity.audit`.
        """
        from fairpath.parity import audit

        if not hasattr(self, "learner_"):
            raise FairpathInputError("this FairPredictor is not fitted yet; call fit(train) first")
        if self.resolving is not None:
            raise FairpathInputError("audit() needs the BN set: build the FairPredictor with bn=... instead of resolving=...")
        options.setdefault("data_label", TWIN_LABEL)
        if data is not None:
            check_frame(data, "data to audit")
            check_columns_present(data, [self.sfm.y], "the data to audit (the observed outcome)")
        return audit(self.twin_frame(data, column), self.sfm, [column], list(parse_bn(self.bn)), **options)
