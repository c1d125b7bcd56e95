"""The report of an LLM decision audit: the verdict in words, the waterfall from the world's disparity to the model's,
the pathway table, the exact interventions, the prompt and the model's identity."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._results import panel_axes
from fairpath._stats import format_p
from fairpath._vocabulary import LABELS
from fairpath.report import Section, format_ci, legend_below, provenance_lines, subplots, write_report

# TV = Ctf-DE − Ctf-IE − Ctf-SE: each pathway's difference moves TV by its sign here.
_SIGNS = {"ctfde": 1.0, "ctfie": -1.0, "ctfse": -1.0}
_UP, _TOTAL = "#d64545", "#486581"
# A pathway's bar says what the model does there: more disparity in red, less in green, no change shown in grey.
_READING_COLOURS = {"amplifies": _UP, "adds a disparity": _UP, "reverses": _UP, "dampens": "#3ebd93", "no change shown": "#9aa5b1"}
_SHORT = {"llm_mentioned": "mentioned", "llm_withheld": "withheld"}


def waterfall(result, ax=None, *, contrast: str | None = None, predictor: str | None = None):
    """From the world's TV (Y) to the model's (ŷ): each pathway's difference Ctf(ŷ) − Ctf(y), signed as it enters
    TV = Ctf-DE − Ctf-IE − Ctf-SE, with its interval as a whisker."""
    contrast = contrast or result.audit.decomposition.contrasts[0]
    predictor = predictor or result.predictors[0]
    rows = result.pathways[(result.pathways["contrast"] == contrast) & (result.pathways["predictor"] == predictor)].set_index("measure")
    fig, (ax,) = panel_axes(ax, 1, lambda: subplots(width=8.0, height=4.2))
    tv = rows.loc["tv"]
    level = tv["level"]
    ax.bar(0, tv["world_estimate"], color=_TOTAL, width=0.6)
    _whisker(ax, 0, tv["world_estimate"], tv["world_ci_low"], tv["world_ci_high"])
    running = tv["world_estimate"]
    labels = [f"world's TV\n({result.audit.sfm.y})"]
    for position, measure in enumerate(("ctfde", "ctfie", "ctfse"), start=1):
        row = rows.loc[measure]
        step = _SIGNS[measure] * row["estimate"]
        low, high = sorted((_SIGNS[measure] * row["ci_low"], _SIGNS[measure] * row["ci_high"]))
        ax.bar(position, step, bottom=running, color=_READING_COLOURS[row["reading"]], width=0.6)
        _whisker(ax, position, running + step, running + low, running + high)
        sign = "+" if _SIGNS[measure] > 0 else "−"
        labels.append(f"{sign} Δ{LABELS[measure]}\n{row['reading']}")
        running += step
    ax.bar(4, tv["model_estimate"], color=_TOTAL, width=0.6)
    _whisker(ax, 4, tv["model_estimate"], tv["model_ci_low"], tv["model_ci_high"])
    labels.append(f"model's TV\n({predictor})")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(5), labels)
    ax.set_ylabel(f"disparity, {contrast_title(result, contrast)}")
    ax.set_title(f"From the world's disparity to the model's ({level:.0%} intervals)")
    fig.tight_layout()
    return fig


def contrast_title(result, contrast: str) -> str:
    """``x1 against x0`` for a contrast's name."""
    part = result.audit.decomposition.decompositions[contrast]
    return f"{part.sfm.x1} against {part.sfm.x0}"


def _whisker(ax, x: float, centre: float, low: float, high: float) -> None:
    ax.errorbar([x], [centre], yerr=[[centre - low], [high - centre]], color="black", capsize=4, linewidth=1.2)


def exact_figure(result):
    """Per contrast: the exact direct effect of X's mention (rows of x0) beside the estimated Ctf-DE, and the mention's
    share of the model's TV (mentioned − withheld)."""
    exact, mention = result.exact, result.mention
    panels = 1 + bool(len(mention))
    fig, axes = subplots(1, panels, width=9.0 if panels == 2 else 6.0, height=2.2 + 0.6 * len(exact))
    axes = list(np.ravel(axes))
    names = list(exact["contrast"])
    positions = np.arange(len(names))
    ax = axes[0]
    for offset, prefix, label, colour in ((-0.15, "", "exact (the model asked again)", _TOTAL), (0.15, "estimated_", "estimated Ctf-DE", _UP)):
        centre = exact[f"{prefix}estimate"].to_numpy()
        ax.errorbar(centre, positions + offset, xerr=[centre - exact[f"{prefix}ci_low"], exact[f"{prefix}ci_high"] - centre], fmt="o",
                    color=colour, capsize=4, label=label)
    _contrast_axis(ax, positions, names)
    ax.set_xlabel("direct effect of X on the score")
    ax.set_title("Direct effect: exact and estimated")
    legend_below(ax, across_figure=True, ncol=2)
    if len(mention):
        ax = axes[1]
        tv = mention[mention["measure"] == "tv"]
        centre = tv["estimate"].to_numpy()
        ax.errorbar(centre, positions, xerr=[centre - tv["ci_low"], tv["ci_high"] - centre], fmt="o", color=_TOTAL, capsize=4)
        _contrast_axis(ax, positions, names)
        ax.set_xlabel("TV(mentioned) − TV(withheld)")
        ax.set_title("Disparity through the mention")
    fig.tight_layout()
    return fig


def _contrast_axis(ax, positions, names) -> None:
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(positions, names)
    ax.set_ylim(len(names) - 0.5, -0.5)  # the first contrast on top, each row half a unit from the edges


def _pathway_table(result, contrast: str) -> pd.DataFrame:
    frame = result.pathways[result.pathways["contrast"] == contrast]
    return pd.DataFrame({
        "X in the prompt": frame["predictor"].map(_SHORT), "measure": frame["measure"].map(LABELS),
        "world (Y)": [_interval(r.world_estimate, r.world_ci_low, r.world_ci_high) for r in frame.itertuples()],
        "model (ŷ)": [_interval(r.model_estimate, r.model_ci_low, r.model_ci_high) for r in frame.itertuples()],
        "ŷ − Y": [_interval(r.estimate, r.ci_low, r.ci_high) for r in frame.itertuples()],
        "Holm p": frame["p_holm"].map(format_p), "reading": frame["reading"]})


def _contrast_column(result, table: pd.DataFrame) -> pd.DataFrame:
    """Without the contrast column when there is one contrast (the section's title names it)."""
    return table.drop(columns="contrast") if result.audit.single else table


def _interval(estimate: float, low: float, high: float) -> str:
    return f"{estimate:+.3f} {format_ci(low, high, digits=3)}"


def _exact_table(result) -> pd.DataFrame:
    frame = result.exact
    return _contrast_column(result, pd.DataFrame({
        "contrast": frame["contrast"], "rows of x0": frame["rows"], "left out (no answer)": frame["rows_unanswered"],
        "rows whose score moves": frame["rows_changed"],
        "exact direct effect": [_interval(r.estimate, r.ci_low, r.ci_high) for r in frame.itertuples()],
        "estimated Ctf-DE": [_interval(r.estimated_estimate, r.estimated_ci_low, r.estimated_ci_high) for r in frame.itertuples()],
        "estimated − exact (in SE)": frame["gap_in_se"].map(lambda v: f"{v:+.2f}")}))


def _mention_table(result) -> pd.DataFrame:
    frame = result.mention
    return _contrast_column(result, pd.DataFrame({
        "contrast": frame["contrast"], "measure": frame["measure"].map(LABELS),
        "mentioned − withheld": [_interval(r.estimate, r.ci_low, r.ci_high) for r in frame.itertuples()], "p": frame["p_value"].map(format_p)}))


def _prompt_section(result) -> Section:
    prompt = result.prompt
    options = pd.DataFrame({"answer": [o.answer for o in prompt.options], "value": [f"{o.value:g}" for o in prompt.options],
                            "spellings": [", ".join(o.spellings) for o in prompt.options]})
    pre = "<pre style='white-space:pre-wrap; text-align:left'>{}</pre>"
    text = (f"<p>Prompt <code>{html.escape(prompt.name)}</code> ({html.escape(prompt.source or 'given in Python')}): "
            f"{html.escape(prompt.description)}</p><p>The first row, as the model read it (X mentioned):</p>"
            f"{pre.format(html.escape(result.example))}<p>Template, mention and question:</p>"
            f"{pre.format(html.escape(prompt.template))}{pre.format(html.escape(prompt.mention))}{pre.format(html.escape(prompt.question))}"
            "<p>A row's score is the mean value of the options under the model's next-token probabilities, normalised over the "
            "options (a token counts for an option when, without leading spaces, it is one of its spellings).</p>")
    return Section("The prompt", text).add_table(options, "Answer options")


def _scoring_text(result) -> str:
    scoring = result.settings["scoring"]
    methods = ", ".join(f"{count:,} by {method}" for method, count in scoring["methods"].items())
    return (f"<p>{scoring['prompts']:,} distinct prompts scored ({methods}); probability on the options: median "
            f"{scoring['median_mass']:.3f}, smallest {scoring['min_mass']:.3f}.</p>")


def _settings(result) -> dict:
    model = {"model" if key == "model_id" else f"model {key}": str(value) for key, value in result.model.items()}
    settings = {key: str(value) for key, value in result.settings.items() if key not in ("prompt", "provenance", "scoring")}
    return {**model, **settings, "wall time (s)": f"{result.seconds:.1f}", **provenance_lines(result.settings["provenance"])}


def write_llm_report(result, path: str | Path) -> Path:
    """Write the LLM decision audit's report to ``path`` (the full audit's report is saved beside it, in audit/)."""
    summary = "".join(f"<p>{html.escape(line)}</p>" for line in result.headline())
    summary += "".join(f"<p class='note'>note: {html.escape(note)}</p>" for note in result.notes)
    sections = []
    for contrast in result.audit.decomposition.contrasts:
        section = Section(f"From the world's disparity to the model's: {contrast_title(result, contrast)}",
                          "<p>TV = Ctf-DE − Ctf-IE − Ctf-SE for the outcome Y (the world) and for the model's score ŷ. Each bar "
                          "in between is a pathway's paired difference Ctf(ŷ) − Ctf(y), signed as it enters TV; the reading says "
                          "whether the model <em>amplifies</em>, <em>dampens</em> or <em>reverses</em> the world's effect on that "
                          "pathway, or <em>adds a disparity</em> where the world's is not shown (Holm over the three pathways).</p>")
        for predictor in result.predictors:
            section.add_figure(result.plot(contrast=contrast, predictor=predictor), f"{predictor}: the world's TV to the model's")
        sections.append(section.add_table(_pathway_table(result, contrast), "Per pathway: the world's effect, the model's (X "
                                                                            "mentioned or withheld), their paired difference"))
    if len(result.exact):
        exact = Section("Exact interventions on the prompt",
                        "<p>Each row of x0 asked again with X's mention changed to x1 and everything else kept: the mean change "
                        "of the score is the direct effect of the mention on these rows, computed, not estimated (its interval is "
                        "the rows' sampling only). For a model that reads only the prompt's columns it is the sample version of "
                        "Ctf-DE(ŷ) (W stays at the row's own value, as in Ctf-DE for the rows of x0), so the estimated Ctf-DE "
                        "differs from it by the estimator's error. What it cannot show: had X been x1, W would have moved too "
                        "(W<sub>x1</sub> is in no row), so the indirect and spurious parts stay estimates.</p>")
        exact.add_figure(exact_figure(result), "The exact direct effect beside the estimate; the disparity carried by the mention")
        exact.add_table(_exact_table(result), "Exact direct effect of X's mention on x0's rows")
        if len(result.mention):
            exact.add_table(_mention_table(result), "Ctf(mentioned) − Ctf(withheld), paired over the rows")
        sections.append(exact)
    sections.append(_prompt_section(result))
    sections.append(Section("Scoring and the full audit", _scoring_text(result)
                            + "<p>The audit of the scores (decomposition, predictive parity, Cookbook, per-row bins) is "
                            "<a href='audit/report.html'>audit/report.html</a>; every row's scores are in scores.csv.</p>"))
    title = f"LLM decision audit: {result.model['model_id']}"
    return write_report(path, title, sections, summary=summary, settings=_settings(result))
