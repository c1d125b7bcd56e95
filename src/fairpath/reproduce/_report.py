"""What the reports of the paper's reproductions share: the estimates and Cookbook tables, the comparison with the paper
and the settings block. Each study writes its own report, beside it (``_compas``, ``_census``, ``_theorem1``)."""

from __future__ import annotations

import html

import pandas as pd

from fairpath.report import Section, format_ci, format_p, provenance_lines
from fairpath.reproduce._paper import grade_counts

_COMPARISON_COLUMNS = {"figure": "figure", "quantity": "quantity", "outcome": "outcome", "paper": "paper",
                       "fairpath": "fairpath (estimate, CI)", "difference": "difference", "within": "paper's criterion met",
                       "grade": "grade", "sentence": "judgement"}


def series_legend(meaning: dict[str, str]) -> str:
    """HTML list explaining each series of a figure (name: meaning), escaped."""
    return "<ul>" + "".join(f"<li><strong>{html.escape(k)}</strong>: {html.escape(v)}</li>" for k, v in meaning.items()) + "</ul>"


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


def cookbook_section(cookbook: pd.DataFrame, names: dict, explanation: str, level: float) -> Section:
    """The section of the Business Necessity Cookbook with BN = {SE}: ``explanation`` (HTML), then the tests' table."""
    section = Section("Business Necessity Cookbook, BN = {SE}", explanation, anchor="cookbook")
    return section.add_table(cookbook_table(cookbook, names), f"Cookbook tests ({level:.0%} CIs)")


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
    block["time"] = (f"{study.compute_seconds:.1f} s of computation over all steps; this run {study.seconds:.1f} s "
                     f"(steps computed in this run: {', '.join(study.steps_run) or 'none, all loaded'})")
    return block
