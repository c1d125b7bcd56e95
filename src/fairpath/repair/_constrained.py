"""Constrained learning of a fair predictor (the paper's Appendix E).

The predictor f(x, z, w) (logistic for a binary outcome, linear otherwise) minimises

    loss(f) + λ · Σ_pathways |Ctf-CE(f) − target|,

where the target is the outcome's own effect Ctf-CE(y) for pathways in the BN set and 0 otherwise.
The effects of f are computed from its predictions under intervened inputs: for the rows of x0,
f(x0, z, w) and f(x1, z, w) give E[ŷ | x0] and E[ŷ_{x1, W_{x0}} | x0]; the rows of x1 reweighted
by the fitted propensity odds p(x0 | z) / p(x1 | z) give E[ŷ_{x1} | x0]; the rows of x1 as they
are give E[ŷ | x1]. Hence

    DE = E[ŷ_{x1,W_{x0}}|x0] − E[ŷ|x0],  IE = E[ŷ_{x1,W_{x0}}|x0] − E[ŷ_{x1}|x0],  SE = E[ŷ_{x1}|x0] − E[ŷ|x1],

with tv = DE − IE − SE exactly. |·| is smoothed as sqrt(d² + s²) so that L-BFGS applies; λ = ∞
is the limit, solved exactly as equality constraints (SLSQP). When DE is outside the BN set the
coefficient of X is held at 0, which makes the direct effect exactly 0 (a logistic or linear model
has a direct effect only through X's coefficient).
λ runs along a path, warm-started; λ is chosen on held-out rows as the smallest λ whose held-out
violation Σ|Ctf-CE(f) − target| is at most ``tolerance`` (else the λ with the least violation),
and the model is then refitted on all rows at that λ.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from fairpath._encoding import CategoryEncoder
from fairpath._estimators import check_fitted
from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._validation import (
    NonNegative, Probability, Real, Seed, check_columns_present, check_finite, check_fit_group_sizes, check_float, check_frame,
    check_nonnegative, check_outcome_varies, validate_params,
)
from fairpath._vocabulary import MEASURE_OF_PATHWAY, PATHWAYS, parse_bn
from fairpath._sfm import check_binary_sfm
from fairpath.causal import decompose

DEFAULT_LAMBDAS = (0.0, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, np.inf)


class _Design:
    """Standardised covariates with one-hot categories; ``with_x`` prepends [1, x] at either level of X."""

    def __init__(self, data: pd.DataFrame, covariates: list[str]):
        # Categories are fixed at fit time so that any subset of rows gets the same columns.
        self.encoder = CategoryEncoder(covariates, max_one_hot_levels=math.inf, what="the constrained learner").fit(data)
        raw = self.encoder.transform(data)
        self.mean = raw.mean(axis=0)
        self.scale = np.where(raw.std(axis=0) > 0, raw.std(axis=0), 1.0)

    def covariate_matrix(self, data: pd.DataFrame) -> np.ndarray:
        return (self.encoder.transform(data) - self.mean) / self.scale

    @staticmethod
    def with_x(covariates: np.ndarray, x_value: float | np.ndarray) -> np.ndarray:
        x = np.broadcast_to(np.asarray(x_value, dtype=float), (len(covariates),))
        return np.column_stack([np.ones(len(covariates)), x, covariates])


class _Problem:
    """Rows of one fit: designs at x0 and x1, group masks, propensity odds weights, outcome."""

    def __init__(self, covariates: np.ndarray, group: np.ndarray, odds: np.ndarray, y: np.ndarray, link: str):
        self.group, self.y, self.link = group, y, link
        self.at_x0 = _Design.with_x(covariates, 0.0)
        self.at_x1 = _Design.with_x(covariates, 1.0)
        self.observed = np.where(group[:, None], self.at_x1, self.at_x0)
        n0, n1 = (~group).sum(), group.sum()
        # Linear functionals of the predictions give the four means behind DE, IE and SE.
        self.mean_x0 = np.where(~group, 1.0 / n0, 0.0)
        self.mean_x1 = np.where(group, 1.0 / n1, 0.0)
        weights = np.where(group, odds, 0.0)
        self.reweighted_x1 = weights / weights.sum()

    def predict(self, beta: np.ndarray, design: np.ndarray) -> np.ndarray:
        eta = design @ beta
        return expit(eta) if self.link == "logistic" else eta

    def slope(self, prediction: np.ndarray) -> np.ndarray:
        return prediction * (1 - prediction) if self.link == "logistic" else np.ones_like(prediction)

    def effects(self, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """DE, IE, SE of the predictor and their gradients (3 x p)."""
        f0, f1 = self.predict(beta, self.at_x0), self.predict(beta, self.at_x1)
        g0 = self.slope(f0)[:, None] * self.at_x0
        g1 = self.slope(f1)[:, None] * self.at_x1
        e00, de00 = self.mean_x0 @ f0, self.mean_x0 @ g0  # E[ŷ | x0]
        e10, de10 = self.mean_x0 @ f1, self.mean_x0 @ g1  # E[ŷ_{x1, W_x0} | x0]
        e1w, de1w = self.reweighted_x1 @ f1, self.reweighted_x1 @ g1  # E[ŷ_{x1} | x0]
        e11, de11 = self.mean_x1 @ f1, self.mean_x1 @ g1  # E[ŷ | x1]
        values = np.array([e10 - e00, e10 - e1w, e1w - e11])
        grads = np.vstack([de10 - de00, de10 - de1w, de1w - de11])
        return values, grads

    def loss(self, beta: np.ndarray) -> tuple[float, np.ndarray]:
        f = self.predict(beta, self.observed)
        n = len(f)
        if self.link == "logistic":
            eps = 1e-12
            value = -np.mean(self.y * np.log(f + eps) + (1 - self.y) * np.log(1 - f + eps))
            grad = self.observed.T @ (f - self.y) / n
        else:
            value = 0.5 * np.mean((f - self.y) ** 2)
            grad = self.observed.T @ (f - self.y) / n
        return value, grad


def check_lambda_path(lambdas) -> list[float]:
    """The λ path: one or more penalties ≥ 0 (``inf``: equality constraints), increasing, because λ is
    chosen as the first one on the path whose held-out violation is within the tolerance."""
    if isinstance(lambdas, (str, bytes)) or not isinstance(lambdas, Iterable):
        raise FairpathInputError(f"lambdas must be a list of penalties ≥ 0 (the λ path), got {lambdas!r}; e.g. [0, 1, 10]")
    path = [check_nonnegative("each λ in lambdas", lam) for lam in lambdas]
    if not path:
        raise FairpathInputError("lambdas is empty; give at least one penalty ≥ 0, e.g. [0, 1, 10]")
    if any(later <= earlier for earlier, later in zip(path, path[1:])):
        raise FairpathInputError(f"lambdas must increase (λ is the first on the path within the tolerance), got {path}; sort them")
    return path


@validate_params({"tolerance": NonNegative(), "holdout": Probability(), "l2": NonNegative(), "smooth": Real(0.0, None, open_low=True),
                  "random_state": Seed()})
class ConstrainedLearner(BaseEstimator):
    """Predictor trained with a penalty on the causal pathways outside (and inside) the BN set.

    Parameters
    ----------
    sfm : the Standard Fairness Model (x, x0, x1, z, w, y).
    bn : BN set, e.g. ``"SE"`` or ``["IE", "SE"]``; pathways in it keep the outcome's effect.
    lambdas : the λ path (increasing; ``np.inf`` for exact equality constraints).
    tolerance : largest accepted held-out violation Σ|Ctf-CE(ŷ) − target| when choosing λ.
    holdout : share of rows held out to choose λ.
    l2 : ridge penalty on the coefficients (not the intercept); smooth : the s of sqrt(d² + s²).
    targets : optional dict pathway -> Ctf-CE(y); computed with ``fairpath.causal.decompose`` when None.
    random_state : int seeding the held-out split and the decomposition.

    ``predict`` gives 0/1 labels for a binary outcome (values for a continuous one), ``predict_proba``
    the probabilities. Categories of the covariates are those seen by ``fit``; others are refused.

    Fitted attributes: ``targets_``, ``path_`` (DataFrame per λ: held-out effects, violation, loss,
    AUC or R²), ``lambda_``, ``coef_``, ``effects_`` (in-sample DE, IE, SE at ``lambda_``).
    """

    def __init__(self, sfm, *, bn=(), lambdas=DEFAULT_LAMBDAS, tolerance: float = 0.01, holdout: float = 0.3,
                 l2: float = 1e-3, smooth: float = 1e-4, targets: dict | None = None, random_state: int = 0):
        self.sfm = sfm
        self.bn = bn
        self.lambdas = lambdas
        self.tolerance = tolerance
        self.holdout = holdout
        self.l2 = l2
        self.smooth = smooth
        self.targets = targets
        self.random_state = random_state

    # -- set-up --------------------------------------------------------------------------------
    def _outcome_targets(self, data: pd.DataFrame) -> dict[str, float]:
        pathways = parse_bn(self.bn)
        if self.targets is not None:
            if not isinstance(self.targets, Mapping):
                raise FairpathInputError(f"targets must be a mapping pathway -> Ctf-CE(y), e.g. {{'SE': 0.02}}, got {self.targets!r}")
            effects = dict(self.targets)
            missing = [p for p in pathways if p not in effects]
            if missing:
                raise FairpathInputError(f"targets lack the BN pathway(s) {missing}; give Ctf-CE(y) of each pathway in the BN set")
        else:
            result = decompose(data, self.sfm, seed=self.random_state_)
            effects = {p: result.estimate(MEASURE_OF_PATHWAY[p]).estimate for p in pathways}
        return {p: (check_float(f"the target of {p}", effects[p]) if p in pathways else 0.0) for p in PATHWAYS}

    def _problem(self, data: pd.DataFrame, rows: np.ndarray | slice = slice(None)) -> _Problem:
        subset = data.iloc[rows] if not isinstance(rows, slice) else data
        group = (subset[self.sfm.x] == self.sfm.x1).to_numpy()
        covariates = self.design_.covariate_matrix(subset)
        return _Problem(covariates, group, self._odds(subset), subset[self.sfm.y].to_numpy(dtype=float), self.link_)

    def _odds(self, data: pd.DataFrame) -> np.ndarray:
        if self.propensity_ is None:
            return np.ones(len(data))
        z = self.z_design_.covariate_matrix(data)
        p1 = np.clip(self.propensity_.predict_proba(z)[:, 1], 1e-3, 1 - 1e-3)
        return (1 - p1) / p1

    # -- fitting -------------------------------------------------------------------------------
    def fit(self, data: pd.DataFrame, y=None) -> "ConstrainedLearner":
        """Fit on ``data`` (every column of the SFM); ``y`` is ignored (the SFM names the outcome)."""
        self.random_state_ = self.random_state
        sfm = check_binary_sfm(self.sfm, "ConstrainedLearner")
        check_frame(data)
        self.lambdas_ = check_lambda_path(self.lambdas)
        check_columns_present(data, sfm.columns)
        check_finite(data[sfm.columns], levels=[sfm.x])
        levels = set(pd.unique(data[sfm.x]))
        if levels != {sfm.x0, sfm.x1}:
            raise FairpathInputError(f"{sfm.x!r} must have exactly the levels {sfm.x0!r} and {sfm.x1!r}, found {sorted(map(str, levels))}")
        y = data[sfm.y]
        if not pd.api.types.is_numeric_dtype(y):
            raise FairpathInputError(f"the outcome {sfm.y!r} must be numeric")
        check_outcome_varies(y, sfm.y)
        check_fit_group_sizes(data[sfm.x].value_counts().to_dict(), sfm.x)
        self.link_ = "logistic" if set(pd.unique(y)) <= {0, 1} else "linear"
        if self.link_ == "logistic":
            self.classes_ = np.array([0, 1])
        self.targets_ = self._outcome_targets(data)
        self.design_ = _Design(data, [*sfm.z, *sfm.w])
        self.propensity_ = None
        if sfm.z:
            self.z_design_ = _Design(data, list(sfm.z))
            group = (data[sfm.x] == sfm.x1).to_numpy()
            self.propensity_ = LogisticRegression(max_iter=1000).fit(self.z_design_.covariate_matrix(data), group)

        rng = np.random.default_rng(self.random_state_)
        held = rng.uniform(size=len(data)) < self.holdout
        self._check_split(data, held)
        fit_part, held_part = self._problem(data, np.flatnonzero(~held)), self._problem(data, np.flatnonzero(held))
        rows, beta = [], None
        for lam in self.lambdas_:
            beta = self._solve(fit_part, lam, beta)
            rows.append(self._evaluate(held_part, beta, lam))
        self.path_ = pd.DataFrame(rows)
        within = self.path_[self.path_["violation"] <= self.tolerance]
        best = within.iloc[0] if len(within) else self.path_.loc[self.path_["violation"].idxmin()]
        self.lambda_ = float(best["lambda"])
        full = self._problem(data)
        self.coef_ = self._solve(full, self.lambda_, None)
        self.effects_ = dict(zip(PATHWAYS, full.effects(self.coef_)[0]))
        return self

    def _check_split(self, data: pd.DataFrame, held: np.ndarray) -> None:
        """Both parts of the λ-choosing split need every group (and, for a 0/1 outcome, both classes)."""
        sfm = self.sfm
        for part, rows in (("fitting", ~held), ("held-out", held)):
            subset = data.loc[rows]
            counts = {level: int((subset[sfm.x] == level).sum()) for level in (sfm.x0, sfm.x1)}
            check_fit_group_sizes(counts, sfm.x, purpose=f"in the {part} part of the λ choice (holdout={self.holdout})")
            if self.link_ == "logistic" and subset[sfm.y].nunique() < 2:
                raise FairpathInputError(
                    f"the {part} part of the λ choice (holdout={self.holdout}) holds one class of {sfm.y!r}; use more data"
                )

    def _solve(self, problem: _Problem, lam: float, start: np.ndarray | None) -> np.ndarray:
        target = np.array([self.targets_[p] for p in PATHWAYS])
        p = problem.observed.shape[1]
        ridge = np.r_[0.0, np.full(p - 1, self.l2)]
        uses_x = "DE" in parse_bn(self.bn)
        bounds = [(None, None)] * p
        if not uses_x:
            bounds[1] = (0.0, 0.0)  # column 1 of the design is X
        start = np.zeros(p) if start is None else start

        def fit_loss(beta):
            value, grad = problem.loss(beta)
            return value + 0.5 * np.sum(ridge * beta**2), grad + ridge * beta

        if np.isinf(lam):
            # Pathways whose effect is identically 0 (DE without X) carry no constraint.
            kept = [k for k, pathway in enumerate(PATHWAYS) if uses_x or pathway != "DE"]
            constraint = {
                "type": "eq",
                "fun": lambda beta: (problem.effects(beta)[0] - target)[kept],
                "jac": lambda beta: problem.effects(beta)[1][kept],
            }
            result = minimize(fit_loss, start, jac=True, method="SLSQP", bounds=bounds, constraints=[constraint],
                              options={"maxiter": 500, "ftol": 1e-10})
            return result.x

        def objective(beta):
            value, grad = fit_loss(beta)
            if lam > 0:
                effects, jac = problem.effects(beta)
                gap = effects - target
                smooth_abs = np.sqrt(gap**2 + self.smooth**2)
                value += lam * smooth_abs.sum()
                grad = grad + lam * (gap / smooth_abs) @ jac
            return value, grad

        result = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000})
        return result.x

    def _evaluate(self, problem: _Problem, beta: np.ndarray, lam: float) -> dict:
        effects, _ = problem.effects(beta)
        loss, _ = problem.loss(beta)
        prediction = problem.predict(beta, problem.observed)
        row = {"lambda": lam, **{p: e for p, e in zip(PATHWAYS, effects)}}
        row["violation"] = float(sum(abs(e - self.targets_[p]) for p, e in zip(PATHWAYS, effects)))
        row["loss"] = loss
        if self.link_ == "logistic":
            row["auc"] = roc_auc_score(problem.y, prediction)
        else:
            row["r2"] = 1 - np.mean((problem.y - prediction) ** 2) / np.var(problem.y)
        return row

    # -- prediction ----------------------------------------------------------------------------
    def _scores(self, data: pd.DataFrame) -> np.ndarray:
        """Scores (probabilities for a binary outcome) of rows at their observed X."""
        check_fitted(self, "coef_")
        unknown = set(pd.unique(data[self.sfm.x])) - {self.sfm.x0, self.sfm.x1}
        if unknown:
            raise FairpathInputError(f"{self.sfm.x!r} has levels {sorted(map(str, unknown))} other than {self.sfm.x0!r} and {self.sfm.x1!r}")
        group = (data[self.sfm.x] == self.sfm.x1).to_numpy(dtype=float)
        design = _Design.with_x(self.design_.covariate_matrix(data), group)
        eta = design @ self.coef_
        return expit(eta) if self.link_ == "logistic" else eta

    def predict(self, data: pd.DataFrame) -> np.ndarray:
        """0/1 labels (probability above 1/2) for a binary outcome; predicted values for a continuous one."""
        scores = self._scores(data)
        return (scores > 0.5).astype(int) if self.link_ == "logistic" else scores

    def predict_proba(self, data: pd.DataFrame) -> np.ndarray:
        """Probabilities of the classes 0 and 1 (columns) of rows at their observed X; binary outcome only."""
        scores = self._scores(data)
        if self.link_ != "logistic":
            raise FairpathInputError(f"predict_proba needs a binary 0/1 outcome; {self.sfm.y!r} is continuous: use predict")
        return np.column_stack([1 - scores, scores])

    def path_result(self) -> "ConstrainedPath":
        return ConstrainedPath(path=self.path_, targets=self.targets_, chosen=self.lambda_, tolerance=self.tolerance, bn=list(parse_bn(self.bn)))


@result_class
class ConstrainedPath(ResultMixin):
    """The λ path of a constrained learner: held-out effects and accuracy per λ (``path``, one row per λ)."""

    path: pd.DataFrame
    targets: dict
    chosen: float
    tolerance: float
    bn: list[str]

    def to_frame(self) -> pd.DataFrame:
        """One row per λ (``subject`` ``lambda=<λ>``) and measure: the held-out effects (ctfde, ctfie, ctfse,
        with their ``target``), the violation, the loss and the AUC (or R²); no se or interval (one fit per
        λ). Then lambda, chosen (the λ the learner kept), target."""
        metrics = [c for c in self.path.columns if c != "lambda" and c not in PATHWAYS]
        rows = []
        for row in self.path.to_dict(orient="records"):
            shared = {"subject": f"lambda={row['lambda']:g}", "lambda": row["lambda"], "chosen": row["lambda"] == self.chosen}
            rows += [{**shared, "measure": MEASURE_OF_PATHWAY[p], "estimate": row[p], "target": self.targets[p]} for p in PATHWAYS]
            rows += [{**shared, "measure": m, "estimate": row[m], "target": np.nan} for m in metrics]
        return result_frame(rows)

    def to_dict(self) -> dict:
        return {"bn": self.bn, "targets": self.targets, "chosen_lambda": self.chosen, "tolerance": self.tolerance,
                "path": self.path.to_dict(orient="records")}

    def _repr_fields(self) -> dict:
        return {"bn": self.bn, "chosen_lambda": self.chosen}

    def summary(self) -> str:
        row = self.path[self.path["lambda"] == self.chosen].iloc[0]
        effects = ", ".join(f"{p} {row[p]:+.3f} (target {self.targets[p]:+.3f})" for p in PATHWAYS)
        return f"ConstrainedPath(BN={self.bn or '∅'}, λ={self.chosen:g}: {effects}; held-out violation {row['violation']:.3f})"

    def plot(self, ax=None):
        """Two panels: held-out effects against λ (dotted: targets) and the held-out AUC (or R²) against λ;
        on ``ax`` (a sequence of two axes) when given."""
        from fairpath.report import legend_below, new_figure

        fig, (left, right) = panel_axes(ax, 2, lambda: new_figure(1, 2, figsize=(10, 3.8)))
        lam = self.path["lambda"].to_numpy(dtype=float)
        finite = lam[np.isfinite(lam) & (lam > 0)]
        low, high = (finite.min() / 3, finite.max() * 3) if len(finite) else (1e-3, 1.0)
        shown = np.where(lam == 0, low, np.where(np.isinf(lam), high, lam))
        for p, colour in zip(PATHWAYS, ("tab:blue", "tab:orange", "tab:green")):
            left.plot(shown, self.path[p], marker="o", color=colour, label=f"Ctf-{p}(ŷ)")
            left.axhline(self.targets[p], color=colour, linestyle=":", linewidth=1)
        left.axvline(shown[np.flatnonzero(lam == self.chosen)[0]], color="grey", linestyle="--", label="chosen λ")
        left.set_xscale("log")
        left.set_xlabel("λ (0 and ∞ drawn at the edges)")
        left.set_ylabel("held-out effect (dotted: target)")
        legend_below(left, fontsize=8, ncol=2)
        metric = "auc" if "auc" in self.path else "r2"
        right.plot(shown, self.path[metric], marker="o", color="black")
        right.set_xscale("log")
        right.set_xlabel("λ")
        right.set_ylabel(f"held-out {metric.upper()}")
        fig.suptitle(f"Constrained learning path, BN = {{{', '.join(self.bn)}}}")
        fig.tight_layout()
        return fig
