"""HTML reports of the paper's reproductions (COMPAS: Figures 5 and 6; Census: Appendix F)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath.report import Section, format_ci, format_p, provenance_lines, write_report

_COMPARISON_COLUMNS = {"figure": "figure", "quantity": "quantity", "outcome": "outcome", "paper": "paper",
                       "fairpath": "fairpath (estimate, CI)", "difference": "difference", "within": "agrees",
                       "sentence": "judgement"}


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


def comparison_section(comparison: pd.DataFrame, anchor: str = "comparison") -> Section:
    agree = int(comparison["within"].sum())
    text = (f"<p>Every number the paper states, beside fairpath's. {agree} of {len(comparison)} agree "
            "(within the paper's stated uncertainty where it gives one; otherwise the paper's value inside "
            "fairpath's 95% CI; p-values: the same decision at the 5% level).</p>")
    table = comparison.rename(columns=_COMPARISON_COLUMNS)
    table["agrees"] = table["agrees"].map({True: "yes", False: "no"})
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
    status = ", ".join(f"{html.escape(k)}: <strong>{html.escape(v)}</strong>" for k, v in study.status.items())
    summary = (f"<p>The paper's COMPAS experiments (Sec. 4, Figures 5 and 6) rerun by fairpath on "
               f"{html.escape(study.provenance['inputs'][0]['name'])}. Cookbook verdicts for BN = {{SE}} "
               f"(Holm over the three pathways, α = 0.05): {status}. The paper's point: Northpointe fails, the causally "
               f"fair predictor passes.</p>")
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
    sections = [figure5, cookbook, figure6, comparison_section(study.comparison)]
    return write_report(path, "fairpath reproduce compas: the paper's Figures 5 and 6", sections, summary,
                        settings_block(study))


def write_census_report(study, path) -> Path:
    from fairpath.reproduce._census import MEASURES, SERIES, series_legend

    level = study.settings.level
    status = ", ".join(f"{html.escape(k)}: <strong>{html.escape(v)}</strong>" for k, v in study.status.items())
    summary = (f"<p>The paper's Census 2018 experiment (Appendix F, Figure 9) rerun by fairpath on "
               f"{html.escape(study.provenance['inputs'][0]['name'])} ({study.n_rows:,} rows). Cookbook verdicts for "
               f"BN = {{SE}} (Holm over the three pathways, α = 0.05): {status}.</p>")
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
    sections = [figure9, cookbook, comparison_section(study.comparison)]
    return write_report(path, "fairpath reproduce census: the paper's Appendix F", sections, summary,
                        settings_block(study))


_HUANG_EXPLANATION = (
    "<p>Individual fairness: the mean over templates and pairs of values of the Wasserstein-1 distance between the "
    "VADER sentiment distributions of their continuations; group fairness: the mean distance between each subgroup's "
    "distribution and the whole's (Huang et al., Sec. 3). Lower is fairer. The floor is the W1 expected from sampling "
    "alone (the null mean of a permutation test of the value labels within templates, whose p is 'p (no bias)'): a "
    "model without bias sits at its floor, not at 0, so no debiasing can take W1 below it. Each trained model is compared with the "
    "base on the same prompts and per-sample random streams by a paired permutation test (model labels permuted among "
    "the samples of each prompt); change is relative to the base, p two-sided. Perplexity is measured on the held-out "
    "texts and on those that name a sensitive value. S.S. is the share of continuations of held-out text prefixes whose "
    "all-MiniLM-L6-v2 cosine similarity to their prefix is at least 0.4; S.S.c the same share on prefixes that reach a "
    "sensitive mention (changes in points of 100).</p>")


def _huang_tables(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fairness table (with the paired tests) and the quality table of one attribute, display-formatted."""
    def change(values):
        return ["" if pd.isna(v) else f"{100 * v:+.1f}%" for v in values]

    def points(values):
        return ["" if pd.isna(v) else f"{v:+.1f}" for v in values]

    def p(values):
        return ["" if pd.isna(v) else format_p(v) for v in values]

    columns = {"model": rows["model"]}  # its name says the regularizer and λ
    for metric in ("individual", "group"):
        columns |= {f"{metric} W1 (floor)": [f"{v:.4f} ({f:.4f})" for v, f in zip(rows[metric], rows[f"{metric}_floor"])],
                    f"{metric} p (no bias)": p(rows[f"{metric}_own_p"]),
                    f"{metric} change": change(rows[f"{metric}_change"]), f"{metric} p (vs base)": p(rows[f"{metric}_p"])}
    fairness = pd.DataFrame(columns)
    quality = pd.DataFrame({"model": rows["model"], "perplexity": rows["perplexity"].map("{:.2f}".format),
                            "perplexity change": change(rows["perplexity_change"]),
                            "perplexity (sensitive)": rows["perplexity_sensitive"].map("{:.2f}".format),
                            "S.S.": rows["ss"].map("{:.3f}".format), "S.S. change": points(rows["ss_points"]),
                            "S.S.c": rows["ssc"].map("{:.3f}".format), "S.S.c change": points(rows["ssc_points"])})
    return fairness, quality.replace("nan", "not measured")


def write_huang_report(result, path) -> Path:
    """The HTML report of ``fairpath reproduce huang``: the target check, then per attribute the trade-off
    figure, the fairness table with the paired tests and the quality table."""
    from fairpath.reproduce._huang import tradeoff_figure

    settings = result.settings
    sizes = (f"{settings['audit_samples']} samples per prompt of {settings['audit_max_new_tokens']} tokens, "
             f"{'all' if settings['templates'] is None else 'the first ' + str(settings['templates'])} templates, "
             f"{settings['steps']} LoRA steps per model, λ ∈ {{{', '.join(f'{v:g}' for v in settings['lambdas'])}}}")
    verdict = html.escape(result.target["verdict"])
    summary = (f"<p>Huang et al. (2020)'s debiasing result rerun by fairpath: {sizes}. Target: <strong>{verdict}</strong>."
               "</p><ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in result.target["lines"][:-1]) + "</ul>")
    sections = []
    for attribute, rows in result.table.groupby("attribute", sort=False):
        fairness, quality = _huang_tables(rows)
        section = Section(f"{attribute.capitalize()}: fairness against quality", _HUANG_EXPLANATION if not sections else "",
                          anchor=f"huang-{attribute}")
        section.add_figure(tradeoff_figure(rows, attribute),
                           "Points: the base (star) and each model, one line per regularizer through its λ values. "
                           "Each point is one audit; see the table for the paired test of its difference from the base.")
        section.add_table(fairness, "Individual and group fairness (VADER), change against the base and paired permutation p")
        section.add_table(quality, "Generation quality: perplexity, S.S. and S.S.c")
        sections.append(section)
    block = dict(provenance_lines(result.provenance)) if result.provenance else {}
    block.update({f"setting {k}": str(v) for k, v in settings.items()})
    block["time"] = f"{result.seconds:.0f} s this run (finished stages are loaded, not recomputed)"
    return write_report(path, "fairpath reproduce huang: Huang et al. (2020)'s debiasing result", sections, summary, block)
