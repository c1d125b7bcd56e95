"""HTML reports of the paper's reproductions (COMPAS: Figures 5 and 6; Census: Appendix F; Theorem 1: Appendix A.2)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath.report import Section, format_ci, format_p, provenance_lines, write_report
from fairpath.reproduce._paper import grade_counts

_COMPARISON_COLUMNS = {"figure": "figure", "quantity": "quantity", "outcome": "outcome", "paper": "paper",
                       "fairpath": "fairpath (estimate, CI)", "difference": "difference", "within": "paper's criterion met",
                       "grade": "grade", "sentence": "judgement"}


def estimates_table(estimates: pd.DataFrame, measures: dict, outcomes: dict) -> pd.DataFrame:
    """Outcomes as rows (by their display names), measures as columns, cells "estimate [low, high]" in %."""
    rows = []
    for name, column in outcomes.items():
        row = {"outcome": name}
        for measure, label in measures.items():
            found = estimates[(estimates["subject"] == column) & (estimates["measure"] == measure)]
            row[label] = "" if found.empty else (
                f"{100 * found.iloc[0]['estimate']:+.1f}%\u00a0{format_ci(found.iloc[0]['ci_low'], found.iloc[0]['ci_high'], digits=3, percent=True)}")
        rows.append(row)
    return pd.DataFrame(rows)


def cookbook_table(cookbook: pd.DataFrame, names: dict) -> pd.DataFrame:
    """The Cookbook tests with display names, CIs on one line and p-values never printed as 0."""
    inverse = {column: name for name, column in names.items()}
    return pd.DataFrame({
        "predictor": cookbook["predictor"].map(lambda c: inverse.get(c, c)),
        "pathway": cookbook["pathway"],
        "tested quantity": cookbook["tested"],
        "estimate": [f"{100 * v:+.2f}%" for v in cookbook["estimate"]],
        "95% CI": [format_ci(lo, hi, percent=True) for lo, hi in zip(cookbook["ci_low"], cookbook["ci_high"])],
        "p": [format_p(p) for p in cookbook["p_value"]],
        "p (Holm)": [format_p(p) for p in cookbook["p_holm"]],
        "verdict": cookbook["verdict"],
    })


GRADING_RULE = (
    "A row is graded only where fairpath's interval can tell agreement from a material difference: where the interval is "
    "narrower than the window (half-width below it) or lies wholly outside it. The window is the paper's stated uncertainty "
    "around its value, else ±1 percentage point (around the paper's value for an estimate, around 0 for a p-value's tested "
    "quantity or a difference between frontier points). A wider interval that reaches into the window holds both agreement "
    "and a material difference: that row is <strong>inconclusive at this size</strong>, counted apart, and more rows or "
    "seeds would decide it. A graded row agrees when it meets the paper's criterion: within the paper's stated uncertainty "
    "where it gives one, otherwise the paper's value inside fairpath's CI; p-values: the same decision at the 5% level.")


def comparison_section(comparison: pd.DataFrame, size: str, anchor: str = "comparison") -> Section:
    text = (f"<p>Every number the paper states, beside fairpath's: <strong>{grade_counts(comparison)}</strong> at "
            f"{html.escape(size)}.</p><p>{GRADING_RULE}</p>")
    table = comparison.rename(columns=_COMPARISON_COLUMNS)
    table["paper's criterion met"] = table["paper's criterion met"].map({True: "yes", False: "no"})
    style = f"<style>#{anchor} table.table td {{ text-align: left; vertical-align: top; }}</style>"
    return Section("fairpath beside the paper", style + text, anchor=anchor).add_table(table, "Comparison with the paper (comparison.csv)")


def settings_block(study) -> dict:
    block = dict(provenance_lines(study.provenance))
    block.update({f"setting {k}": str(v) for k, v in study.settings.to_dict().items()})
    block["time"] = (f"{study.compute_seconds:.1f} s of computation over all steps; this run {study.wall_time_s:.1f} s "
                     f"(steps computed in this run: {', '.join(study.steps_run) or 'none, all loaded'})")
    return block


def write_compas_report(study, path) -> Path:
    from fairpath.repair import frontier_section
    from fairpath.reproduce._compas import MEASURES, SERIES, series_legend

    level = study.settings.level
    summary = (f"<p><strong>{html.escape(study.headline())}</strong></p>"
               f"<p>The paper's COMPAS experiments (Sec. 4, Figures 5 and 6) rerun by fairpath on "
               f"{html.escape(study.provenance['inputs'][0]['name'])}: {html.escape(study.size)}. The paper's point: "
               "Northpointe fails, the causally fair predictor passes.</p>")
    figure5 = Section(
        "Figure 5: decomposition of the outcome and of four predictors",
        "<p>TV (the SPM) = Ctf-DE − Ctf-IE − Ctf-SE. Series:</p>" + series_legend(),
        anchor="figure5",
    ).add_figure(study.plot_figure5(), f"Bars: fairpath's estimates with {level:.0%} confidence intervals; black diamonds: "
                                       "the values the paper states.")
    figure5.add_table(estimates_table(study.estimates, MEASURES, SERIES),
                      f"Estimates with {level:.0%} CIs, in % (all measures: estimates.csv)")
    cookbook = Section(
        "Business Necessity Cookbook, BN = {SE}",
        "<p>Pathways outside BN must carry no effect (H0: Ctf-P(ŷ) = 0); SE is in BN, so Ŷ must carry the outcome's "
        "spurious effect (H0: Ctf-SE(ŷ) = Ctf-SE(y)). A verdict rejects at family-wise level 0.05 (Holm).</p>",
        anchor="cookbook",
    ).add_table(cookbook_table(study.cookbook, SERIES), f"Cookbook tests ({level:.0%} CIs)")
    figure6 = frontier_section(study.frontier, "Figure 6: the SPM – iPPM – AUC frontier across BN sets", anchor="figure6")
    sections = [figure5, cookbook, figure6, comparison_section(study.comparison, study.size)]
    return write_report(path, "fairpath reproduce compas: the paper's Figures 5 and 6", sections, summary,
                        settings_block(study))


def write_census_report(study, path) -> Path:
    from fairpath.reproduce._census import MEASURES, SERIES, series_legend

    level = study.settings.level
    summary = (f"<p><strong>{html.escape(study.headline())}</strong></p>"
               f"<p>The paper's Census 2018 experiment (Appendix F, Figure 9) rerun by fairpath on "
               f"{html.escape(study.provenance['inputs'][0]['name'])}: {html.escape(study.size)}.</p>")
    figure9 = Section(
        "Figure 9: decomposition of the outcome, the boosted predictor and the fair predictor",
        f"<p>Y = 1 when the salary exceeds {study.outcome_summary['threshold']:,.0f} $, the paper's median "
        f"({100 * study.outcome_summary['share_above']:.1f}% of the rows; the median salary in this file is "
        f"{study.outcome_summary['salary_median']:,.0f} $). Series:</p>" + series_legend(),
        anchor="figure9",
    ).add_figure(study.plot(), f"Bars: fairpath's estimates with {level:.0%} confidence intervals.")
    figure9.add_table(estimates_table(study.estimates, MEASURES, SERIES), f"Estimates with {level:.0%} CIs, in %")
    cookbook = Section(
        "Business Necessity Cookbook, BN = {SE}",
        "<p>Z (age, race, hispanic origin, citizenship, nativity, economic region) is in the BN set: the spurious "
        "effect is permitted and must equal the outcome's; the direct and indirect effects must vanish.</p>",
        anchor="cookbook",
    ).add_table(cookbook_table(study.cookbook, SERIES), f"Cookbook tests ({level:.0%} CIs)")
    sections = [figure9, cookbook, comparison_section(study.comparison, study.size)]
    return write_report(path, "fairpath reproduce census: the paper's Appendix F", sections, summary,
                        settings_block(study))


_THEOREM1_CLAIMS = {
    "ippm_matches_bayes_predictor": "Theorem 1: as Ŷ approaches E[Y | X, W], its iPPM approaches that of E[Y | X, W] (Figure 7)",
    "terms_away_from_zero": "iTerm I and iTerm II stay away from 0 while they cancel (Figure 7)",
    "terms_cancel": "iTerm I + iTerm II = iPPM is near 0 at the largest n (Figure 7)",
    "per_bin_term1": "Term I from causal data adaptation matches the SCM's true Term I bin by bin (Figure 8)",
    "linear_corollary1": "Corollary 1: on a linear SCM Term I = α_XW·α_WY + α_XY and Term II its negative",
}


def write_theorem1_report(study, path) -> Path:
    """The HTML report of ``fairpath reproduce theorem1``: the headline, the paper's claims checked (graded only where
    the study's size can decide them), Figures 7 and 8 with their tables, and Corollary 1's linear check."""
    from fairpath.reproduce._theorem1 import check_mark

    checks = pd.DataFrame([{"check": name, "the paper's claim": _THEOREM1_CLAIMS[name], "fairpath": check["detail"],
                            "grade": check_mark(check), "why not graded": check.get("reason", "")}
                           for name, check in study.checks_.items()])
    summary = (f"<p><strong>{html.escape(study.headline())}</strong></p><p>The paper's verification of the predictive parity "
               "decomposition (Appendix A.2, Figures 7 and 8) and of Corollary 1 rerun by fairpath. A check is graded only "
               "where its interval can decide it: narrower than the check's window, or wholly outside it (the rule of every "
               "reproduction); otherwise it is <em>not graded at this size</em> and says why.</p>")
    claims = Section("The paper's claims, checked", "", anchor="checks").add_table(checks, "Acceptance checks (summary.json)")
    settings = study.settings_
    figure7 = Section("Figure 7: iTerm I, iTerm II and iPPM against n",
                      "<p>Means over repetitions with ±1 sd bands; the zoom shows the iPPM beside that of the exact E[Y | X, W] with "
                      "the same bins, which is not 0 because the open-ended extreme bins hold x0 and x1 rows with different Ŷ.</p>",
                      anchor="figure7").add_figure(study.plot_figure7(), f"{settings.n_reps} repetitions per n (figure7.csv).")
    figure7.add_table(study.figure7_, "Per quantity and n: mean, sd and the reference means over repetitions")
    figure8 = Section("Figure 8: Term I per bin", "", anchor="figure8").add_figure(
        study.plot_figure8(), f"n = {settings.per_bin_n}, {settings.per_bin_reps} repetitions (figure8.csv).")
    figure8.add_table(study.figure8_, "Per bin: the adapted Term I (mean, sd) and the true Term I")
    linear = Section("Corollary 1 on a linear SCM", f"<p>{html.escape(study.linear_.summary())}</p>", anchor="linear").add_figure(
        study.linear_.plot(), "Term I, Term II and PPM per bin; dashed: the closed forms.")
    block = {f"setting {k}": str(v) for k, v in settings.to_dict().items()}
    block["time"] = (f"{study.wall_time_s_:.1f} s this run for {study.n_tasks_run_} new tasks; "
                     f"{study.task_seconds_:.1f} s of task time in all (finished tasks are loaded, not recomputed)")
    return write_report(path, "fairpath reproduce theorem1: the paper's Appendix A.2", [claims, figure7, figure8, linear],
                        summary, block)
