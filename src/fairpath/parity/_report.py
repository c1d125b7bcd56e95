"""Figures and the HTML page of an audit: SFM diagram, decomposition bars, PPM plots, Cookbook table."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fairpath._vocabulary import LABELS  # noqa: E402
from fairpath.parity._cookbook import (  # noqa: E402
    CERTIFIED,
    MEASURE_OF_PATHWAY,
    NO_EVIDENCE,
    PATHWAYS,
    VERDICT_COLOURS,
    VIOLATION,
    verdict_line,
)
from fairpath.report import Section, write_report  # noqa: E402

# Element ids of the report's parts (tests and links find them).
SECTION_IDS = ("verdicts", "sfm-diagram", "decomposition", "predictive-parity", "cookbook", "notes")
_TABLE_MEASURES = ("tv", "ctfde", "ctfie", "ctfse", "ett")
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
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
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

    fig.canvas.draw()  # lay the boxes out: arrows start and end at their edges
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


def decomposition_figure(decomposition, cookbook):
    """Figure 5 of the paper, one panel per measure: the outcome's bar and each predictor's bar with its CI.

    Predictor bars are coloured by the Cookbook verdict on that pathway; the TV panel shows the total.
    """
    outcomes = list(decomposition.outcomes)
    frame = decomposition.to_frame().set_index(["outcome", "measure"])
    verdicts = cookbook.tests_.set_index(["predictor", "pathway"])["verdict"]
    panels = [(p, MEASURE_OF_PATHWAY[p]) for p in PATHWAYS] + [("TV", "tv")]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 1.2 + 0.45 * len(outcomes)), sharey=True)
    positions = np.arange(len(outcomes))[::-1]
    for ax, (pathway, measure) in zip(axes, panels):
        for pos, outcome in zip(positions, outcomes):
            row = frame.loc[(outcome, measure)]
            if outcome == outcomes[0]:
                colour = VERDICT_COLOURS["outcome"]
            elif pathway == "TV":
                colour = "#9aa5b1"
            else:
                colour = VERDICT_COLOURS[verdicts.loc[(outcome, pathway)]]
            ax.barh(pos, row["estimate"], color=colour, edgecolor="#243b53", height=0.7)
            ax.errorbar(row["estimate"], pos, xerr=[[row["estimate"] - row["ci_low"]], [row["ci_high"] - row["estimate"]]],
                        fmt="none", ecolor="#102a43", capsize=3)
        ax.axvline(0, color="black", linewidth=0.8)
        in_bn = pathway in cookbook.bn
        title = "TV (total)" if pathway == "TV" else f"Ctf-{pathway} ({'in BN' if in_bn else 'not in BN'})"
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(4))
    axes[0].set_yticks(positions, outcomes, fontsize=8)
    legend = [Patch(color=VERDICT_COLOURS["outcome"], label=f"outcome {outcomes[0]}")]
    legend += [Patch(color=VERDICT_COLOURS[v], label=f"predictor: {v}") for v in (VIOLATION, NO_EVIDENCE, CERTIFIED)]
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.12 if len(outcomes) < 4 else 0.07, 1, 1))
    return fig


def _status_html(audit) -> str:
    bn = "{" + ", ".join(audit.cookbook_.bn) + "}" if audit.cookbook_.bn else "∅ (statistical parity)"
    items = []
    for predictor, overall in audit.cookbook_.overall_.items():
        css = "pass" if overall["status"] == "SUCCESS" else "fail"
        items.append(
            f'<li><code>{html.escape(predictor)}</code>: <span class="{css}">{overall["status"]}</span> '
            f"— {html.escape(overall['claim'])}</li>"
        )
    return (
        f"<p>Business-necessity set BN = <strong>{html.escape(bn)}</strong>; tests at family-wise level "
        f"α = {audit.cookbook_.alpha} per predictor (Holm over the three pathways)"
        + (f", equivalence margin δ = {audit.cookbook_.margin:g}" if audit.cookbook_.margin is not None else "")
        + f".</p><ul>{''.join(items)}</ul>"
    )


def _estimates_table(decomposition) -> pd.DataFrame:
    """Outcomes as rows, the main measures as columns, each cell "estimate [ci_low, ci_high]"."""
    frame = decomposition.to_frame()
    frame = frame[frame["measure"].isin(_TABLE_MEASURES)]
    frame["cell"] = [f"{e:+.4f} [{lo:+.4f}, {hi:+.4f}]" for e, lo, hi in zip(frame["estimate"], frame["ci_low"], frame["ci_high"])]
    table = frame.pivot(index="outcome", columns="measure", values="cell").loc[decomposition.outcomes, list(_TABLE_MEASURES)]
    table = table.rename(columns=LABELS).reset_index()
    table.columns.name = None
    return table


def _cookbook_table(cookbook) -> pd.DataFrame:
    tests = cookbook.tests_
    table = pd.DataFrame(
        {
            "predictor": tests["predictor"],
            "pathway": [f"{p}: {d}, {'permitted' if b else 'not permitted'} by BN"
                        for p, d, b in zip(tests["pathway"], tests["doctrine"], tests["in_bn"])],
            "H0": tests["null_hypothesis"],
            "estimate": tests["estimate"],
            "CI": [f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(tests["ci_low"], tests["ci_high"])],
            "p (Holm)": [f"{p:.3g}" for p in tests["p_holm"]],
            "verdict": [verdict_line(row) for _, row in tests.iterrows()],
            "claim": tests["claim"],
        }
    )
    if cookbook.margin is not None:
        table.insert(6, "TOST p (Holm)", [f"{p:.3g}" for p in tests["tost_p_holm"]])
    return table


def build_sections(audit) -> list[Section]:
    """The report's sections, in order."""
    cookbook = audit.cookbook_
    verdicts = Section("Verdicts", _status_html(audit), anchor="verdicts")
    diagram = Section(
        "Standard Fairness Model",
        f"<p>{html.escape(str(audit.sfm))}; predictors: {html.escape(', '.join(audit.predictors))}.</p>",
        anchor="sfm-diagram",
    ).add_figure(sfm_diagram(audit.sfm, audit.predictors), "Causal diagram assumed by the analysis.")
    decomposition = Section(
        "Causal decomposition: TV = Ctf-DE − Ctf-IE − Ctf-SE",
        "<p>" + "<br>".join(html.escape(line) for line in audit.summary_lines()) + "</p>",
        anchor="decomposition",
    ).add_figure(decomposition_figure(audit.decomposition_, cookbook),
                 f"Bars with {audit.settings_['level']:.0%} CIs; predictor bars coloured by the Cookbook verdict.")
    decomposition.add_table(_estimates_table(audit.decomposition_), "Estimates with CIs (every measure and SE: estimates.csv, results.json)")
    parity = Section(
        "Predictive parity",
        "<p>PPM per bin of the predictor: E[Y | x1, ŷ ∈ bin] − E[Y | x0, ŷ ∈ bin], "
        "bins are quantiles of ŷ on the whole sample (ties merge bins; a binary ŷ uses its two levels). "
        "iPPM is the unweighted mean of the bin gaps (the paper's measure), iPPM weighted uses the bins' "
        "shares; SPM is E[ŷ | x1] − E[ŷ | x0]. CIs are bootstrap percentile intervals.</p>",
        anchor="predictive-parity",
    )
    parity.add_table(pd.concat([p.to_frame() for p in audit.parity_.values()], ignore_index=True), "Predictive parity measures")
    for predictor, result in audit.parity_.items():
        parity.add_figure(result.plot(), f"{predictor}: PPM per bin (left) and calibration by group (right).")
    cookbook_section = Section(
        "Business Necessity Cookbook (Algorithm 1)",
        _TEXT_TABLE_STYLE + "<p>For each pathway in BN the predictor must transmit the same effect as the outcome "
        "(H0: Ctf(ŷ) = Ctf(y), paired test); outside BN it must transmit none (H0: Ctf(ŷ) = 0). "
        "A rejection <em>shows</em> a violation. A non-rejection is only absence of evidence; an "
        "equivalence test (two one-sided tests with margin δ) is needed to <em>certify</em> compliance. "
        "p-values are Holm-adjusted over the three pathways of each predictor.</p>",
        anchor="cookbook",
    ).add_figure(cookbook.plot(), "Tested quantity per pathway with its CI, coloured by verdict.")
    cookbook_section.add_table(_cookbook_table(cookbook), "Tests, verdicts and the claim each makes")
    notes_html = ("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in audit.notes_) + "</ul>"
                  if audit.notes_ else "<p>No warnings.</p>")
    notes = Section("Notes", notes_html, anchor="notes")
    return [verdicts, diagram, decomposition, parity, cookbook_section, notes]


def write_audit_report(audit, path) -> Path:
    """Write the audit as one self-contained HTML page."""
    return write_report(path, audit.settings_["title"], build_sections(audit), settings=audit.flat_settings())
