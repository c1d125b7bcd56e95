"""``decompose``: counterfactual decomposition of the TV measure for Y and any predictors."""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._parallel import run_tasks, task_client
from fairpath._progress import stage
from fairpath._seeds import SPLITS, child_seed
from fairpath._validation import (
    Boolean, Columns, Draws, Folds, Frame, Integer, MAX_BOOTSTRAP_DRAWS, Optional, Options, Probability, Real, SchedulerAddress, Seed, Splits,
    check_columns_arg, is_partitioned_frame, local_workers, validate_params,
)
from fairpath.causal._data import PreparedData, level_counts, prepare_data
from fairpath.causal._distributed import prepare_partitioned
from fairpath.causal._known import check_predictor_functions, known_means
from fairpath._learners import check_learner, check_learner_for
from fairpath._measures import MEASURES, measures_need_nested
from fairpath.causal._methods import METHODS, DrawRequest, EstimationMethod, collect_in_order, measure_frame, resolve_method
from fairpath.causal._nuisance import OutcomeNuisances, cross_fit, pair_rows
from fairpath.causal._pseudo import PseudoOutcomes
from fairpath.causal._contrast import ContrastDecomposition, OutcomeFit
from fairpath.causal._decomposition import CONTRASTS, CausalDecomposition
from fairpath._levels import contrast_codes, contrast_labels
from fairpath._sfm import SFM, check_sfm

# When more than this share of rows has a propensity outside [eps, 1 − eps], the groups barely
# overlap: the effects are then not estimable from these data and the result says so.
NON_ESTIMABLE_SHARE = 0.5
# n_rep="auto": below this many rows the debiasing estimate aggregates AUTO_SPLITS cross-fitting
# splits. At n = 2000 one split's 95% intervals covered 0.905-0.92 in four (SFM, measure) cells of
# the synthetic SFMs, five splits 0.93-0.97 in every cell; at n = 5000 one split covers 0.935-0.98
# (benchmarks/study_coverage.py, 200 replications each).
AUTO_SPLITS_BELOW_ROWS = 5000
# ... and whenever a level of X in an analysed contrast has fewer than this many rows: a rare level's
# first-stage fits move its estimate more than one split's influence function says. At n = 10,000
# a 10% level (1,000 rows) of the K = 3 SFMs covered Ctf-SE 0.910 with one split, 0.950 with five
# (benchmarks/README.md, "The K-level coverage grid"); a 2,000-row group is what the balanced
# binary SFMs have at the 5,000-row threshold, where one split covers.
AUTO_SPLITS_BELOW_LEVEL_ROWS = 2000
AUTO_SPLITS = 5
# From this many rows on, n_folds="auto" takes LARGE_FOLDS folds, each holding at least 50,000
# rows: two folds' row-fits cost 40% of five's, and at n = 100,000 the stack's intervals cover as
# with five (confounded_sfm, 30 replications: bias of ctfde −0.0040 against −0.0037, SD 0.015;
# benchmarks/README.md). Below, SMALL_FOLDS folds, as the coverage study at n = 2000 and 5000
# measured them.
LARGE_ROWS = 100_000
LARGE_FOLDS = 2
SMALL_FOLDS = 5


def _validate(sfm, method, learner, measures, n_rep, n_boot):
    """The checks that involve more than one parameter or a non-scalar one (the scalars are declared on ``decompose``)."""
    check_sfm(sfm)
    if not sfm.binary and (method != "debiasing" or n_boot):
        raise FairpathInputError(
            f"every level of {sfm.x!r} at once (x1=None) takes its simultaneous intervals from the influence function: use "
            f"method='debiasing' with n_boot=0, or give x1 for one contrast with method={method!r}, n_boot={n_boot}"
        )
    unknown = [m for m in measures if m not in MEASURES]
    if unknown or not measures:
        raise FairpathInputError(f"unknown measure(s) {unknown or list(measures)}; use any of {MEASURES}")
    check_learner(learner)
    repeats = n_rep != "auto" and n_rep > 1  # "auto" resolves to 1 where splits do not apply
    if repeats and not resolve_method(method).repeats_splits:
        raise FairpathInputError(f"n_rep={n_rep}: method {method!r} takes its uncertainty from its own refits (nboot1); "
                                 "use n_rep=1 or method='debiasing'")
    if repeats and n_boot:
        raise FairpathInputError(f"n_rep={n_rep} aggregates influence-function intervals over splits; set n_boot=0 "
                                 "(or n_rep=1 for bootstrap intervals)")


def resolve_n_rep(n_rep, n_rows: int, smallest_level_rows: int, estimator: EstimationMethod, n_boot: int) -> int:
    """The number of cross-fitting splits: ``n_rep`` itself, or for ``"auto"`` ``AUTO_SPLITS`` when the
    method repeats splits, no bootstrap is asked for and the data have fewer than
    ``AUTO_SPLITS_BELOW_ROWS`` rows or the rarest level of X in a contrast fewer than
    ``AUTO_SPLITS_BELOW_LEVEL_ROWS``, else 1."""
    if n_rep != "auto":
        return n_rep
    small = n_rows < AUTO_SPLITS_BELOW_ROWS or smallest_level_rows < AUTO_SPLITS_BELOW_LEVEL_ROWS
    return AUTO_SPLITS if small and estimator.repeats_splits and not n_boot else 1


def resolve_n_folds(n_folds, n_rows: int) -> int:
    """``n_folds`` itself, or for ``"auto"`` ``SMALL_FOLDS`` below ``LARGE_ROWS`` rows and ``LARGE_FOLDS`` from there."""
    if n_folds != "auto":
        return n_folds
    return LARGE_FOLDS if n_rows >= LARGE_ROWS else SMALL_FOLDS


def overlap_diagnostic(x: np.ndarray, px_z: np.ndarray, px_zw: np.ndarray, eps: float) -> dict:
    """Share of rows with P(x1 | z) or P(x1 | z, w) outside [eps, 1 − eps], the propensity ranges
    per group, and whether the effects are estimable (at most ``NON_ESTIMABLE_SHARE`` outside)."""
    outside = np.zeros(len(x), dtype=bool)
    for p in (px_z, px_zw):
        outside |= (p < eps) | (p > 1 - eps)
    ranges = {
        group: {f"{name}_{stat}": float(fn(p[x == code])) for name, p in (("p_x1_z", px_z), ("p_x1_zw", px_zw))
                for stat, fn in (("min", np.min), ("max", np.max))}
        for code, group in enumerate(("x0", "x1"))
    }
    share = float(outside.mean())
    return {"eps": eps, "n_outside": int(outside.sum()), "share_outside": share,
            "estimable": share <= NON_ESTIMABLE_SHARE, "propensity": ranges, "outside": outside}


@dataclass
class ContrastFit:
    """The pseudo-outcomes of one contrast on one fit: per outcome column, with the contrast's overlap
    diagnostic, its trimmed rows and the positions of its rows among the prepared rows."""

    pseudo: dict[str, PseudoOutcomes]
    overlap: dict
    n_trimmed: int
    rows: np.ndarray


class _Fitter:
    """One fit of all nuisances on a (possibly resampled) data set, turned into pseudo-outcomes per contrast."""

    def __init__(self, outcomes, learner, n_folds, eps, trim, method: EstimationMethod, n_jobs, nested, column: str, contrasts=((0, 1),),
                 balanced_bounds: bool = False):
        self.outcomes, self.learner, self.n_folds = outcomes, learner, n_folds
        self.eps, self.trim, self.method, self.n_jobs, self.nested = eps, trim, method, n_jobs, nested
        self.column = column  # X's column, for messages
        self.contrasts = tuple(contrasts)
        self.balanced_bounds = balanced_bounds  # eps bounds the share-balanced propensities (see balance)

    def __call__(self, data: PreparedData, seed: int, progress: bool = False, where: dict | None = None) -> list[ContrastFit]:
        data.check_fold_sizes(self.column, self.n_folds)  # again on a medDML resample
        nuisances = cross_fit(data, self.outcomes, self.learner, self.n_folds, seed, self.method, self.n_jobs, self.nested, progress,
                              where, self.contrasts)
        return [self._contrast(data, nuisances, contrast) for contrast in self.contrasts]

    def _contrast(self, data: PreparedData, nuisances, contrast: tuple[int, int]) -> ContrastFit:
        pair = pair_rows(data.x, contrast)
        positions = np.arange(data.n) if isinstance(pair, slice) else pair
        x = (data.x[pair] == contrast[1]).astype(np.int8)
        px_z, px_zw = nuisances.px_z[contrast][pair], nuisances.px_zw[contrast][pair]
        odds = float(x.mean() / (1 - x.mean())) if self.balanced_bounds else 1.0
        px_z, px_zw = balance(px_z, odds), balance(px_zw, odds)
        overlap = overlap_diagnostic(x, px_z, px_zw, self.eps)
        extreme = overlap.pop("outside")
        # Without trimming every row stays: a slice keeps the arrays as views (no copy of n rows each).
        keep = ~extreme if self.trim else slice(None)
        kept_x = x[keep]
        if len(kept_x) < 2 or len(np.unique(kept_x)) < 2:
            raise FairpathInputError(
                f"trimming at eps={self.eps} leaves {len(kept_x)} rows without both groups; lower eps or turn trimming off"
            )
        # Untrimmed rows outside the bounds are clipped to [eps, 1 − eps], so no weight exceeds
        # (1 − eps)/eps; the diagnostic above reports them.
        px_z = balance(np.clip(px_z[keep], self.eps, 1 - self.eps), 1 / odds)
        px_zw = balance(np.clip(px_zw[keep], self.eps, 1 - self.eps), 1 / odds)
        has_w, has_z = data.w.shape[1] > 0, data.z.shape[1] > 0
        pseudo = {}
        for name in self.outcomes:
            restricted = _restrict(nuisances.outcomes[name], pair, keep, contrast)
            pseudo[name] = PseudoOutcomes(
                kept_x, data.outcomes[name][pair][keep], px_z, px_zw, restricted, has_w, has_z,
                group_means=self.method.group_means,
            )
        return ContrastFit(pseudo, overlap, len(x) - len(kept_x), positions[keep])


def balance(p: np.ndarray, odds: float) -> np.ndarray:
    """Propensities with their odds divided by ``odds``: with the pair's odds P̂(x1)/P̂(x0), the share-balanced
    propensity, 0.5 wherever z says nothing about X. With every level of X analysed, ``eps`` bounds (and clips)
    these: a level holding 0.3% of its pair's rows has raw propensities below 0.01 on nearly every row from its
    rarity alone (Census 2018: NHOPI against white), which is not a lack of overlap, and clipping them there would
    bias its weights. ``odds`` 1 leaves them as they are (one contrast: the bounds of the binary analysis)."""
    if odds == 1.0:
        return p
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = p / (1 - p) / odds
        # a propensity of exactly 1 (a learner certain of the level) stays 1, outside the bounds as in the binary analysis,
        # instead of inf / inf = NaN, which no bound check counts
        return np.where(p == 1.0, 1.0, scaled / (1 + scaled))


def _warn_overlap(overlap: dict, n: int, trim: bool, contrast: str = "") -> None:
    eps = overlap["eps"]
    where = f"contrast {contrast!r}: " if contrast else ""
    propensity = "share-balanced propensity" if contrast else "propensity"
    if not overlap["estimable"]:
        warnings.warn(
            f"{where}{overlap['n_outside']} of {n} rows ({overlap['share_outside']:.0%}) have a {propensity} outside "
            f"[{eps}, {1 - eps}]: the groups barely overlap, so the effects are not estimable from these data "
            "(the result is flagged not estimable; its intervals are not to be trusted)",
            stacklevel=5,  # the caller of decompose, above its parameter check
        )
    elif overlap["n_outside"]:
        action = "left out (trim=True)" if trim else f"clipped to [{eps}, {1 - eps}] for the estimates"
        warnings.warn(
            f"{where}{overlap['n_outside']} of {n} rows ({overlap['share_outside']:.1%}) have a {propensity} outside "
            f"[{eps}, {1 - eps}] (weak overlap); they are {action}",
            stacklevel=5,  # the caller of decompose, above its parameter check
        )


def _restrict(nuisances: OutcomeNuisances, pair, keep, contrast: tuple[int, int]) -> OutcomeNuisances:
    """The nuisances of contrast (a, b) on its kept rows, its levels coded as the binary analysis' 0 (a) and 1 (b)."""
    code = dict(enumerate(contrast))  # binary code -> level code
    return OutcomeNuisances(
        mu_xz={v: nuisances.mu_xz[code[v]][pair][keep] for v in (0, 1)},
        mu_xzw={v: nuisances.mu_xzw[code[v]][pair][keep] for v in (0, 1)},
        nested={(x_w, x_y): nuisances.nested[(code[x_w], code[x_y])][pair][keep]
                for x_w, x_y in ((0, 1), (1, 0)) if (code[x_w], code[x_y]) in nuisances.nested},
    )


def _split_task(rep: int, *, data: PreparedData, fitter, measures, seed: int, where: dict | None = None):
    """One more cross-fitting split (rep ≥ 1) on the same rows, with its own spawned seed: per contrast
    (frames, pseudo, rows)."""
    return [({name: measure_frame(fit.pseudo[name], measures) for name in fit.pseudo}, fit.pseudo, fit.rows)
            for fit in fitter(data, child_seed(seed, SPLITS, rep), where=where)]


def _more_splits(data, fitter, measures, seed, n_rep, progress, where) -> list:
    """The splits 1 … n_rep − 1 as tasks (on threads or Dask): per split, per contrast (frames, pseudo, rows). The splits of
    a partitioned table run one after another here, each with its folds as tasks on the workers."""
    if n_rep == 1:
        return []
    shared = {"data": data, "fitter": fitter, "measures": measures, "seed": seed}
    if data.remote is not None:
        results = run_tasks(_split_task, range(1, n_rep), shared={**shared, "where": where})
    else:
        results = run_tasks(_split_task, range(1, n_rep), shared=shared, **where)
    return collect_in_order(results, n_rep - 1, "cross-fitting splits", progress)


def _check_partitioned(method: str, predictor_functions, where: dict) -> None:
    """What a Dask DataFrame cannot do: medDML's refits resample its rows, known predictor functions read
    its rows here, and it needs a cluster to stay on."""
    if method != "debiasing":
        raise FairpathInputError(f"method {method!r} resamples the rows for each refit, which a Dask DataFrame cannot: "
                                 "pass a pandas DataFrame (its refits still run on Dask with scheduler= or workers=)")
    if predictor_functions:
        raise FairpathInputError("predictor_functions read the table's rows in this process: pass a pandas DataFrame")
    if not where:
        raise FairpathInputError("a Dask DataFrame stays on a Dask cluster: pass scheduler= (an address or a "
                                 "distributed.Client) or workers= (a local cluster of that many processes)")


def _call_provenance(data: pd.DataFrame, predictors, method: str, seed: int) -> dict:
    from fairpath.report import api_call, provenance  # the report package loads Jinja2: only when a result is made

    return provenance(call=api_call("fairpath.causal.decompose", data, predictors=list(predictors), method=method, seed=seed), seed=seed)


@validate_params({
    "data": Frame(partitioned=True), "predictors": Columns(), "method": Options(METHODS), "n_folds": Folds(), "seed": Seed(), "level": Probability(),
    "eps": Real(0.0, 0.5, open_low=True, open_high=True),
    "trim": Optional(Boolean()),  # None: the method's default
    "n_boot": Draws(allow_zero=True),
    "nboot1": Integer(1, MAX_BOOTSTRAP_DRAWS),  # one refit (the data as given) is a valid medDML
    "nboot2": Draws(), "n_rep": Splits(), "n_jobs": Optional(Integer(1)), "workers": Optional(local_workers()), "scheduler": Optional(SchedulerAddress()),
    "progress": Boolean(),
    "contrasts": Options(CONTRASTS),
})
def decompose(
    data: pd.DataFrame,
    sfm: SFM,
    predictors=(),
    *,
    predictor_functions=None,
    method: str = "debiasing",
    learner=None,
    measures=None,
    n_folds: int | str = "auto",
    seed: int = 0,
    level: float = 0.95,
    eps: float = 0.01,
    trim: bool | None = None,
    n_boot: int = 0,
    nboot1: int = 1,
    nboot2: int = 100,
    n_rep: int | str = "auto",
    contrasts: str = "reference",
    n_jobs: int | None = None,
    scheduler=None,
    workers: int | None = None,
    progress: bool = False,
    provenance: dict | None = None,
) -> CausalDecomposition:
    """Estimate TV, Ctf-DE, Ctf-IE, Ctf-SE (and ETT, TE, NDE, NIE, Exp-SE) of X on Y and on each predictor,
    for one contrast x0 → x1 or (``sfm.x1`` None) for every level of X against ``x0`` or every pair (``contrasts``).
    The result is a :class:`CausalDecomposition` either way: a binary X is its one-contrast case.

    Parameters
    ----------
    data : DataFrame with the SFM's columns and the predictor columns (or a Dask DataFrame, with ``scheduler`` or ``workers``).
    sfm : the Standard Fairness Model (:class:`SFM`).
    predictors : predictor columns Ŷ, decomposed alongside Y with the same propensity models.
    predictor_functions : {predictor column: f} for predictors whose function you hold (the fitted
        model): f takes rows of ``data`` (all its columns) and returns the predictor's values. It must
        reproduce its column; fairpath then sets X to each level and calls f, so the predictor's
        E[Ŷ | x, z, w] is exact instead of estimated (see ``fairpath.causal._known``). This removes
        the error an estimated mean leaves in a predictor's measures, which the intervals do not
        include: a predictor that never reads X gets Ctf-DE 0 on every row.
    method : ``"debiasing"`` (one-step influence-function estimator with cross-fitting, the default)
        or ``"medDML"`` (faircause's doubly robust mediation DML with a two-level bootstrap); each
        is an object in ``fairpath.causal._methods`` with the hooks decompose calls.
    learner : ``"stack"`` (default for debiasing: every nuisance by a holdout-weighted mix of LightGBM
        and a quadratic GLM, the GLM on a subsample for large fits; see :class:`StackedLearner`),
        ``"gbm"`` (LightGBM with early stopping, its leaves and learning rate set by the fit's size,
        its bins shared by a fold's fits), ``"rf"`` (random forest; default for medDML),
        ``"linear"``, or any scikit-learn estimator (a classifier only for 0/1 outcome columns).
    measures : the measures to estimate (default: all of ``MEASURES``). The nested means ν are
        fitted only when one of them needs it (nde, nie; every cross-world measure with medDML),
        which halves the work for tv, ctfde, ctfie, ctfse.
    n_folds : cross-fitting folds; each group needs ``MIN_GROUP_ROWS_PER_FOLD`` rows per fold.
        ``"auto"`` (default): 5 below ``LARGE_ROWS`` rows, 2 from there (each fold then holds at
        least 50,000 rows); ``settings["n_folds"]`` holds the number used.
    seed : seeds the folds, the learners and the bootstrap: the same seed gives the same numbers.
    level : confidence level of the intervals.
    eps : positivity bound: propensities P(x1|z), P(x1|z,w) outside [eps, 1 − eps] are clipped to
        it (weights never exceed (1 − eps)/eps) and their rows counted, with a warning; with
        ``trim=True`` those rows are left out instead (``n_trimmed``). ``overlap`` reports the
        share outside and the propensity range per group; above ``NON_ESTIMABLE_SHARE`` the result
        is flagged not estimable.
    trim : leave rows outside the bounds out; default True for medDML (as faircause), else False.
    n_boot : debiasing only: if > 0, percentile intervals from this many row resamples of the
        pseudo-outcomes instead of normal intervals from the influence function (0, or 2 … 100,000 draws).
    nboot1, nboot2 : medDML only: refits on resampled rows (the first on the data as given) and
        resamples of the pseudo-outcomes per refit (1 … 100,000 and 2 … 100,000); estimate and SE are the mean and SD of all draws.
    n_rep : debiasing only: repeat the cross-fitting on this many random fold splits (the first
        seeded by ``seed``) and aggregate them by the mean (Chernozhukov et al. 2018): the mean
        estimate θ and the SE √mean(se_s² + (θ_s − θ)²), so that the spread over splits enters the
        interval and TV = Ctf-DE − Ctf-IE − Ctf-SE stays exact (DoubleML's median breaks it); costs
        ``n_rep`` times the fits. Needs ``n_boot=0``. ``"auto"`` (default): ``AUTO_SPLITS`` (5)
        splits below ``AUTO_SPLITS_BELOW_ROWS`` (5000) rows, where one split's intervals measurably
        undercover (0.905-0.92 at n = 2000 on the synthetic SFMs, 0.93-0.97 with five), or when a
        level of X in a contrast has fewer than ``AUTO_SPLITS_BELOW_LEVEL_ROWS`` (2000) rows, else 1; always 1
        for medDML or with ``n_boot``. ``settings["n_rep"]`` holds the number used.
    contrasts : with ``sfm.x1`` None (every level of X analysed): ``"reference"`` (default) compares every other level
        with ``sfm.x0``, ``"pairs"`` every pair of levels. The result then holds each contrast's
        :class:`ContrastDecomposition` (the binary analysis of that pair's rows) and simultaneous intervals over the
        contrasts. The outcome regressions are pooled over every row (X as
        indicator columns) and fitted once; each contrast fits its own propensities on its pair's rows. Needs
        ``method="debiasing"`` and ``n_boot=0`` (the simultaneous intervals come from the influence function). There
        ``eps`` bounds each contrast's share-balanced propensities (odds divided by the pair's odds, see ``balance``):
        a rare level is not flagged, or clipped, for its rarity alone.
    n_jobs : threads for the cross-fitting folds (default: all cores); results do not depend on it.
    scheduler, workers : run the cross-fitting folds, the n_rep splits, the medDML refits and the bootstrap
        blocks as Dask tasks, on the scheduler at this address (or a ``distributed.Client``) or on one
        ``LocalCluster`` of this many workers for the whole call (see :func:`fairpath._parallel.run_tasks`;
        needs ``fairpath[dask]``). Each task has its own seed, so the numbers equal those of a local run.
        ``data`` may then be a Dask DataFrame (debiasing only): it is checked and encoded partition by
        partition on the workers and never gathered here (see ``fairpath.causal._distributed``).
    progress : show progress bars (cross-fitting, medDML refits, splits) on stderr when it is a terminal.
    provenance : what the result was computed from (see :func:`fairpath.report.provenance`), kept in
        ``settings["provenance"]`` and shown by the report; by default this call, the data named by the
        SHA-256 of its values, and the package versions.
    """
    measures = MEASURES if measures is None else (measures,) if isinstance(measures, str) else tuple(measures)
    _validate(sfm, method, learner, measures, n_rep, n_boot)
    measures = tuple(m for m in MEASURES if m in measures)
    estimator = resolve_method(method)
    trim = estimator.trims_by_default if trim is None else bool(trim)
    started = time.perf_counter()
    outcomes = [sfm.y, *check_columns_arg("predictors", predictors)]
    functions = check_predictor_functions(predictor_functions, outcomes[1:])
    provenance = provenance or _call_provenance(data, predictors, method, seed)
    with task_client(scheduler, workers) as where:
        return _decompose(data, sfm, outcomes=outcomes, functions=functions, estimator=estimator, learner=learner, measures=measures,
                          n_folds=n_folds, seed=seed, level=level, eps=eps, trim=trim, n_boot=n_boot, nboot1=nboot1, nboot2=nboot2,
                          n_rep=n_rep, contrasts=contrasts, n_jobs=n_jobs, where=where, progress=progress, provenance=provenance,
                          started=started)


def _decompose(data, sfm, *, outcomes, functions, estimator, learner, measures, n_folds, seed, level, eps, trim, n_boot, nboot1,
               nboot2, n_rep, contrasts, n_jobs, where, progress, provenance, started):
    """``decompose`` once its arguments are checked, with ``where`` the run_tasks options of one Dask client (or none)."""
    if is_partitioned_frame(data):
        _check_partitioned(estimator.name, functions, where)
        if not sfm.binary:
            raise FairpathInputError("every level of X at once (x1=None) needs a pandas DataFrame; a Dask DataFrame takes one "
                                     "contrast: give x1")
        with stage("preparing the data on the Dask workers", enabled=progress) as preparing:
            prepared = prepare_partitioned(data, sfm, outcomes, where["scheduler"])
            preparing.rows = prepared.n
    else:
        with stage("preparing the data", len(data), enabled=progress):
            prepared = prepare_data(data, sfm, outcomes)
        prepared.known = known_means(data, sfm, prepared, functions)
    # every level is in some contrast, in both contrast modes
    rarest = int(np.bincount(prepared.x, minlength=len(prepared.levels)).min())
    n_rep = resolve_n_rep(n_rep, prepared.n, rarest, estimator, n_boot)
    n_folds = resolve_n_folds(n_folds, prepared.n)
    prepared.check_fold_sizes(sfm.x, n_folds)
    learner = learner if learner is not None else estimator.default_learner
    check_learner_for(learner, {name: prepared.binary(name) for name in outcomes})
    n_jobs = n_jobs or min(n_folds, os.cpu_count() or 1)
    nested = measures_need_nested(measures, group_means=estimator.group_means, has_z=prepared.z.shape[1] > 0)
    codes = contrast_codes(len(prepared.levels), contrasts)
    labels = contrast_labels(sfm.x, prepared.levels, codes)
    fitter = _Fitter(outcomes, learner, n_folds, eps, trim, estimator, n_jobs, nested, sfm.x, codes, balanced_bounds=not sfm.binary)
    fits = fitter(prepared, seed, progress, where)
    for fit, label in zip(fits, labels):
        _warn_overlap(fit.overlap, len(fit.rows) + fit.n_trimmed, trim, "" if sfm.binary else label)
    with stage("pseudo-outcomes", sum(len(fit.rows) for fit in fits) * len(outcomes), enabled=progress):
        frames = [{name: measure_frame(fit.pseudo[name], measures) for name in outcomes} for fit in fits]
    draws = estimator.draws(DrawRequest(frames[0], prepared, fitter, measures, seed, n_boot, nboot1, nboot2, progress, where))
    more = _more_splits(prepared, fitter, measures, seed, n_rep, progress, where)
    settings = {
        "method": estimator.name, "learner": learner if isinstance(learner, str) else repr(learner), "n_folds": n_folds,
        "seed": seed, "level": level, "eps": eps, "trim": trim, **estimator.settings(n_boot, nboot1, nboot2),
        "n_rep": n_rep,
        "measures": list(measures), "known_means": list(functions),
        # outcomes within [0, 1] (0/1 outcomes, probabilities): their effects read as percentage points
        "share_outcomes": [name for name in outcomes if bool(((prepared.outcomes[name] >= 0) & (prepared.outcomes[name] <= 1)).all())],
        "provenance": provenance,
    }
    parts = {"sfm": sfm, "prepared": prepared, "fits": fits, "frames": frames, "draws": draws, "more": more, "settings": settings,
             "started": started}
    decompositions = {label: _contrast_result(j, code, **parts) for j, (label, code) in enumerate(zip(labels, codes))}
    rows = {label: [fit.rows, *(split[j][2] for split in more)] for j, (label, fit) in enumerate(zip(decompositions, fits))}
    return CausalDecomposition(
        sfm=sfm, decompositions=decompositions, contrast_rows=rows, n_rows=prepared.n,
        settings={**settings, "contrasts": contrasts, "levels": list(prepared.levels)},
        counts={"n": int(prepared.n), "n_excluded": prepared.n_excluded,
                "per_level": {str(level): count for level, count in level_counts(prepared.x, prepared.levels).items()}},
        seconds=time.perf_counter() - started)


def _contrast_result(j: int, code: tuple[int, int], *, sfm, prepared, fits, frames, draws, more, settings, started) -> ContrastDecomposition:
    """The decomposition of contrast ``j`` (level codes ``code``) from its fit, frames and further splits."""
    fit = fits[j]
    outcome_fits = {name: OutcomeFit(frames[j][name], fit.pseudo[name], None if draws is None else draws[name],
                                     tuple((split[j][0][name], split[j][1][name]) for split in more)) for name in fit.pseudo}
    analysed = len(fit.rows) + fit.n_trimmed  # the pair's rows
    counts = {
        "n": analysed, "n_x0": int((prepared.x == code[0]).sum()), "n_x1": int((prepared.x == code[1]).sum()),
        "n_excluded": prepared.n_excluded + prepared.n - analysed, "n_extreme": fit.overlap["n_outside"], "n_trimmed": fit.n_trimmed,
    }
    a, b = (prepared.levels[c] for c in code)
    return ContrastDecomposition(sfm=sfm.for_contrast(a, b), fits=outcome_fits, settings=settings, counts=counts, overlap=fit.overlap,
                               seconds=time.perf_counter() - started, encoded={"z": prepared.z_names, "w": prepared.w_names})
