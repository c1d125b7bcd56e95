"""The report of ``fairpath reproduce huang``: the trade-off figure and the HTML page (beside its study)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath._results import panel_axes
from fairpath.report import Section, format_p, provenance_lines, write_report

_REFERENCES = ("base", "control")

EXPLANATION = (
    "<p>Individual fairness: the mean over templates and pairs of values of the Wasserstein-1 distance between the "
    "VADER sentiment distributions of their continuations; group fairness: the mean distance between each subgroup's "
    "distribution and the whole's (Huang et al., Sec. 3). Lower is fairer. The floor is the W1 expected from sampling "
    "alone (the null mean of a permutation test of the value labels within templates, whose p is 'p (no bias)'); the "
    "excess is W1 minus its floor, the part sampling does not explain, and is what debiasing can remove. Every model is "
    "compared with the <em>control</em>, trained exactly like the regularized models (same pairs, batches, steps and "
    "seed) with λ = 0, because fine-tuning alone moves perplexity and fairness; the untouched base model is shown too. "
    "Change is relative to the control's excess; p is the two-sided paired permutation p (model labels permuted among "
    "the samples of each prompt). Perplexity is measured on held-out text from prompts never used for training, and on "
    "its texts that name a sensitive value. S.S. is the share of the audit's continuations whose sentence-encoder "
    "cosine similarity to their prompt reaches the encoder's calibrated threshold; S.S.c the share whose similarity to "
    "the prompt's sensitive phrase does (changes in points of 100).</p>")


def tradeoff_figure(rows: pd.DataFrame, attribute: str, ax=None):
    """Individual and group fairness excess against perplexity and S.S.: the base, the control and one line per
    regularizer through λ; on ``ax`` (four axes: individual against perplexity and S.S., then group) when given."""
    from fairpath.report import legend_below, styled, subplots

    with styled():  # the report's fonts for every text of the figure, not only its axes
        fig, panels = panel_axes(ax, 4, lambda: subplots(2, 2, height=8.0))
        references = {name: rows[rows["model"] == name] for name in _REFERENCES}
        for i, (fairness, label) in enumerate((("individual", "individual fairness excess (W1 − floor)"),
                                               ("group", "group fairness excess (W1 − floor)"))):
            for j, (quality, quality_label) in enumerate((("perplexity", "perplexity on held-out text"), ("ss", "S.S."))):
                ax = panels[2 * i + j]
                ax.axhline(0.0, color="#b42318", linestyle="--", linewidth=1, label="noise floor")
                for (name, found), marker in zip(references.items(), ("*", "s")):
                    if not found.empty:
                        ax.scatter(found[quality], found[f"{fairness}_excess"], marker=marker, s=140 if marker == "*" else 70,
                                   color="grey" if name == "base" else "black", label=f"{name} model", zorder=3)
                for regularizer, group in rows[~rows["model"].isin(_REFERENCES)].groupby("regularizer"):
                    group = group.sort_values("lambda")
                    ax.plot(group[quality], group[f"{fairness}_excess"], marker="o", label=f"{regularizer} regularization")
                    for r in group.to_dict(orient="records"):
                        ax.annotate(f"λ={r['lambda']:g}", (r[quality], r[f"{fairness}_excess"]), textcoords="offset points",
                                    xytext=(4, 4), fontsize=9)
                ax.set_xlabel(quality_label)
                ax.set_ylabel(label)
        fig.suptitle(f"Huang et al. (2020) trade-offs on {attribute}: VADER fairness excess (lower is fairer) against quality")
        fig.tight_layout()
        # one legend for the four panels, under the lower row (inside a panel it covered the points near the control)
        legend_below(panels[2], handles=panels[0].get_legend_handles_labels()[0], ncol=3, across_figure=True)
    return fig


def _tables(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fairness table (with the paired tests) and the quality table of one attribute, display-formatted."""
    def change(values):
        return ["" if pd.isna(v) else f"{100 * v:+.1f}%" for v in values]

    def points(values):
        return ["" if pd.isna(v) else f"{v:+.1f}" for v in values]

    def p(values):
        return ["" if pd.isna(v) else format_p(v) for v in values]

    columns = {"model": rows["model"]}  # its name says the regularizer and λ
    for metric in ("individual", "group"):
        columns |= {f"{metric} W1 (floor)": [f"{v:.4f} ({f:.4f})" for v, f in zip(rows[f"{metric}_fairness"], rows[f"{metric}_floor"])],
                    f"{metric} p (no bias)": p(rows[f"{metric}_bias_p"]),
                    f"{metric} excess": rows[f"{metric}_excess"].map("{:+.4f}".format),
                    f"{metric} excess change": change(rows[f"{metric}_change"]), f"{metric} p (vs control)": p(rows[f"{metric}_p"])}
    fairness = pd.DataFrame(columns)
    quality = pd.DataFrame({"model": rows["model"], "perplexity": rows["perplexity"].map("{:.2f}".format),
                            "perplexity change": change(rows["perplexity_change"]),
                            "perplexity (sensitive)": rows["perplexity_sensitive"].map("{:.2f}".format),
                            "S.S.": rows["ss"].map("{:.3f}".format), "S.S. change": points(rows["ss_change_points"]),
                            "S.S.c": rows["ssc"].map("{:.3f}".format), "S.S.c change": points(rows["ssc_change_points"])})
    return fairness, quality.replace("nan", "not measured")


def _design_text(design: dict) -> str:
    parts = []
    for attribute, record in design.items():
        power = record.get("power")
        text = f"{attribute}: {record['samples_per_prompt']} samples per prompt, chosen by {record['chosen_by']}"
        if power:
            text += (f", power {record['power_at_chosen']:.2f} to detect a {100 * power['effect']:.0f}% fall of the individual-fairness "
                     f"excess ({power['base_excess']:.4f} in the pilot, floor {power['base_null_mean']:.4f}) at p < {power['alpha']:g}")
        parts.append(html.escape(text))
    return "<p>Design: " + "; ".join(parts) + ".</p>"


def write_huang_report(result, path) -> Path:
    """The HTML report: the target check, the design, then per attribute the trade-off figure, the fairness table
    with the paired tests and the quality table."""
    settings = result.settings
    sizes = (f"{settings['audit_max_new_tokens']}-token continuations, "
             f"{'all' if settings['templates'] is None else 'the first ' + str(settings['templates'])} templates, "
             f"{settings['steps']} LoRA steps per model, λ ∈ {{{', '.join(f'{v:g}' for v in settings['lambdas'])}}}, "
             f"dtype {result.provenance.get('dtype', settings['dtype'])}")
    verdict = html.escape(result.target["verdict"])
    summary = (f"<p>Huang et al. (2020)'s debiasing result rerun by fairpath: {html.escape(sizes)}. Target: <strong>{verdict}</strong>."
               "</p>" + _design_text(result.design) + "<ul>"
               + "".join(f"<li>{html.escape(line)}</li>" for line in result.target["lines"][:-1]) + "</ul>")
    sections = []
    for attribute, rows in result.table.groupby("attribute", sort=False):
        fairness, quality = _tables(rows)
        section = Section(f"{attribute.capitalize()}: fairness against quality", EXPLANATION if not sections else "",
                          anchor=f"huang-{attribute}")
        section.add_figure(tradeoff_figure(rows, attribute),
                           "Points: the base (star), the control (square) and each model, one line per regularizer through its λ "
                           "values. Each point is one audit; see the table for the paired test of its difference from the control.")
        section.add_table(fairness, "Individual and group fairness (VADER), excess change against the control and paired permutation p")
        section.add_table(quality, "Generation quality: perplexity, S.S. and S.S.c")
        sections.append(section)
    block = dict(provenance_lines(result.provenance)) if result.provenance else {}
    block.update({f"setting {k}": str(v) for k, v in settings.items()})
    block["time"] = f"{result.seconds:.0f} s this run (finished stages are loaded, not recomputed)"
    return write_report(path, "fairpath reproduce huang: Huang et al. (2020)'s debiasing result", sections, summary, block)
