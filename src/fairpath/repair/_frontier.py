"""The statistical parity – predictive parity – accuracy frontier across BN sets (the paper's Figure 6).

For every BN set (named by its resolving variables: none, Z, W, ZW) and every seed: adapt the data,
train the learner on the fair twins, take its out-of-fold scores, and measure SPM (the decision
thresholded at a quantile of the scores, 0.68 as in the paper's code), iPPM and AUC (on the
scores). The unconstrained learner (all of X, Z, W) and the constrained-learning predictors of each
BN set are extra points. The repeats are seeded by children of the seed (``numpy.random.SeedSequence``,
see fairpath._seeds), so runs at seeds 0 and 1 share no repeat. Every finished (point, seed) run is a
step of the run folder ``OUT/runs`` (fairpath._runs), saved atomically as it finishes, so an
interrupted run resumes where it stopped; ``OUT/runs.csv`` holds them all at the end. The runs are
reused only under the same key (a fingerprint of the SFM's columns, the SFM, every setting, the
learner's parameters and the code version); under another the folder's runs are computed again and a
warning names what changed. The runs are
independent tasks (``n_jobs`` threads, or a Dask ``scheduler`` / local ``workers``; see
fairpath._parallel): each takes its randomness from its seed, so where it runs changes no number.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from fairpath._exceptions import FairpathInputError
from fairpath._fingerprint import fingerprint
from fairpath._io import locked_folder, save_figure, write_csv
from fairpath._validation import (
    Boolean, Draws, Frame, Integer, Jobs, MAX_REPEATS, Optional, Options, Probability, SchedulerAddress, Seed, check_columns_present, check_finite,
    check_outcome_varies, check_output_dir, local_workers, validate_params,
)
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._runs import RunFolder, run_all
from fairpath._seeds import REPEATS, child_seed
from fairpath._vocabulary import MEASURE_OF_PATHWAY, RESOLVING_NAMES, Engine, Reference, parse_bn, split_bn_sets
from fairpath._sfm import check_binary_sfm
from fairpath.causal import decompose
from fairpath.parity import predictive_parity
from fairpath.repair._constrained import ConstrainedLearner
from fairpath.repair._predictor import FairPredictor, check_fold_sizes, default_forest, encode_features, out_of_fold_scores

# Frontier BN sets are named by their resolving variables, as in the paper's figure.
BN_OF_RESOLVING = {name: bn for bn, name in RESOLVING_NAMES.items()}
# Raised whenever a run's numbers change for the same inputs: saved runs of another version are computed again
# (2: the repeats are seeded by SeedSequence children of the seed, not seed, seed + 1, ...).
FRONTIER_VERSION = 2
RUN_COLUMNS = ["point", "kind", "bn_set", "seed", "spm", "ippm", "auc", "ippm_bins"]


def parse_bn_sets(value) -> list[str]:
    """The frontier's BN sets (see :func:`fairpath.parity.parse_bn`; sets separated by ``;``), each named by
    its resolving variables: none, Z, W or ZW."""
    parsed = []
    for item in split_bn_sets(value):
        bn = parse_bn(item)
        if "DE" in bn:
            raise FairpathInputError(
                f"BN set {item!r} holds DE, which data adaptation cannot keep (X itself is never resolving); "
                "the frontier takes BN sets among none, SE (Z), IE (W) and IE,SE (ZW)"
            )
        parsed.append(RESOLVING_NAMES[bn])
    return list(dict.fromkeys(parsed))


@validate_params({"quantile": Probability()})
def decision_spm(scores: np.ndarray, group: np.ndarray, quantile: float) -> float:
    """SPM (= TV) of the decision "score above its ``quantile``": P(d | x1) − P(d | x0)."""
    decision = scores > np.quantile(scores, quantile)
    return float(decision[group].mean() - decision[~group].mean())


def score_metrics(data: pd.DataFrame, sfm, scores: np.ndarray, quantile: float, n_bins: int, n_boot: int, seed: int) -> dict:
    """SPM of the thresholded decision, iPPM and AUC of the scores.

    A score that separates the groups so well that a quantile bin holds only one group has no
    PPM gap there; the bins are then reduced one at a time and the number used is recorded.
    """
    group = (data[sfm.x] == sfm.x1).to_numpy()
    frame = data[[sfm.x, sfm.y]].copy()
    frame["score"] = scores
    for bins in range(n_bins, 1, -1):
        try:
            ippm = predictive_parity(frame, sfm, "score", n_bins=bins, n_boot=n_boot, seed=seed).ippm.estimate
            break
        except FairpathInputError:
            if bins == 2:
                raise
    return {"spm": decision_spm(scores, group, quantile), "ippm": float(ippm), "auc": float(roc_auc_score(data[sfm.y], scores)),
            "ippm_bins": bins}


def _constrained_oof(data: pd.DataFrame, sfm, bn, targets: dict, n_folds: int, seed: int) -> np.ndarray:
    """Out-of-fold scores of the constrained learner (λ chosen inside each training fold)."""
    scores = np.empty(len(data))
    folds = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    for train_rows, test_rows in folds.split(data, data[sfm.y]):
        learner = ConstrainedLearner(sfm, bn=bn, targets=targets, random_state=seed).fit(data.iloc[train_rows])
        scores[test_rows] = learner.predict_proba(data.iloc[test_rows])[:, 1]
    return scores


def _repeats_note(repeats: int) -> str:
    return f"sd over n = {repeats} repeats" if repeats >= 2 else "n = 1 repeat: no spread"


def _mean_spread(row, key: str) -> str:
    """``mean ± sd`` with at least 2 repeats; the mean alone otherwise (a spread of one run is undefined)."""
    mean, sd = getattr(row, f"{key}_mean"), getattr(row, f"{key}_std")
    return f"{mean:.3f} ± {sd:.3f}" if row.repeats >= 2 else f"{mean:.3f}"


_METRICS = {"spm": "SPM", "ippm": "iPPM", "auc": "AUC"}
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


@result_class
class FrontierResult(ResultMixin):
    """Per-run metrics (``runs``) and their mean and sd over the seeds per point (``per_point()``, in long
    form ``to_frame()``); ``plot()`` draws Figure 6."""

    runs: pd.DataFrame
    settings: dict

    def per_point(self) -> pd.DataFrame:
        """One row per point: kind, bn_set, ``<metric>_mean`` and ``<metric>_std`` over the seeds, repeats."""
        grouped = self.runs.groupby(["point", "kind", "bn_set"], sort=False)
        summary = grouped[list(_METRICS)].agg(["mean", "std"])
        summary.columns = [f"{m}_{s}" for m, s in summary.columns]
        summary["repeats"] = grouped.size()
        return summary.reset_index()

    def to_frame(self) -> pd.DataFrame:
        """One row per point (``subject``) and metric (``measure``: spm, ippm, auc): the mean over the seeds as
        ``estimate``, with no se or interval (the seeds' sd, column ``sd``, is a spread, not a standard
        error), then kind, bn_set, sd, repeats."""
        rows = [{"subject": row["point"], "measure": metric, "estimate": row[f"{metric}_mean"], "kind": row["kind"],
                 "bn_set": row["bn_set"], "sd": row[f"{metric}_std"], "repeats": row["repeats"]}
                for row in self.per_point().to_dict(orient="records") for metric in _METRICS]
        return result_frame(rows)

    def to_dict(self) -> dict:
        return {"settings": self.settings, "summary": self.per_point().to_dict(orient="records"), "runs": self.runs.to_dict(orient="records")}

    def _repr_fields(self) -> dict:
        return {"repeats": self.settings.get("repeats"), "quantile": self.settings.get("quantile")}

    def _save_files(self, out: Path) -> dict[str, Path]:
        """frontier.png (Figure 6)."""
        from fairpath.report import styled

        with styled():
            return {"figure": save_figure(self.plot(), out / "frontier.png", bbox_inches="tight")}

    def _write_report(self, path: Path) -> Path:
        from fairpath.repair._report import write_frontier_report

        return write_frontier_report(self, path)

    def summary(self) -> str:
        from fairpath.report import format_count

        lines = [f"FrontierResult ({format_count(self.settings.get('repeats'), 'seed')}, SPM at the {self.settings.get('quantile')} quantile)"]
        for row in self.per_point().itertuples():
            cells = "   ".join(f"{label} {_mean_spread(row, key)}" for key, label in _METRICS.items())
            lines.append(f"  {row.point:<16} {cells}   ({_repeats_note(row.repeats)})")
        return "\n".join(lines)

    def plot(self, ax=None):
        """Figure 6: SPM against iPPM (top) and AUC (bottom); a marker per point, error bars ±1 sd over the seeds.
        On ``ax`` (a sequence of two axes: top, bottom) when given."""
        from fairpath.report import SERIES_COLOURS, format_count, legend_below, subplots

        summary = self.per_point()
        fig, (top, bottom) = panel_axes(ax, 2, lambda: subplots(2, 1, width=7.5, height=7.5, sharex=True))
        for i, row in enumerate(summary.itertuples()):
            # Error bars only where a spread exists (≥ 2 repeats); the legend says over how many. Each point its own
            # colour and marker (8 colours, 10 markers: no two of the first 40 points look alike).
            spread = row.repeats >= 2
            style = dict(fmt=_MARKERS[i % len(_MARKERS)], color=SERIES_COLOURS[i % len(SERIES_COLOURS)], capsize=3, markersize=7,
                         label=f"{row.point} ({_repeats_note(row.repeats)})")
            top.errorbar(row.spm_mean, row.ippm_mean, xerr=row.spm_std if spread else None,
                         yerr=row.ippm_std if spread else None, **style)
            bottom.errorbar(row.spm_mean, row.auc_mean, xerr=row.spm_std if spread else None,
                            yerr=row.auc_std if spread else None, **style)
        repeats = int(summary["repeats"].max()) if len(summary) else 0
        spread = "error bars ±1 sd over the seeds" if repeats >= 2 else "no spread from one seed"
        top.set_title(f"SPM – iPPM – AUC frontier across BN sets\n(mean over {format_count(repeats, 'seed')}; {spread})")
        top.set_ylabel("iPPM (difference in E[Y], x1 − x0)")
        bottom.set_ylabel("AUC (0.5: chance, 1: perfect)")
        bottom.set_xlabel(f"SPM: difference in the share of positive decisions (x1 − x0), at the {self.settings.get('quantile')} quantile")
        fig.tight_layout()
        legend_below(bottom, handles=top.get_legend_handles_labels()[0], title="point (adapt: BN set by resolving variables)", ncol=2)
        fig.tight_layout()
        return fig


@validate_params({
    "data": Frame(), "repeats": Integer(1, MAX_REPEATS), "quantile": Probability(), "reference": Options(("x0", "x1")), "unconstrained": Boolean(),
    "constrained": Boolean(), "n_folds": Integer(2), "n_bins": Integer(2), "n_boot": Draws(), "seed": Seed(), "progress": Boolean(),
    "n_jobs": Jobs(), "workers": Optional(local_workers()), "scheduler": Optional(SchedulerAddress()),
})
def frontier(data: pd.DataFrame, sfm, bn_sets=("none", "Z", "W", "ZW"), *, repeats: int = 3, quantile: float = 0.68,
             reference: Reference = "x1", learner=None, engine: Engine | object = "forest", unconstrained: bool = True, constrained: bool = True, n_folds: int = 5,
             n_bins: int = 10, n_boot: int = 50, seed: int = 0, out_dir: str | Path | None = None, progress: bool = True,
             n_jobs: int = 1, scheduler=None, workers: int | None = None, provenance: dict | None = None) -> FrontierResult:
    """Compute the SPM–iPPM–AUC frontier; see the module docstring. ``out_dir`` makes the run resumable (its runs, not
    the result's files: ``result.save(out)``). ``provenance`` (:func:`fairpath.report.provenance`) goes into the
    settings; by default the call's.

    ``n_jobs`` threads, or a Dask ``scheduler`` (address or ``distributed.Client``) or a local cluster of
    ``workers`` processes, run the (point, seed) tasks; the numbers are those of a one-thread run.
    """
    bn_sets = parse_bn_sets(bn_sets)
    _check_arguments(data, sfm, n_folds)
    settings = {"bn_sets": bn_sets, "repeats": repeats, "quantile": quantile, "reference": reference, "engine": str(engine),
                "learner": "forest" if learner is None else type(learner).__name__, "unconstrained": unconstrained,
                "constrained": constrained, "n_folds": n_folds, "n_bins": n_bins, "n_boot": n_boot, "seed": seed, "n": len(data)}
    seeds = [child_seed(seed, REPEATS, repeat) for repeat in range(repeats)]
    tasks = [(f"adapt {b}", "adaptation", b, s) for s in seeds for b in bn_sets]
    if unconstrained:
        tasks += [("unconstrained", "unconstrained", "-", s) for s in seeds]
    if constrained:
        tasks += [(f"constrained {b}", "constrained", b, s) for s in seeds for b in bn_sets]
    with locked_folder(out_dir) if out_dir is not None else contextlib.nullcontext():
        runs = _computed_runs(data, sfm, tasks, settings, Path(out_dir) if out_dir is not None else None, progress,
                              n_jobs=n_jobs, scheduler=scheduler, workers=workers, reference=reference, learner=learner,
                              engine=engine, n_folds=n_folds, quantile=quantile, n_bins=n_bins, n_boot=n_boot)
    from fairpath.report import api_call, provenance as make_provenance  # Jinja2 with it: only when a result is made

    provenance = provenance or make_provenance(call=api_call("fairpath.repair.frontier", data, bn_sets=bn_sets, seed=seed), seed=seed)
    return FrontierResult(runs=runs, settings={**settings, "provenance": provenance})


def _computed_runs(data, sfm, tasks, settings, out_dir, progress, *, n_jobs, scheduler, workers, **options) -> pd.DataFrame:
    """Every task's run: those saved in ``out_dir/runs`` read back, the others computed (and saved as each finishes)."""
    where = {"n_jobs": n_jobs, "scheduler": scheduler, "workers": workers}
    if out_dir is None:
        folder = None
    else:
        check_output_dir(out_dir)
        folder = RunFolder(out_dir / "runs", kind="frontier", version=FRONTIER_VERSION, on_other_key="restart",
                           key=_resume_key(data, sfm, settings, options["learner"]), progress=progress)
    # The constrained points need the decomposition of their seed: computed once per seed, first (a step each).
    seeds = sorted({t[3] for t in tasks if t[1] == "constrained"})
    found = run_all(_targets, seeds, folder=folder, name=lambda seed: f"targets-seed{seed}", shared={"data": data, "sfm": sfm},
                    desc="frontier targets", progress=progress, **where)
    shared = {"data": data, "sfm": sfm, **options, "targets": dict(zip(seeds, found))}
    runs = _by_point(run_all(_run, tasks, folder=folder, name=_run_name, shared=shared, desc="frontier", progress=progress,
                             **where), tasks)
    if out_dir is not None:
        write_csv(runs, out_dir / "runs.csv", lineterminator="\n")
    return runs


def _by_point(rows: list[dict], tasks) -> pd.DataFrame:
    """The runs (in the order of the tasks, repeat by repeat) point by point, each point's repeats in order."""
    order = {t[0]: i for i, t in enumerate(tasks)}
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS)
    runs = runs.assign(_order=runs["point"].map(order)).sort_values("_order", kind="stable").drop(columns="_order")
    return runs.reset_index(drop=True)


def _run_name(task) -> str:
    """The step file of a (point, seed) run: ``adapt_ZW-seed123``."""
    point, _, _, seed = task
    return f"{point.replace(' ', '_')}-seed{seed}"


def _resume_key(data: pd.DataFrame, sfm, settings: dict, learner) -> dict:
    """What a run's numbers depend on: the used columns' content, the SFM, every setting, the learner's parameters."""
    parameters = learner.get_params() if hasattr(learner, "get_params") else learner
    return {"data": fingerprint(data[sfm.columns]), "sfm": sfm.to_dict(), "settings": settings, "learner": parameters}


def _check_arguments(data, sfm, n_folds) -> None:
    check_binary_sfm(sfm, "frontier")
    check_columns_present(data, sfm.columns)
    check_finite(data[sfm.columns], levels=[sfm.x])
    if set(pd.unique(data[sfm.y])) - {0, 1}:
        raise FairpathInputError(f"the frontier needs a binary 0/1 outcome (AUC, thresholded decisions); {sfm.y!r} is not")
    check_outcome_varies(data[sfm.y], sfm.y)
    check_fold_sizes(data, sfm, n_folds)


def _targets(seed: int, data, sfm) -> dict:
    """The constrained learner's targets: the seed's DE, IE and SE estimates."""
    result = decompose(data, sfm, seed=seed)
    return {p: result.estimate(m).estimate for p, m in MEASURE_OF_PATHWAY.items()}


def _run(task, data, sfm, reference, learner, engine, n_folds, quantile, n_bins, n_boot, targets) -> dict:
    """One (point, seed) row of runs.csv."""
    point, kind, bn_set, seed = task
    scores = _scores(data, sfm, kind, bn_set, seed, reference, learner, engine, n_folds, targets)
    return {"point": point, "kind": kind, "bn_set": bn_set, "seed": seed,
            **score_metrics(data, sfm, scores, quantile, n_bins, n_boot, seed)}


def _scores(data, sfm, kind, bn_set, seed, reference, learner, engine, n_folds, targets) -> np.ndarray:
    if kind == "adaptation":
        bn = BN_OF_RESOLVING[bn_set]
        predictor = FairPredictor(sfm, bn=bn, reference=reference, learner=learner, engine=engine, n_folds=n_folds, random_state=seed)
        return predictor.fit(data).oof_scores_
    if kind == "unconstrained":
        columns = [sfm.x, *sfm.z, *sfm.w]
        model = learner if learner is not None else default_forest(True, seed)
        return out_of_fold_scores(model, encode_features(data, columns), data[sfm.y].to_numpy(), True, n_folds, seed)
    return _constrained_oof(data, sfm, BN_OF_RESOLVING[bn_set], targets[seed], n_folds, seed)
