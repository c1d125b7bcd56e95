"""``decompose``: counterfactual decomposition of the TV measure for Y and any predictors."""

from __future__ import annotations

import os
import time

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._progress import progress as progress_bar
from fairpath._validation import (
    check_bool, check_choice, check_columns_arg, check_cross_fit_sizes, check_float, check_int, check_probability, check_seed,
)
from fairpath.causal._data import PreparedData, prepare_data
from fairpath.causal._measures import MEASURE_TERMS
from fairpath.causal._nuisance import OutcomeNuisances, cross_fit
from fairpath.causal._pseudo import PseudoOutcomes
from fairpath.causal._result import CausalDecomposition, OutcomeFit
from fairpath.causal._learners import check_learner
from fairpath.causal._sfm import SFM, check_sfm

METHODS = ("debiasing", "medDML")
_DEFAULT_LEARNER = {"debiasing": "gbm", "medDML": "rf"}


def _measure_frame(pseudo: PseudoOutcomes) -> pd.DataFrame:
    columns = {}
    for name, terms in MEASURE_TERMS.items():
        columns[name] = sum(sign * pseudo(*key) for sign, key in terms)
    return pd.DataFrame(columns)


def _bootstrap_counts(n: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """Multinomial resampling counts (n_draws, n): a resample's mean is ``counts @ v / n``."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_draws).astype(float)


def _subset(data: PreparedData, rows: np.ndarray) -> PreparedData:
    return PreparedData(
        x=data.x[rows], z=data.z[rows], w=data.w[rows], outcomes={k: v[rows] for k, v in data.outcomes.items()},
        index=data.index[rows], z_names=data.z_names, w_names=data.w_names, n_excluded=data.n_excluded,
    )


def _validate(sfm, method, learner, n_folds, seed, level, eps, trim, n_boot, nboot1, nboot2):
    check_sfm(sfm)
    check_choice("method", method, METHODS)
    check_learner(learner)
    check_int("n_folds", n_folds, minimum=2)
    check_seed(seed)
    check_probability("level", level)
    check_float("eps (positivity threshold)", eps, 0.0, 0.5, open_high=True)
    check_bool("trim", trim)
    for name, value, low in (("n_boot", n_boot, 0), ("nboot1", nboot1, 1), ("nboot2", nboot2, 1)):
        check_int(name, value, minimum=low)


class _Fitter:
    """One fit of all nuisances on a (possibly resampled) data set, turned into pseudo-outcomes."""

    def __init__(self, outcomes, learner, n_folds, eps, trim, scheme, n_jobs):
        self.outcomes, self.learner, self.n_folds = outcomes, learner, n_folds
        self.eps, self.trim, self.scheme, self.n_jobs = eps, trim, scheme, n_jobs

    def __call__(self, data: PreparedData, seed: int, progress: bool = False):
        smallest = min(int((data.x == 0).sum()), int((data.x == 1).sum()))
        check_cross_fit_sizes(data.n, smallest, self.n_folds)
        nuisances = cross_fit(data, self.outcomes, self.learner, self.n_folds, seed, self.scheme, self.n_jobs, progress)
        extreme = np.zeros(data.n, dtype=bool)
        for p in (nuisances.px_z, nuisances.px_zw):
            extreme |= (p < self.eps) | (p > 1 - self.eps)
        keep = ~extreme if self.trim else np.ones(data.n, dtype=bool)
        if keep.sum() < 2 or len(np.unique(data.x[keep])) < 2:
            raise FairpathInputError(
                f"trimming at eps={self.eps} leaves {int(keep.sum())} rows without both groups; lower eps or turn trimming off"
            )
        # Clip propensities away from 0/1 only for the arithmetic: the count above reports positivity.
        px_z = np.clip(nuisances.px_z[keep], 1e-6, 1 - 1e-6)
        px_zw = np.clip(nuisances.px_zw[keep], 1e-6, 1 - 1e-6)
        has_w, has_z = data.w.shape[1] > 0, data.z.shape[1] > 0
        pseudo = {}
        for name in self.outcomes:
            restricted = _restrict(nuisances.outcomes[name], keep)
            pseudo[name] = PseudoOutcomes(
                data.x[keep], data.outcomes[name][keep], px_z, px_zw, restricted, has_w, has_z,
                group_means=self.scheme == "medDML",
            )
        return pseudo, int(extreme.sum()), int((~keep).sum()), data.index[keep]


def _restrict(nuisances: OutcomeNuisances, keep: np.ndarray) -> OutcomeNuisances:
    return OutcomeNuisances(
        mu_xz={k: v[keep] for k, v in nuisances.mu_xz.items()},
        mu_xzw={k: v[keep] for k, v in nuisances.mu_xzw.items()},
        nested={k: v[keep] for k, v in nuisances.nested.items()},
    )


def decompose(
    data: pd.DataFrame,
    sfm: SFM,
    predictors=(),
    *,
    method: str = "debiasing",
    learner=None,
    n_folds: int = 5,
    seed: int = 0,
    level: float = 0.95,
    eps: float = 0.01,
    trim: bool = False,
    n_boot: int = 0,
    nboot1: int = 1,
    nboot2: int = 100,
    n_jobs: int | None = None,
    progress: bool = False,
) -> CausalDecomposition:
    """Estimate TV, Ctf-DE, Ctf-IE, Ctf-SE (and ETT, TE, NDE, NIE, Exp-SE) of X on Y and on each predictor.

    Parameters
    ----------
    data : DataFrame with the SFM's columns and the predictor columns.
    sfm : the Standard Fairness Model (:class:`SFM`).
    predictors : predictor columns Ŷ, decomposed alongside Y with the same propensity models.
    method : ``"debiasing"`` (one-step influence-function estimator with cross-fitting, the default)
        or ``"medDML"`` (faircause's doubly robust mediation DML with a two-level bootstrap).
    learner : ``"gbm"`` (LightGBM with early stopping; default for debiasing), ``"rf"`` (random
        forest; default for medDML), ``"linear"``, or any scikit-learn estimator.
    n_folds : cross-fitting folds.
    seed : seeds the folds, the learners and the bootstrap: the same seed gives the same numbers.
    level : confidence level of the intervals.
    eps : rows with P(x|z) or P(x|z,w) outside [eps, 1 − eps] are counted (``n_extreme_``) and,
        with ``trim=True``, left out of the estimates (``n_trimmed_``).
    n_boot : debiasing only: if > 0, percentile intervals from this many row resamples of the
        pseudo-outcomes instead of normal intervals from the influence function.
    nboot1, nboot2 : medDML only: refits on resampled rows (the first on the data as given) and
        resamples of the pseudo-outcomes per refit; estimate and SE are the mean and SD of all draws.
    n_jobs : threads for the cross-fitting folds (default: all cores); results do not depend on it.
    progress : show progress bars (cross-fitting, medDML refits) on stderr when it is a terminal.
    """
    _validate(sfm, method, learner, n_folds, seed, level, eps, trim, n_boot, nboot1, nboot2)
    started = time.perf_counter()
    outcomes = [sfm.y, *check_columns_arg("predictors", predictors)]
    prepared = prepare_data(data, sfm, outcomes)
    learner = learner if learner is not None else _DEFAULT_LEARNER[method]
    n_jobs = n_jobs or min(n_folds, os.cpu_count() or 1)
    fitter = _Fitter(outcomes, learner, n_folds, eps, trim, method, n_jobs)
    rng = np.random.default_rng(seed)
    pseudo, n_extreme, n_trimmed, kept_index = fitter(prepared, seed, progress)
    frames = {name: _measure_frame(pseudo[name]) for name in outcomes}
    draws = None
    if method == "medDML":
        draws = _meddml_draws(prepared, fitter, frames, nboot1, nboot2, seed, rng, progress)
    elif n_boot:
        counts = _bootstrap_counts(len(kept_index), n_boot, rng)
        draws = {name: pd.DataFrame(counts @ frame.to_numpy() / len(frame), columns=frame.columns) for name, frame in frames.items()}
    fits = {name: OutcomeFit(frames[name], pseudo[name], None if draws is None else draws[name]) for name in outcomes}
    settings = {
        "method": method, "learner": learner if isinstance(learner, str) else repr(learner), "n_folds": n_folds,
        "seed": seed, "level": level, "eps": eps, "trim": trim, "n_boot": n_boot,
        "nboot1": nboot1 if method == "medDML" else None, "nboot2": nboot2 if method == "medDML" else None,
    }
    counts = {
        "n": int(prepared.n), "n_x0": int((prepared.x == 0).sum()), "n_x1": int((prepared.x == 1).sum()),
        "n_excluded": prepared.n_excluded, "n_extreme": n_extreme, "n_trimmed": n_trimmed,
    }
    return CausalDecomposition(sfm=sfm, fits=fits, settings=settings, counts=counts,
                               seconds=time.perf_counter() - started, encoded={"z": prepared.z_names, "w": prepared.w_names})


def _meddml_draws(prepared, fitter, first_frames, nboot1, nboot2, seed, rng, progress):
    """faircause's two-level bootstrap: refit on ``nboot1`` row resamples (the first is the data
    as given), and take ``nboot2`` resampled means of each refit's pseudo-outcomes."""
    draws = {name: [] for name in first_frames}
    for rep in progress_bar(range(nboot1), desc="medDML refits", enabled=progress and nboot1 > 1):
        if rep == 0:
            frames = first_frames
        else:
            rows = rng.integers(0, prepared.n, prepared.n)
            pseudo, *_ = fitter(_subset(prepared, rows), seed + rep)
            frames = {name: _measure_frame(pseudo[name]) for name in first_frames}
        n = len(next(iter(frames.values())))
        counts = _bootstrap_counts(n, nboot2, rng)
        for name, frame in frames.items():
            draws[name].append(counts @ frame.to_numpy() / n)
    return {name: pd.DataFrame(np.vstack(parts), columns=first_frames[name].columns) for name, parts in draws.items()}
