"""Figures and the HTML page of an audit: SFM diagram, decomposition bars, PPM plots, Cookbook table."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fairpath._results import interval_bars, panel_axes  # noqa: E402
from fairpath._vocabulary import LABELS  # noqa: E402
from fairpath.parity._cookbook import (  # noqa: E402
    CERTIFIED,
    MEASURE_OF_PATHWAY,
    NO_EVIDENCE,
    NOT_ESTIMABLE,
    PATHWAYS,
    VERDICT_COLOURS,
    VIOLATION,
    verdict_line,
)
from fairpath.parity._verdict import verdict_finding  # noqa: E402
from fairpath.parity._robustness import robustness_sections  # noqa: E402
from fairpath.report import Section, format_ci, format_p, new_figure, provenance_lines, styled, write_report  # noqa: E402

# Element ids of the report's parts (tests and links find them).
SECTION_IDS = ("verdicts", "sfm-diagram", "decomposition", "predictive-parity", "cookbook", "notes")
_TABLE_MEASURES = ("tv", "ctfde", "ctfie", "ctfse", "ett")
# A predictor's status in the report's colours (NOT ESTIMABLE: neither).
STATUS_CLASSES = {"SUCCESS": "pass", "FAIL": "fail"}
# Display names of the predictive parity measures (the JSON and CSV keep the short keys).
PARITY_LABELS = {"ippm": "iPPM", "ippm_weighted": "iPPM, bins weighted by their share", "spm": "SPM = E[ŷ | x1] − E[ŷ | x0]",
                 "auc": "AUC"}
MEASURE_DEFINITIONS = (
    "<ul><li><strong>TV</strong> (total variation) = E[y | x1] − E[y | x0], the observed gap.</li>"
    "<li><strong>Ctf-DE</strong>, <strong>Ctf-IE</strong>, <strong>Ctf-SE</strong>: the counterfactual direct, indirect "
    "and spurious effects (Plečko &amp; Bareinboim); TV = Ctf-DE − Ctf-IE − Ctf-SE.</li>"
    "<li><strong>ETT</strong> (effect of treatment on the treated) = E[y<sub>x1</sub> − y<sub>x0</sub> | x0]: the total "
    "causal effect of changing X from x0 to x1 among the x0 group; ETT = Ctf-DE − Ctf-IE.</li></ul>"
)

# The report's tables are right-aligned numbers; text columns of the Cookbook table read better left-aligned.
_TEXT_TABLE_STYLE = (
    "<style>section:has(#cookbook) table.table td { text-align: left; vertical-align: top; }"
    " section:has(#cookbook) table.table td:nth-child(5) { white-space: nowrap; }"
    " section:has(#cookbook) table.table td:last-child { min-width: 16em; }</style>"
)


def _names(columns, limit: int = 3) -> str:
    columns = list(columns)
    if not columns:
        return "∅"
    shown = ", ".join(columns[:limit])
    return shown + (f", +{len(columns) - limit} more" if len(columns) > limit else "")


def sfm_diagram(sfm, predictors=()):
    """The Standard Fairness Model as a graph: X → W → Y, Z → W, Z → Y, X ↔ Z, and the predictors Ŷ."""
    fig, ax = new_figure(figsize=(8.5, 4.6))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    nodes = {  # name: (x, y, label, face colour, text colour)
        "X": (0.1, 0.5, f"X: {sfm.x}\n{sfm.x0} → {sfm.x1}", "#f2994a", "#102a43"),
        "Z": (0.5, 0.88, f"Z (confounders)\n{_names(sfm.z)}", "#d9e2ec", "#102a43"),
        "W": (0.5, 0.12, f"W (mediators)\n{_names(sfm.w)}", "#d9e2ec", "#102a43"),
        "Y": (0.88, 0.62, f"Y (outcome)\n{sfm.y}", "#486581", "white"),
        "Ŷ": (0.88, 0.3, f"Ŷ (predictors)\n{_names(predictors, 2)}", "#9f7aea", "white"),
    }
    boxes = {
        name: ax.text(x, y, label, ha="center", va="center", fontsize=9, color=text, zorder=3,
                      bbox=dict(boxstyle="round,pad=0.5", facecolor=face, edgecolor="#243b53"))
        for name, (x, y, label, face, text) in nodes.items()
    }

    fig.draw_without_rendering()  # lay the boxes out: arrows start and end at their edges
    to_data = ax.transData.inverted()
    extents = {name: to_data.transform(box.get_bbox_patch().get_window_extent()) for name, box in boxes.items()}

    def edge_point(name, towards):
        (x0, y0), (x1, y1) = extents[name]
        centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
        direction = np.asarray(towards) - centre
        half = np.array([(x1 - x0) / 2, (y1 - y0) / 2]) + 0.012
        scale = np.min(half / np.maximum(np.abs(direction), 1e-12))
        return centre + direction * scale

    def arrow(a, b, colour="#243b53", style="-|>", rad=0.0, dashed=False, width=1.4):
        start, end = edge_point(a, nodes[b][:2]), edge_point(b, nodes[a][:2])
        ax.annotate("", xy=end, xytext=start, zorder=2,
                    arrowprops=dict(arrowstyle=style, color=colour, lw=width, linestyle="--" if dashed else "-",
                                    connectionstyle=f"arc3,rad={rad}", mutation_scale=15, shrinkA=0, shrinkB=0))

    for a, b in (("X", "W"), ("Z", "W"), ("W", "Y"), ("Z", "Y"), ("X", "Y")):
        arrow(a, b)
    for a in ("X", "Z", "W"):
        arrow(a, "Ŷ", colour="#9f7aea", width=0.9)
    arrow("X", "Z", style="<|-|>", rad=-0.3, dashed=True, colour="#627d98")
    ax.text(0.2, 0.82, "X ↔ Z (confounded)", fontsize=8, color="#52606d", style="italic", ha="center")
    fig.text(0.5, 0.01, "Pathways: direct X → Y (DE), indirect X → W → Y (IE), spurious X ↔ Z → Y (SE). "
             "Predictors (purple) may use X, Z and W.", ha="center", fontsize=8, color="#52606d")
    return fig


def decomposition_figure(decomposition, cookbook, ax=None):
    """Figure 5 of the paper, one panel per measure: the outcome's bar and each predictor's bar with its CI.

    Predictor bars are coloured by the Cookbook verdict on that pathway; the TV panel shows the total.
    ``ax``: a sequence of four axes to draw on (DE, IE, SE, TV); by default a new figure.
    """
    outcomes = list(decomposition.outcomes)
    frame = decomposition.to_frame().set_index(["subject", "measure"])
    verdicts = cookbook.tests.set_index(["predictor", "pathway"])["verdict"]
    panels = [(p, MEASURE_OF_PATHWAY[p]) for p in PATHWAYS] + [("TV", "tv")]

    def make():
        with styled():
            return new_figure(1, len(panels), figsize=(9.0, 1.9 + 0.5 * len(outcomes)), sharey=True)

    fig, axes = panel_axes(ax, len(panels), make)
    positions = np.arange(len(outcomes))[::-1]
    for panel, (pathway, measure) in zip(axes, panels):
        for pos, outcome in zip(positions, outcomes):
            row = frame.loc[(outcome, measure)]
            if outcome == outcomes[0]:
                colour = VERDICT_COLOURS["outcome"]
            elif pathway == "TV":
                colour = "#9aa5b1"
            else:
                colour = VERDICT_COLOURS[verdicts.loc[(outcome, pathway)]]
            panel.barh(pos, row["estimate"], color=colour, edgecolor="#243b53", height=0.7)
            centre, half = interval_bars(row["ci_low"], row["ci_high"])
            panel.errorbar(centre, pos, xerr=half, fmt="none", ecolor="#102a43", capsize=3)
        panel.axvline(0, color="black", linewidth=0.8)
        in_bn = pathway in cookbook.bn
        title = "TV (total)" if pathway == "TV" else f"Ctf-{pathway} ({'in BN' if in_bn else 'not in BN'})"
        panel.set_title(title, fontsize=11)
        panel.set_xlabel("effect (outcome units)", fontsize=9)
        panel.tick_params(axis="x", labelsize=10)
        panel.xaxis.set_major_locator(MaxNLocator(3))
    axes[0].set_yticks(positions, outcomes, fontsize=10)
    legend = [Patch(color=VERDICT_COLOURS["outcome"], label=f"outcome {outcomes[0]}")]
    legend += [Patch(color=VERDICT_COLOURS[v], label=f"predictor: {v}") for v in (VIOLATION, NO_EVIDENCE, CERTIFIED)]
    if ax is not None:  # the caller's figure keeps its layout: the legend goes into the last panel
        axes[-1].legend(handles=legend, fontsize=8, frameon=False)
        return fig
    fig.legend(handles=legend, loc="lower center", ncol=2, fontsize=10, frameon=False)
    fig.tight_layout(rect=(0, 0.2 if len(outcomes) < 4 else 0.12, 1, 1))
    return fig


def _status_html(audit) -> str:
    bn = "{" + ", ".join(audit.cookbook.bn) + "}" if audit.cookbook.bn else "∅ (statistical parity)"
    items = []
    for predictor, overall in audit.cookbook.overall.items():
        css = STATUS_CLASSES.get(overall["status"], "")
        items.append(
            f'<li><code>{html.escape(predictor)}</code>: <span class="{css}">{overall["status"]}</span> '
            f"— {html.escape(verdict_finding(audit.cookbook, predictor, percent=audit.percent))}</li>"
        )
    return (
        f"<p>Business-necessity set BN = <strong>{html.escape(bn)}</strong>; tests at family-wise level "
        f"α = {audit.cookbook.alpha} per predictor ({audit.cookbook.multiplicity})"
        + (f", equivalence margin δ = {audit.cookbook.margin:g}" if audit.cookbook.margin is not None else "")
        + f"; the outcome is {html.escape(audit.outcome_label)}.</p><ul>{''.join(items)}</ul>"
        + "".join(f"<p>{html.escape(line)}</p>" for line in audit.parity_lines())
    )


def _estimates_table(decomposition, outcome_label: str) -> pd.DataFrame:
    """Outcomes as rows (the outcome named ``outcome_label``), the main measures as columns, each cell "estimate [ci_low, ci_high]"."""
    frame = decomposition.to_frame()
    frame = frame[frame["measure"].isin(_TABLE_MEASURES)]
    frame["cell"] = [f"{e:+.3f}\u00a0{format_ci(lo, hi, digits=3)}" for e, lo, hi in zip(frame["estimate"], frame["ci_low"], frame["ci_high"])]
    table = frame.pivot(index="subject", columns="measure", values="cell").loc[decomposition.outcomes, list(_TABLE_MEASURES)]
    # the report names the columns it shows, each with its interval's level
    table = table.rename(columns={m: f"{LABELS[m]} ({decomposition.level:.0%} CI)" for m in _TABLE_MEASURES}, index={decomposition.sfm.y: outcome_label})
    table = table.rename_axis("outcome").reset_index()
    table.columns.name = None
    return table


def _cookbook_table(cookbook, level: float = 0.95) -> pd.DataFrame:
    tests = cookbook.tests
    table = pd.DataFrame(
        {
            "predictor": tests["predictor"],
            "pathway": [f"{p}: {d}, {'permitted' if b else 'not permitted'} by BN"
                        for p, d, b in zip(tests["pathway"], tests["doctrine"], tests["in_bn"])],
            "H0": tests["null_hypothesis"],
            "estimate": [f"{v:+.4f}" for v in tests["estimate"]],
            f"{level:.0%} CI": [format_ci(lo, hi) for lo, hi in zip(tests["ci_low"], tests["ci_high"])],
            "p (Holm)": [format_p(p) for p in tests["p_holm"]],
            "verdict": [verdict_line(row) for _, row in tests.iterrows()],
            "claim": tests["claim"],
        }
    )
    if cookbook.margin is not None:
        table.insert(6, "TOST p (Holm)", [format_p(p) for p in tests["tost_p_holm"]])
    return table


def build_sections(audit) -> list[Section]:
    """The report's sections, in order."""
    cookbook = audit.cookbook
    verdicts = Section("Verdicts", _status_html(audit), anchor="verdicts")
    diagram = Section(
        "Standard Fairness Model",
        f"<p>{html.escape(str(audit.sfm))}; predictors: {html.escape(', '.join(audit.predictors))}.</p>",
        anchor="sfm-diagram",
    ).add_figure(sfm_diagram(audit.sfm, audit.predictors), "Causal diagram assumed by the analysis.")
    descriptions = audit.settings.get("descriptions") or {}
    if descriptions:
        diagram.text += "<p>The predictors:</p><ul>" + "".join(
            f"<li><code>{html.escape(k)}</code>: {html.escape(v)}</li>" for k, v in descriptions.items()) + "</ul>"
    level = audit.settings["level"]
    decomposition = Section(
        "Causal decomposition: TV = Ctf-DE − Ctf-IE − Ctf-SE",
        "<p>" + "<br>".join(html.escape(line) for line in audit.summary_lines()) + "</p>" + MEASURE_DEFINITIONS,
        anchor="decomposition",
    ).add_figure(decomposition_figure(audit.decomposition, cookbook),
                 f"Bars: estimates; whiskers: {level:.0%} confidence intervals; predictor bars coloured by the Cookbook verdict.")
    decomposition.add_table(_estimates_table(audit.decomposition, audit.outcome_label),
                            f"Estimates with {level:.0%} CIs, in outcome units (every measure and SE: result.csv, result.json)")
    parity = Section(
        "Predictive parity",
        "<p>PPM per bin of the predictor: E[Y | x1, ŷ ∈ bin] − E[Y | x0, ŷ ∈ bin], "
        "bins are quantiles of ŷ on the whole sample (ties merge bins; a binary ŷ uses its two levels). "
        "iPPM is the unweighted mean of the bin gaps (the paper's measure), iPPM weighted uses the bins' "
        f"shares; SPM is E[ŷ | x1] − E[ŷ | x0]. CIs are {level:.0%} bootstrap percentile intervals "
        f"({audit.settings['n_boot']} draws).</p>",
        anchor="predictive-parity",
    )
    parity.add_table(_parity_table(audit, level), f"Predictive parity measures with {level:.0%} CIs")
    for predictor, result in audit.parity.items():
        parity.add_figure(result.plot(), f"{predictor}: PPM per bin with {level:.0%} CIs (left) and calibration by group with "
                                         f"{level:.0%} bands (right; Wilson intervals of E[Y] in each bin, binary Y only).")
        parity.add_table(_bins_table(result), f"{predictor}: rows per bin and group (a bin with few rows of one group has a wide CI)")
    cookbook_section = Section(
        "Business Necessity Cookbook (Algorithm 1)",
        _TEXT_TABLE_STYLE + "<p>For each pathway in BN the predictor must transmit the same effect as the outcome "
        "(H0: Ctf(ŷ) = Ctf(y), paired test); outside BN it must transmit none (H0: Ctf(ŷ) = 0). "
        "A rejection <em>shows</em> a violation. A non-rejection is only absence of evidence; an "
        "equivalence test (two one-sided tests with margin δ) is needed to <em>certify</em> compliance. "
        f"p-values: {cookbook.multiplicity}.</p>",
        anchor="cookbook",
    ).add_figure(cookbook.plot(), f"Tested quantity per pathway with its {level:.0%} CI, coloured by verdict."
                 + (f" Shaded band: the equivalence margin ±δ = ±{cookbook.margin:g}; a CI inside it (TOST) certifies "
                    "compliance." if cookbook.margin is not None else ""))
    cookbook_section.add_table(_cookbook_table(cookbook, level), f"Tests ({level:.0%} CIs), verdicts and the claim each makes")
    notes_html = ("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in audit.notes) + "</ul>"
                  if audit.notes else "<p>No warnings.</p>")
    notes = Section("Notes", notes_html, anchor="notes")
    return [verdicts, diagram, decomposition, parity, cookbook_section, *robustness_sections(cookbook, audit.decomposition), notes]


def _parity_table(audit, level: float) -> pd.DataFrame:
    frame = pd.concat([p.to_frame() for p in audit.parity.values()], ignore_index=True)
    return pd.DataFrame({
        "predictor": frame["subject"],
        "measure": frame["measure"].map(lambda m: PARITY_LABELS.get(m, m)),
        "estimate": [f"{v:+.4f}" for v in frame["estimate"]],
        f"{level:.0%} CI": [format_ci(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
    })


def _bins_table(result) -> pd.DataFrame:
    bins = result.bins
    labels = result.settings["group_labels"]
    return pd.DataFrame({
        "bin": bins["bin"],
        f"rows {labels['x0']}": bins["n_x0"],
        f"rows {labels['x1']}": bins["n_x1"],
        "PPM gap": [f"{v:+.4f}" for v in bins["gap"]],
        "CI": [format_ci(lo, hi) for lo, hi in zip(bins["ci_low"], bins["ci_high"])],
    })


def write_audit_report(audit, path) -> Path:
    """Write the audit as one self-contained HTML page."""
    settings = audit.flat_settings()
    settings = {k: v for k, v in settings.items() if not k.startswith(("provenance", "descriptions"))}
    if audit.settings.get("provenance"):
        settings.update(provenance_lines(audit.settings["provenance"]))
    return write_report(path, audit.settings["title"], build_sections(audit), settings=settings)


# -- every level of X ---------------------------------------------------------------------------------
def cookbook_legend(margin, left_out: bool = False) -> dict[str, str]:
    """What each tone of a Cookbook matrix means; ``left_out``: some test is not estimable (left out of the family)."""
    legend = {"bad": f"{VIOLATION} shown", "none": f"{NO_EVIDENCE} (not a proof of compliance)"}
    if margin is not None:
        legend["good"] = f"{CERTIFIED} within ±{margin:g}"
    if left_out:
        legend["na"] = f"{NOT_ESTIMABLE}: left out of the Holm family (see the notes)"
    return legend


def write_multilevel_audit_report(result, path) -> Path:
    """The audit of every contrast on one page: each predictor's verdict and its contrast × pathway matrix, the outcome's
    decomposition matrix and forest plot, links to each contrast's full audit, notes and settings."""
    cookbook, level = result.cookbook, result.settings["level"]
    bn = "{" + ", ".join(cookbook.bn) + "}" if cookbook.bn else "∅ (statistical parity)"
    verdicts = Section("Verdicts", f"<p>{html.escape(str(result.sfm))}; BN = <strong>{html.escape(bn)}</strong>; α = {cookbook.alpha} "
                       f"per predictor ({html.escape(cookbook.multiplicity)}).</p>" + status_html(result), anchor="verdicts")
    left_out = bool((cookbook.tests["verdict"] == NOT_ESTIMABLE).any())
    for predictor in result.predictors:
        verdicts.add_matrix(result.verdict_cells(predictor), cookbook_legend(cookbook.margin, left_out),
                            f"{predictor}: tested quantity [{level:.0%} CI] and Holm p per contrast and pathway", corner="contrast")
    outcome = result.sfm.y
    decomposition = Section("The outcome's decomposition per contrast",
                            "<p>What the outcome itself carries along each pathway, per contrast: the estimate with its "
                            f"simultaneous {level:.0%} interval over the contrasts.</p>", anchor="decomposition")
    decomposition.add_matrix(result.decomposition.verdict_cells(outcome), result.decomposition.verdict_legend(),
                             f"{outcome}: estimate [simultaneous {level:.0%} CI]", corner="contrast")
    decomposition.add_figure(result.decomposition.plot(outcome=outcome),
                             f"{outcome}: dots are estimates, thick bars marginal and thin bars simultaneous {level:.0%} intervals.")
    links = "".join(f'<li><a href="contrasts/{html.escape(contrast_folder(i, name))}/report.html">{html.escape(name)} against '
                    f"{html.escape(str(result.sfm.x0))}</a>: {html.escape(', '.join(f'{p} {s}' for p, s in audit.status.items()))}</li>"
                    for i, (name, audit) in enumerate(result.audits.items(), start=1))
    contrasts = Section("Each contrast's audit", "<p>The full audit of each contrast (decomposition, predictive parity on the "
                        f"pair's rows, Cookbook tests adjusted over every contrast):</p><ul>{links}</ul>", anchor="contrasts")
    notes = Section("Notes", "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in result.notes) + "</ul>"
                    if result.notes else "<p>No warnings.</p>", anchor="notes")
    settings = {k: str(v) for k, v in result.settings.items() if k not in ("provenance", "descriptions")}
    settings.update(provenance_lines(result.settings["provenance"]))
    robustness = robustness_sections(cookbook, result.decomposition)
    return write_report(path, result.settings["title"], [verdicts, decomposition, *robustness, contrasts, notes], settings=settings)


def contrast_folder(position: int, name: str) -> str:
    """A folder name for a contrast: its position and its name's letters and digits (a level may hold any character)."""
    safe = "".join(c if c.isalnum() else "-" for c in str(name)).strip("-")[:40]
    return f"{position:02d}-{safe or 'level'}"


def status_html(result) -> str:
    """The verdict of every predictor as the report's first lines."""
    return "".join(f'<p><span class="{STATUS_CLASSES.get(result.status[p], "")}">{html.escape(result.status[p])}</span> '
                   f"{html.escape(line)}</p>" for p, line in zip(result.predictors, result.verdict_lines()))
