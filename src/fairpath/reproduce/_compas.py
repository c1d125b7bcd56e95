"""The paper's COMPAS experiments: Figure 5 (Y, Ŷ^NP, Ŷ^FP, Ŷ^SP, Ŷ^PP) and Figure 6 (the frontier).

Figure 5: the causal decomposition (Ctf-DE, Ctf-IE, Ctf-SE, SPM = TV) of the outcome and of four
predictors, and their iPPM. Ŷ^NP is Northpointe's decision (decile score > 4), Ŷ^SP and Ŷ^PP the
paper's baselines at Northpointe's selection rate, Ŷ^FP the causally fair predictor for BN = {SE}
(data adaptation keeps Z, removes the direct and indirect effects; a forest on the fair twins), measured
on its fair twins as the paper's code does. Figure 6: SPM, iPPM and AUC of the fair predictor for the
BN sets ∅, {SE}, {IE}, {IE, SE} (named by their resolving variables: none, Z, W, ZW), 10 seeds.
"""

from __future__ import annotations

import dataclasses
import html
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import save_figure, write_csv
from fairpath._results import ResultMixin, result_class, panel_axes, result_frame
from fairpath._validation import Boolean, Draws, Integer, Probability, Seed, validate_params
from fairpath.report import Section, write_report
from fairpath.reproduce._report import comparison_section, cookbook_section, estimates_table, series_legend, settings_block
from fairpath.reproduce._paper import (
    MATERIAL_DIFFERENCE,
    PaperSettings,
    PaperValue,
    audit_record,
    compare,
    decidable,
    estimate_lookup,
    grade,
    grade_counts,
    size_phrase,
    study_steps,
    subsample,
    verdict_phrase,
)

_PAIRED = ("The paper's code compares the two estimates as independent normals; fairpath's test is paired (the SE of "
           "the per-row difference of the pseudo-outcomes), so it is more powerful.")
# Figure 5 of the paper (Sec. 4); the ± is the paper's stated uncertainty.
FIGURE5_PAPER = (
    PaperValue("Fig. 5", "Ctf-DE", "y", -0.0008, 0.0259),
    PaperValue("Fig. 5", "Ctf-DE", "ŷ^NP", 0.06, 0.0296),
    PaperValue("Fig. 5", "Ctf-DE", "ŷ^FP", -0.0072, 0.0111),
    PaperValue("Fig. 5", "Ctf-IE", "y", -0.0506),
    PaperValue("Fig. 5", "Ctf-IE", "ŷ^NP", -0.0773),
    PaperValue("Fig. 5", "Ctf-IE", "ŷ^FP", -0.0025),
    PaperValue("Fig. 5", "Ctf-SE", "y", -0.0317),
    PaperValue("Fig. 5", "Ctf-SE", "ŷ^NP", -0.0375),
    PaperValue("Fig. 5", "Ctf-SE", "ŷ^FP", -0.0275),
    PaperValue("Fig. 5", "p of Ctf-SE(ŷ) = Ctf-SE(y)", "ŷ^NP", 0.30, kind="p", note=_PAIRED),
    PaperValue("Fig. 5", "p of Ctf-SE(ŷ) = Ctf-SE(y)", "ŷ^FP", 0.32, kind="p", note=_PAIRED),
)
MEASURES = {"ctfde": "Ctf-DE", "ctfie": "Ctf-IE", "ctfse": "Ctf-SE", "tv": "SPM (TV)", "ippm": "iPPM"}
# Series of Figure 5: the paper's symbol -> column in the study's estimates.
SERIES = {"y": "two_year_recid", "ŷ^NP": "northpointe", "ŷ^FP": "fair", "ŷ^SP": "sp", "ŷ^PP": "pp"}
SERIES_MEANING = {
    "y": "the observed outcome two_year_recid",
    "ŷ^NP": "Northpointe's COMPAS decision (decile score > 4)",
    "ŷ^FP": "the causally fair predictor for BN = {SE}: a forest trained on fair twins (Z kept, W adapted), measured on the twins",
    "ŷ^SP": "statistical-parity baseline: group-specific thresholds on an unconstrained score, both groups selected at Northpointe's rate",
    "ŷ^PP": "predictive-parity baseline: one threshold on the unconstrained score (X, Z, W), selecting at Northpointe's rate",
}


@validate_params({"level": Probability(), "n_boot": Draws(), "n_folds": Integer(2), "repeats": Integer(1), "seed": Seed()}, on="__post_init__")
@dataclasses.dataclass(frozen=True)
class CompasSettings(PaperSettings):
    """What the study runs. The defaults are the paper's; :meth:`quick` is a reduced version for tests."""

    rows: int | None = None  # a random subsample of this many rows (None: all 7,214)
    repeats: int = 10  # Figure 6 seeds per BN set
    bn_sets: tuple[str, ...] = ("none", "Z", "W", "ZW")
    constrained: bool = True  # Figure 6 also shows the constrained-learning predictors
    trees: int = 300  # the fair predictors' forests
    n_folds: int = 5  # cross-fitting folds of the decomposition
    n_boot: int = 200  # bootstrap draws of the PPM intervals
    learner: str | None = None  # nuisance learner of the decomposition (None: gbm)
    level: float = 0.95
    seed: int = 0

    @classmethod
    def quick(cls, seed: int = 0) -> CompasSettings:
        """A reduced study for a smoke test: 1,500 rows, 2 seeds of two BN sets, small forests, linear nuisances."""
        return cls(rows=1500, repeats=2, bn_sets=("none", "ZW"), constrained=False, trees=60, n_folds=2, n_boot=20,
                   learner="linear", seed=seed)

    def __post_init__(self):
        if self.rows is not None and self.rows < 500:
            raise FairpathInputError(f"rows must be at least 500 (or None for all rows), got {self.rows!r}")
        if self.repeats < 2:
            raise FairpathInputError(f"repeats must be at least 2 (Figure 6 shows a standard deviation), got {self.repeats!r}")

    def forest(self, seed: int):
        """The fair predictors' learner: None (fairpath's default forest) at 300 trees, else a forest of ``trees``."""
        if self.trees == 300:
            return None
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=self.trees, min_samples_leaf=10, max_features="sqrt", oob_score=True,
                                      n_jobs=1, random_state=seed)


def load_study_data(data: str | Path | None) -> tuple[pd.DataFrame, object, Path]:
    """COMPAS in the paper's preparation: from ``data`` (the prepared CSV or ProPublica's raw file) or the installed copy."""
    from fairpath.datasets import COMPAS_SFM, compas_from_raw, compas_raw_path

    path = compas_raw_path(data)
    frame = pd.read_csv(path)
    if "northpointe" not in frame.columns:
        frame = compas_from_raw(frame)
    missing = [c for c in [*COMPAS_SFM.columns, "northpointe"] if c not in frame.columns]
    if missing:
        raise FairpathInputError(f"COMPAS file {str(path)!r} lacks the column(s) {missing}; pass the paper's preparation "
                                 "or ProPublica's compas-scores-two-years.csv")
    return frame, COMPAS_SFM, Path(path)


def _figure5_predictors(data, sfm, settings: CompasSettings) -> dict:
    from fairpath.parity import audit, baseline_predictors

    baselines = baseline_predictors(data, sfm, selection_rate=data["northpointe"].mean(), seed=settings.seed)
    frame = data.join(baselines[["sp", "pp"]])
    return audit_record(audit(frame, sfm, ["northpointe", "sp", "pp"], "SE", **settings.audit_options()))


def _figure5_fair(data, sfm, settings: CompasSettings) -> dict:
    from fairpath.repair import FairPredictor

    predictor = FairPredictor(sfm, bn="SE", learner=settings.forest(settings.seed), random_state=settings.seed).fit(data[sfm.columns])
    record = audit_record(predictor.audit(column="fair", **settings.audit_options()))
    # Y measured on the twins is kept apart: Figure 5's y is measured on the data.
    record["estimates"] = [dict(r, subject="two_year_recid (twins)") if r["subject"] == sfm.y else r for r in record["estimates"]]
    return record


def _figure6(data, sfm, settings: CompasSettings, out: Path, progress: bool) -> dict:
    from fairpath.repair import frontier

    result = frontier(data[sfm.columns], sfm, settings.bn_sets, repeats=settings.repeats, learner=settings.forest(settings.seed),
                      constrained=settings.constrained, seed=settings.seed, out_dir=out / "frontier", progress=progress)
    return {"runs": result.runs.to_dict(orient="records"), "settings": result.settings}


def _mean_difference_ci(high: pd.Series, low: pd.Series, metric: str, level: float) -> tuple[float, float, float]:
    """The difference of two frontier points' means over seeds with its Student-t interval (``repeats`` − 1 df)."""
    from scipy import stats

    difference = high[f"{metric}_mean"] - low[f"{metric}_mean"]
    repeats = min(int(high["repeats"]), int(low["repeats"]))
    se = float(np.sqrt((high[f"{metric}_std"] ** 2 + low[f"{metric}_std"] ** 2) / repeats))
    half = float(stats.t.ppf(0.5 + level / 2, repeats - 1)) * se
    return difference, difference - half, difference + half


def _frontier_claims(summary: pd.DataFrame, level: float) -> list[dict]:
    """The trade-off Figure 6 shows: growing the BN set from ∅ to {Z, W} raises SPM and lowers iPPM. A claim is
    decided when the interval of the difference of the means is (see ``decidable``, around 0)."""
    points = summary.set_index("point")
    if not {"adapt none", "adapt ZW"} <= set(points.index):
        return []
    low, high = points.loc["adapt none"], points.loc["adapt ZW"]
    rows = []
    for metric, label, rises in (("spm", "SPM", True), ("ippm", "iPPM", False)):
        holds = (high[f"{metric}_mean"] > low[f"{metric}_mean"]) == rises
        direction = "larger" if rises else "smaller"
        difference, ci_low, ci_high = _mean_difference_ci(high, low, metric, level)
        decided = decidable(ci_low, ci_high, 0.0, MATERIAL_DIFFERENCE)
        interval = f"difference {difference:+.4f}, {level:.0%} CI [{ci_low:+.4f}, {ci_high:+.4f}] (t, {int(low['repeats'])} seeds)"
        rows.append({
            "figure": "Fig. 6", "quantity": label, "outcome": "BN = ∅ vs {Z, W}",
            "paper": f"{label} {direction} for BN = {{Z, W}} than for ∅",
            "fairpath": f"{low[f'{metric}_mean']:+.4f} ± {low[f'{metric}_std']:.4f} (∅) vs "
                        f"{high[f'{metric}_mean']:+.4f} ± {high[f'{metric}_std']:.4f} ({{Z, W}}), mean ± sd over seeds",
            "difference": f"{difference:+.4f}", "within": bool(holds), "grade": grade(bool(holds), decided),
            "sentence": f"fairpath's {label} is {'indeed' if holds else 'not'} {direction} for BN = {{Z, W}} than for ∅, "
                        f"{'as' if holds else 'unlike'} the paper's frontier ({interval})."
                        + ("" if decided else f" Inconclusive at this size: that interval is wider than ±{MATERIAL_DIFFERENCE} "
                                              "around 0 and reaches into it."),
        })
    return rows


@result_class
class CompasResult(ResultMixin):
    """Figure 5 and Figure 6 on COMPAS, with the paper's numbers beside fairpath's (``comparison``)."""

    estimates: pd.DataFrame
    cookbook: pd.DataFrame
    status: dict
    frontier_runs: pd.DataFrame
    frontier_settings: dict
    comparison: pd.DataFrame
    settings: CompasSettings
    provenance: dict
    seconds: float
    compute_seconds: float  # the steps' own times, also those computed in earlier runs
    steps_run: list[str]
    out: Path
    n_rows: int  # rows studied, of the rows_available in the input
    rows_available: int

    @property
    def size(self) -> str:
        """The size the comparison's grades hold at: rows, seeds, quick or not."""
        return size_phrase(self.n_rows, self.rows_available, self.settings == CompasSettings.quick(self.settings.seed),
                           self.settings.repeats)

    def headline(self) -> str:
        """What was found: the Cookbook verdicts with the p of their claims, then the comparison's grades and the size."""
        names = {column: name for name, column in SERIES.items()}
        verdicts = "; ".join(verdict_phrase(self.cookbook, p, s, names.get(p)) for p, s in self.status.items())
        return (f"COMPAS, BN = {{SE}} (Holm over three pathways, α = 0.05): {verdicts}. Beside the paper: "
                f"{grade_counts(self.comparison)} at {self.size}.")

    @property
    def frontier(self):
        from fairpath.repair import FrontierResult

        return FrontierResult(runs=self.frontier_runs, settings=self.frontier_settings)

    def to_frame(self) -> pd.DataFrame:
        """fairpath's estimates of every series (``subject``) and measure; the paper beside them: ``comparison``."""
        return result_frame(self.estimates)

    def to_dict(self) -> dict:
        return {"settings": self.settings.to_dict(), "provenance": self.provenance, "status": self.status,
                "headline": self.headline(), "rows": self.n_rows, "rows_available": self.rows_available,
                "comparison": self.comparison.to_dict(orient="records"), "estimates": self.estimates.to_dict(orient="records"),
                "cookbook": self.cookbook.to_dict(orient="records"), "frontier": self.frontier.per_point().to_dict(orient="records"),
                "seconds": self.seconds, "compute_seconds": self.compute_seconds, "steps_run": self.steps_run}

    def _repr_fields(self) -> dict:
        return {"rows": self.n_rows, "repeats": self.settings.repeats, "status": self.status,
                "beside_paper": grade_counts(self.comparison)}

    def summary(self) -> str:
        lines = [self.headline(), f"COMPAS reproduction (Fig. 5, Fig. 6), {self.seconds:.0f} s:"]
        lines += [f"  [{r.grade}] {r.figure} {r.quantity} {r.outcome}: {r.sentence}" for r in self.comparison.itertuples()]
        return "\n".join(lines)

    def plot_figure5(self, ax=None):
        """Figure 5: the measures of every series with their CIs, the paper's values beside them (on ``ax`` when given)."""
        return figure5(self.estimates, self.settings.level, ax)

    def plot(self, ax=None):
        """Figure 5 (:meth:`plot_figure5`); Figure 6 is ``frontier.plot()``."""
        return self.plot_figure5(ax)

    def _save_files(self, out: Path) -> dict[str, Path]:
        """figure5.png, figure6.png, comparison.csv (the paper beside fairpath) and figure6.csv (the frontier's points)."""
        from fairpath.report import styled

        with styled():
            paths = {"figure5": save_figure(self.plot_figure5(), out / "figure5.png", bbox_inches="tight"),
                     "figure6": save_figure(self.frontier.plot(), out / "figure6.png", bbox_inches="tight")}
        return {**paths, "comparison": write_csv(self.comparison, out / "comparison.csv"),
                "frontier": write_csv(self.frontier.per_point(), out / "figure6.csv")}

    def _write_report(self, path: Path) -> Path:
        return write_compas_report(self, path)


def figure5(estimates: pd.DataFrame, level: float = 0.95, ax=None):
    """Figure 5: grouped bars per measure, one bar per series with its CI; the paper's values as black diamonds."""
    paper = {(p.quantity, p.outcome): p.value for p in FIGURE5_PAPER if p.kind == "estimate"}
    return bar_figure(estimates, SERIES, MEASURES, "Figure 5: fairness measures on COMPAS", level, paper, ax)


def bar_figure(estimates: pd.DataFrame, series: dict, measures: dict, title: str, level: float = 0.95, paper: dict | None = None,
               ax=None):
    """Grouped bars: per measure, one bar per series (display name -> subject column) with its CI, on ``ax`` when given.

    ``paper`` maps (measure label, series name) to the value the paper states, drawn as a black diamond.
    """
    from fairpath.report import SERIES_COLOURS, subplots

    paper = paper or {}
    fig, (ax,) = panel_axes(ax, 1, lambda: subplots(height=4.6))
    names = list(series)
    width = 0.8 / len(names)
    for j, name in enumerate(names):
        xs, values, low, high, labels = [], [], [], [], []
        for i, measure in enumerate(measures):
            rows = estimates[(estimates["subject"] == series[name]) & (estimates["measure"] == measure)]
            if rows.empty:
                continue
            row = rows.iloc[0]
            xs.append(i + (j - (len(names) - 1) / 2) * width)
            values.append(100 * row["estimate"])
            low.append(100 * (row["estimate"] - row["ci_low"]))
            high.append(100 * (row["ci_high"] - row["estimate"]))
            labels.append(measures[measure])
        ax.bar(xs, values, width, color=SERIES_COLOURS[j % len(SERIES_COLOURS)], edgecolor="black", linewidth=0.5, label=name,
               yerr=[low, high], capsize=2, error_kw={"linewidth": 0.8})
        for x, label in zip(xs, labels):
            if (label, name) in paper:
                ax.plot(x, 100 * paper[(label, name)], "D", color="black", markersize=5, zorder=5)
    if paper:
        ax.plot([], [], "D", color="black", markersize=5, label="paper")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(measures)), list(measures.values()))
    ax.set_ylabel("value (%)")
    ax.set_title(f"{title}\n(bars: fairpath with {level:.0%} CIs" + ("; ◆: the paper)" if paper else ")"))
    ax.legend(ncol=len(names) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.08), frameon=False)
    fig.tight_layout()
    return fig


def _comparison(estimates: pd.DataFrame, cookbook: pd.DataFrame, frontier_summary: pd.DataFrame, level: float) -> pd.DataFrame:
    rows = []
    for paper in FIGURE5_PAPER:
        column = SERIES[paper.outcome]
        if paper.kind == "p":
            test = cookbook[(cookbook["predictor"] == column) & (cookbook["pathway"] == "SE")].iloc[0]
            rows.append(compare(paper, float(test["p_value"]), float(test["ci_low"]), float(test["ci_high"]), level))
            continue
        measure = next(m for m, label in MEASURES.items() if label == paper.quantity)
        row = estimate_lookup(estimates, column, measure)
        rows.append(compare(paper, row["estimate"], row["ci_low"], row["ci_high"], level))
    rows += _frontier_claims(frontier_summary, level)
    return pd.DataFrame(rows)


@validate_params({"quick": Boolean(), "seed": Seed(), "progress": Boolean()})
def reproduce_compas(out: str | Path = "fairpath-compas", *, data: str | Path | None = None, quick: bool = False,
                     settings: CompasSettings | None = None, seed: int = 0, progress: bool = True,
                     call: str | None = None) -> CompasResult:
    """Run (or resume) the COMPAS study and write its figures, tables, result.json, result.csv and report.html to ``out``.

    ``data``: the paper's preparation or ProPublica's raw file (default: the installed copy, see
    :func:`fairpath.datasets.load_compas`). Each step (Figure 5's audits, Figure 6's frontier, whose
    runs are kept one by one) is saved as it finishes; a rerun with the same settings resumes.
    """
    from fairpath.report import provenance as make_provenance

    settings = settings or (CompasSettings.quick(seed) if quick else CompasSettings(seed=seed))
    out = Path(out)
    start = time.perf_counter()
    frame, sfm, path = load_study_data(data)
    rows_available = len(frame)
    frame = subsample(frame, settings.rows, settings.seed)
    record = make_provenance(inputs=[path], call=call, seed=settings.seed)
    steps = study_steps(out, "compas", settings, record["inputs"][0]["sha256"], progress)
    predictors = steps.step("figure5_predictors", lambda: _figure5_predictors(frame, sfm, settings))
    fair = steps.step("figure5_fair", lambda: _figure5_fair(frame, sfm, settings))
    front = steps.step("figure6_frontier", lambda: _figure6(frame, sfm, settings, out, progress))
    estimates = pd.DataFrame(predictors["estimates"] + fair["estimates"])
    cookbook = pd.DataFrame(predictors["cookbook"] + fair["cookbook"])
    from fairpath.repair import FrontierResult

    runs = pd.DataFrame(front["runs"])
    comparison = _comparison(estimates, cookbook, FrontierResult(runs=runs, settings=front["settings"]).per_point(), settings.level)
    study = CompasResult(estimates=estimates, cookbook=cookbook, status={**predictors["status"], **fair["status"]}, frontier_runs=runs,
                         frontier_settings=front["settings"], comparison=comparison, settings=settings, provenance=record,
                         seconds=time.perf_counter() - start, compute_seconds=sum(steps.timings().values()), steps_run=steps.ran,
                         out=out, n_rows=len(frame), rows_available=rows_available)
    study.save(out)
    return study


def write_compas_report(study, path) -> Path:
    from fairpath.repair import frontier_section

    level = study.settings.level
    summary = (f"<p><strong>{html.escape(study.headline())}</strong></p>"
               f"<p>The paper's COMPAS experiments (Sec. 4, Figures 5 and 6) rerun by fairpath on "
               f"{html.escape(study.provenance['inputs'][0]['name'])}: {html.escape(study.size)}. The paper's point: "
               "Northpointe fails, the causally fair predictor passes.</p>")
    figure5 = Section(
        "Figure 5: decomposition of the outcome and of four predictors",
        "<p>TV (the SPM) = Ctf-DE − Ctf-IE − Ctf-SE. Series:</p>" + series_legend(SERIES_MEANING),
        anchor="figure5",
    ).add_figure(study.plot_figure5(), f"Bars: fairpath's estimates with {level:.0%} confidence intervals; black diamonds: "
                                       "the values the paper states.")
    figure5.add_table(estimates_table(study.estimates, MEASURES, SERIES),
                      f"Estimates with {level:.0%} CIs, in % (all measures: result.csv)")
    cookbook = cookbook_section(study.cookbook, SERIES, (
        "<p>Pathways outside BN must carry no effect (H0: Ctf-P(ŷ) = 0); SE is in BN, so Ŷ must carry the outcome's "
        "spurious effect (H0: Ctf-SE(ŷ) = Ctf-SE(y)). A verdict rejects at family-wise level 0.05 (Holm).</p>"
    ), level)
    figure6 = frontier_section(study.frontier, "Figure 6: the SPM – iPPM – AUC frontier across BN sets", anchor="figure6")
    sections = [figure5, cookbook, figure6, comparison_section(study.comparison, study.size)]
    return write_report(path, "fairpath reproduce compas: the paper's Figures 5 and 6", sections, summary,
                        settings_block(study))
