"""HTML reports of ``fairpath repair`` (fair twins and a fair predictor) and ``fairpath frontier`` (Figure 6)."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._stats import p_clause
from fairpath.report import Section, compact_digits, format_ci, format_count, provenance_lines, write_report

_FRONTIER_TEXT = (
    "<p>Each point is a predictor: <em>adapt B</em> is a forest trained on fair twins for the BN set whose resolving "
    "variables are B (none = BN ∅, Z = {{SE}}, W = {{IE}}, ZW = {{IE, SE}}); <em>unconstrained</em> uses X, Z and W; "
    "<em>constrained B</em> is the constrained-learning predictor of the same BN set. SPM is the difference in the share "
    "of positive decisions (score above its {quantile} quantile) between the groups; iPPM the mean over score bins of "
    "E[Y | x1, bin] − E[Y | x0, bin]; AUC the area under the ROC curve of the out-of-fold scores. Marker: mean over "
    "{seeds}; {spread}</p>"
)


def frontier_table(result) -> pd.DataFrame:
    summary = result.per_point()

    def cell(mean: str, sd: str) -> list[str]:
        # one seed has no spread: its mean alone, never "± 0.0000"
        return [f"{a:+.4f} ± {b:.4f}" if n >= 2 else f"{a:+.4f}" for a, b, n in zip(summary[mean], summary[sd], summary["repeats"])]

    return pd.DataFrame({"point": summary["point"], "SPM (mean ± sd)": cell("spm_mean", "spm_std"),
                         "iPPM (mean ± sd)": cell("ippm_mean", "ippm_std"), "AUC (mean ± sd)": cell("auc_mean", "auc_std"),
                         "seeds": summary["repeats"]})


def frontier_section(result, title: str = "SPM – iPPM – AUC frontier across BN sets", anchor: str = "frontier") -> Section:
    summary = result.per_point()
    repeats = int(summary["repeats"].max())
    spread = ("error bars and ±: one standard deviation over the seeds (the seed-to-seed spread, not a confidence interval)."
              if repeats >= 2 else "one seed: no spread, so no error bars.")
    text = _FRONTIER_TEXT.format(quantile=result.settings.get("quantile"), seeds=format_count(repeats, "seed"), spread=spread)
    section = Section(title, text, anchor=anchor)
    section.add_figure(result.plot(), "Top: iPPM against SPM; bottom: AUC against SPM. " + spread[0].upper() + spread[1:])
    caption = "Mean ± sd over the seeds" if repeats >= 2 else "Means of one seed"
    return section.add_table(frontier_table(result), f"{caption} (per-run values: runs.csv)")


def write_frontier_report(result, path) -> Path:
    summary = ("<p>The trade-off between statistical parity (SPM), predictive parity (iPPM) and accuracy (AUC) as the "
               "business-necessity set grows from ∅ to {IE, SE} (the paper's Figure 6).</p>")
    settings = {**provenance_lines(result.settings.get("provenance", {})),
                **{f"setting {k}": str(v) for k, v in result.settings.items() if k != "provenance"}}
    return write_report(path, "fairpath frontier", [frontier_section(result)], summary, settings)


def _group_means(frame: pd.DataFrame, sfm, column: str) -> tuple[float, float]:
    values = pd.to_numeric(frame[column], errors="coerce")
    group = frame[sfm.x] == sfm.x1
    return float(values[~group].mean()), float(values[group].mean())


def adaptation_table(data: pd.DataFrame, adapted: pd.DataFrame, sfm, adapter) -> pd.DataFrame:
    """Per adapted column: group means (or the share of the most common category) in the data and in the twins."""
    rows = []
    for column in adapter.order_:
        numeric = pd.api.types.is_numeric_dtype(data[column]) and not pd.api.types.is_bool_dtype(data[column])
        if numeric:
            before, after = data, adapted
            what = "mean"
        else:
            top = data[column].mode().iloc[0]
            before, after = data.assign(**{column: (data[column] == top).astype(float)}), adapted.assign(
                **{column: (adapted[column] == top).astype(float)})
            what = f"share of {top!r}"
        (b0, b1), (a0, a1) = _group_means(before, sfm, column), _group_means(after, sfm, column)
        rows.append({"column": column, "statistic": what, f"data: {sfm.x0}": b0, f"data: {sfm.x1}": b1,
                     f"twins: {sfm.x0}": a0, f"twins: {sfm.x1}": a1, "gap in data": b1 - b0, "gap in twins": a1 - a0})
    return pd.DataFrame(rows)


def scores_figure(scores: pd.DataFrame, sfm):
    """Distribution of the fair predictor's out-of-fold scores in each group."""
    from fairpath.report import HALF_WIDTH, SERIES_COLOURS, legend_below, subplots

    fig, ax = subplots(width=HALF_WIDTH, height=3.6)
    bins = np.linspace(scores["fair_score"].min(), scores["fair_score"].max(), 31)
    for colour, level in zip(SERIES_COLOURS, (sfm.x0, sfm.x1)):
        values = scores.loc[scores[sfm.x] == level, "fair_score"]
        ax.hist(values, bins=bins, density=True, alpha=0.55, color=colour, label=f"{sfm.x} = {level} (n = {len(values):,})")
    ax.set_xlabel("out-of-fold score of the fair predictor")
    ax.set_ylabel("density")
    ax.set_title("Fair predictor's scores by group")
    legend_below(ax, ncol=2)
    fig.tight_layout()
    return fig


def accuracy_table(result) -> pd.DataFrame:
    """Every predictor's accuracy on the held-out rows with its interval, one column per measure."""
    accuracy = result.accuracy_table.set_index(["predictor", "measure"])
    level = accuracy["level"].iloc[0]
    table = pd.DataFrame({"predictor": list(result.parity)})
    for measure, label in result.accuracy_measures:
        rows = accuracy.xs(measure, level="measure").loc[table["predictor"]]
        digits = compact_digits(rows["ci_high"], significant=4)  # AUC to 4 decimals, an RMSE in dollars to the dollar
        table[f"{label} ({level:.0%} CI)"] = [f"{estimate:.{digits}f}\u00a0[{low:.{digits}f},\u00a0{high:.{digits}f}]"
                                              for estimate, low, high in zip(rows["estimate"], rows["ci_low"], rows["ci_high"])]
    return table


def carry_over_table(result) -> pd.DataFrame:
    """The fair predictor's Cookbook tests in sample (the fitting rows' twins), each beside the same test on the held-out rows' twins."""
    rows = []
    for data, audit in (("in sample", result.in_sample_audit), ("held out", result.audit)):
        for test in audit.cookbook.tests.itertuples():
            rows.append({"pathway": test.pathway, "tested": test.tested, "rows": data, "estimate": f"{test.estimate:+.4f}",
                         f"{test.level:.0%} CI": format_ci(test.ci_low, test.ci_high), "p of the verdict": p_clause(test.verdict_p_name, test.verdict_p),
                         "verdict": test.verdict})
    order = {pathway: position for position, pathway in enumerate(dict.fromkeys(row["pathway"] for row in rows))}
    return pd.DataFrame(sorted(rows, key=lambda row: order[row["pathway"]]))


def write_repair_report(result, path) -> Path:
    """The page of :func:`fairpath.repair.repair`: the verdict first, then the fair twins, the predictor and
    the constrained-learning path when computed."""
    predictor, sfm, summary = result.predictor, result.sfm, result.to_dict()
    adapter = predictor.adapter_
    resolving = ", ".join(adapter.resolving_) or "none"
    verdict = Section("Verdict", "".join(f"<p>{html.escape(line)}</p>" for line in result.verdict_lines()), anchor="verdict")
    verdict.add_figure(result.plot(), "Held-out rows: iPPM of every predictor (left) and its accuracy (right), each with its "
                       "interval; the accuracy axis is zoomed to the intervals.")
    verdict.add_table(carry_over_table(result), "The fair predictor's Cookbook tests in sample (the fair twins of the rows it was "
                      "fitted on, out-of-fold scores) and on the held-out rows' fair twins, pathway by pathway")
    verdict.add_table(accuracy_table(result), f"Accuracy of every predictor on the {len(result.held_out):,} held-out rows "
                      "(each fitted on the other rows; held_out.csv holds their scores), with percentile intervals from "
                      "bootstrap draws of these rows")
    intro = (f"<p>Causal data adaptation for BN set resolving variables <strong>{html.escape(resolving)}</strong>: every "
             f"row of group {html.escape(sfm.x)} = {html.escape(str(adapter.comparison_))} gets a fair twin that follows the "
             f"mechanisms of group {html.escape(sfm.x)} = {html.escape(str(adapter.baseline))}, with the resolving variables (and what only they cause) kept. "
             f"Adapted, in order: {html.escape(', '.join(adapter.order_))}. The outcome's group gap (TV of "
             f"{html.escape(sfm.y)}) is {summary['tv_outcome']:+.4f} in the data and {summary['tv_adapted_outcome']:+.4f} "
             "among the twins (all rows).</p>")
    twins = Section("Fair twins", intro, anchor="twins").add_table(
        adaptation_table(adapter.train_, adapter.adapted_train_, sfm, adapter),
        "Group statistics in the data and among the twins (twins: adapted_train.csv, fair_twins.csv)")
    scores = result.tables["scores.csv"]
    fair = Section(
        "Fair predictor",
        f"<p>A learner trained on the twins' covariates (never on {html.escape(sfm.x)}); every row's score comes from a "
        "model that did not see it (out-of-bag or K-fold). Scores: scores.csv.</p>",
        anchor="fair-predictor",
    ).add_figure(scores_figure(scores, sfm), "Histogram of the out-of-fold scores in each group (densities).")
    sections = [verdict, twins, fair]
    if result.constrained is not None:
        sections.append(Section("Constrained learning", "<p>The λ path of the constrained-learning predictor.</p>",
                                anchor="constrained").add_figure(result.constrained.path_result().plot(), "Constrained-learning path."))
    return write_report(path, "fairpath repair", sections, "", provenance_lines(result.settings["provenance"]))
