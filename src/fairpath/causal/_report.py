"""The HTML report of a causal decomposition (``fairpath decompose --out``): what was found first, then the detail."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._stats import p_clause
from fairpath._vocabulary import LABELS
from fairpath.report import Section, compact_digits, format_ci, format_p, provenance_lines, write_report

HEADLINE_MEASURES = ("tv", "ctfde", "ctfie", "ctfse")  # TV = Ctf-DE − Ctf-IE − Ctf-SE


def _amount(value: float, share: bool) -> str:
    return f"{100 * value:+.2f} pp" if share else f"{value:+.4f}"


def _interval(estimate, share: bool) -> str:
    scale, unit = (100, " pp") if share else (1, "")
    digits = 2 if share else 4
    return f"[{scale * estimate.ci_low:+.{digits}f}, {scale * estimate.ci_high:+.{digits}f}]{unit}"


def significant(estimate) -> bool:
    """Whether the interval excludes 0 (the effect is shown at the interval's level)."""
    return estimate.ci_low > 0 or estimate.ci_high < 0


def verdict_line(decomposition, outcome: str) -> str:
    """``y: TV +8.64 pp (95% CI [...], p < 1e-16) = Ctf-DE … − Ctf-IE … − Ctf-SE …; significant: …``."""
    share = outcome in decomposition.settings.get("share_outcomes", [])
    measures = [m for m in HEADLINE_MEASURES if m in decomposition.measures]
    estimates = {m: decomposition.estimate(m, outcome) for m in measures}
    level = decomposition.level
    parts = {m: f"{LABELS[m]} {_amount(e.estimate, share)} ({level:.0%} CI {_interval(e, share)}, "
                f"{p_clause('p', e.p_value())})" for m, e in estimates.items()}
    sums = " − ".join(parts[m] for m in measures if m != "tv")
    text = f"{outcome}: {parts['tv']} = {sums}" if "tv" in parts and sums else f"{outcome}: " + "; ".join(parts.values())
    shown = [LABELS[m] for m, e in estimates.items() if significant(e)]
    not_shown = [LABELS[m] for m, e in estimates.items() if not significant(e)]
    text += (f". Significant (the {level:.0%} CI excludes 0): {', '.join(shown) or 'none'}"
             + (f"; not significant: {', '.join(not_shown)} (no evidence of an effect, which is not evidence of none)"
                if not_shown else "") + ".")
    return text


def headline(decomposition) -> list[str]:
    """What was found, one line per outcome, after a warning when the effects are not estimable."""
    units = ("percentage points (pp) for outcomes within [0, 1]"
             if decomposition.settings.get("share_outcomes") else "the outcome's units")
    lines = [f"Effects of {decomposition.sfm.x} = {decomposition.sfm.x1} against {decomposition.sfm.x0}, in {units}; "
             f"p of H0: the effect is 0."]
    if not decomposition.estimable:
        lines.insert(0, "NOT ESTIMABLE: most rows lack overlap between the groups, so these effects are not estimable "
                        "from these data; the numbers below are not to be trusted.")
    return lines + [verdict_line(decomposition, outcome) for outcome in decomposition.outcomes]


def estimates_table(decomposition) -> pd.DataFrame:
    """Every outcome and measure: estimate, CI at the decomposition's level, p of H0: 0, significant or not."""
    level = decomposition.level
    rows = []
    for outcome in decomposition.outcomes:
        for measure in decomposition.measures:
            e = decomposition.estimate(measure, outcome)
            rows.append({"outcome": outcome, "measure": LABELS.get(measure, measure), "estimate": f"{e.estimate:+.4f}",
                         "se": f"{e.se:.4f}", f"{level:.0%} CI": format_ci(e.ci_low, e.ci_high), "p (H0: 0)": format_p(e.p_value()),
                         "significant": "yes" if significant(e) else "no"})
    return pd.DataFrame(rows)


def write_decomposition_report(decomposition, path) -> Path:
    """Write the decomposition as one self-contained HTML page: the headline, the bars and table, overlap, settings
    and provenance."""
    level = decomposition.level
    summary = "<p>" + "</p><p>".join(html.escape(line) for line in headline(decomposition)) + "</p>"
    bars = Section("Causal decomposition: TV = Ctf-DE − Ctf-IE − Ctf-SE", f"<p>{html.escape(str(decomposition.sfm))}</p>",
                   anchor="decomposition").add_figure(decomposition.plot(), f"Bars: estimates; whiskers: {level:.0%} confidence intervals.")
    bars.add_table(estimates_table(decomposition), f"Every measure with its {level:.0%} CI, in outcome units (result.csv, result.json)")
    overlap = Section("Overlap", f"<p>{html.escape(decomposition.overlap_line())}</p>", anchor="overlap")
    robustness = robustness_section(decomposition)
    settings = {k: str(v) for k, v in decomposition.settings.items() if k != "provenance"}
    settings.update({f"rows {k}": str(v) for k, v in decomposition.counts.items()})
    settings["time"] = f"{decomposition.seconds:.1f} s"
    settings.update(provenance_lines(decomposition.settings["provenance"]))
    return write_report(path, f"fairpath decompose: {decomposition.sfm.x}", [bars, *robustness, overlap], summary, settings)


# -- every level of X: the verdict matrix, the forest plot and the report -----------------------------
def _tone(estimate, simultaneous: tuple[float, float]) -> str:
    """``strong``: the simultaneous interval excludes 0; ``weak``: only the marginal one does; ``none``: neither."""
    if simultaneous[0] > 0 or simultaneous[1] < 0:
        return "strong"
    return "weak" if significant(estimate) else "none"


NOT_ESTIMABLE_TONE = "na"


def matrix_legend(level: float, left_out: bool = False) -> dict[str, str]:
    """What each tone means; ``left_out``: some cell is not estimable (left out of the simultaneous family)."""
    legend = {"strong": f"shown: the simultaneous {level:.0%} CI excludes 0",
              "weak": f"marginal only: the {level:.0%} CI excludes 0, the simultaneous one does not",
              "none": "not shown: both intervals include 0"}
    if left_out:
        legend[NOT_ESTIMABLE_TONE] = "not estimable: left out of the simultaneous intervals (see the notes)"
    return legend


def verdict_cells(result, outcome: str) -> pd.DataFrame:
    """Contrast × measure cells (text, tone): the estimate and its simultaneous interval, the tone its verdict; a contrast
    left out of the family reads "not estimable"."""
    share = outcome in result.settings.get("share_outcomes", [])
    measures = [m for m in HEADLINE_MEASURES if m in result.measures]
    bounds = {m: result.simultaneous(m, outcome) for m in measures}
    scale = 100 if share else 1
    digits = 1 if share else compact_digits([v for m in measures for pair in bounds[m].values() for v in pair])
    columns = {}
    for measure in measures:
        cells = []
        left_out = result.left_out(measure, outcome)
        for name in result.contrasts:
            if name in left_out:
                cells.append(("not estimable", NOT_ESTIMABLE_TONE))
                continue
            e = result.estimate(measure, outcome, contrast=name)
            low, high = bounds[measure][name]
            cells.append((f"{scale * e.estimate:+.{digits}f} [{scale * low:+.{digits}f}, {scale * high:+.{digits}f}]",
                          _tone(e, bounds[measure][name])))
        columns[LABELS[measure]] = cells
    return pd.DataFrame(columns, index=result.contrasts)


def multilevel_headline(result) -> list[str]:
    """What was found: per outcome and contrast, TV with its simultaneous interval and adjusted p, and the pathways shown."""
    sfm, level = result.sfm, result.level
    units = ("percentage points (pp) for outcomes within [0, 1]" if result.settings.get("share_outcomes") else "the outcome's units")
    which = "every pair of levels" if result.settings["contrasts"] == "pairs" else f"each level of {sfm.x} against {sfm.x0!r}"
    lines = [f"Effects of {which} ({len(result.contrasts)} contrasts), in {units}. Intervals are simultaneous over the "
             f"contrasts at {level:.0%} (max-|t|, per outcome and measure); p_adj is the family-wise adjusted p of H0: the effect is 0."]
    lines[0:0] = [f"{note[0].upper()}{note[1:]}." for note in result.notes]
    measures = [m for m in HEADLINE_MEASURES if m in result.measures]
    for outcome in result.outcomes:
        share = outcome in result.settings.get("share_outcomes", [])
        bounds = {m: result.simultaneous(m, outcome) for m in measures}
        parts = []
        for name in result.contrasts:
            if name in result.left_out(measures[0], outcome):
                parts.append(f"{name}: not estimable (left out of the simultaneous intervals)")
                continue
            shown = [LABELS[m] for m in measures if _tone(result.estimate(m, outcome, contrast=name), bounds[m][name]) == "strong"]
            head = measures[0]
            e = result.estimate(head, outcome, contrast=name)
            low, high = bounds[head][name]
            p = result.p_value(head, outcome, contrast=name, simultaneous=True)
            parts.append(f"{name}: {LABELS[head]} {_amount(e.estimate, share)} (simultaneous {level:.0%} CI "
                         f"[{_amount(low, share)}, {_amount(high, share)}], {p_clause('p_adj', p)}); shown: {', '.join(shown) or 'none'}")
        lines.append(f"{outcome} — " + "; ".join(parts) + ".")
    return lines


def forest_plot(result, ax, measures: list[str], outcome: str):
    """One panel per measure: each contrast's estimate, marginal interval (thick) and simultaneous interval (thin)."""
    from fairpath._results import panel_axes
    from fairpath.report import SERIES_COLOURS, legend_below, subplots

    names = result.contrasts
    columns = min(len(measures), 2)
    rows = -(-len(measures) // columns)
    fig, axes = panel_axes(ax, len(measures), lambda: subplots(rows, columns, height=rows * (1.0 + 0.32 * len(names)) + 0.6,
                                                               squeeze=False, sharey=True))
    positions = np.arange(len(names))[::-1]
    for axis, measure in zip(axes, measures):
        bounds = result.simultaneous(measure, outcome)
        estimates = [result.estimate(measure, outcome, contrast=name) for name in names]
        axis.hlines(positions, [bounds[n][0] for n in names], [bounds[n][1] for n in names], color=SERIES_COLOURS[0], linewidth=1.2,
                    label=f"simultaneous {result.level:.0%} CI")
        axis.hlines(positions, [e.ci_low for e in estimates], [e.ci_high for e in estimates], color=SERIES_COLOURS[0], linewidth=4.5,
                    alpha=0.55, label=f"marginal {result.level:.0%} CI")
        axis.plot([e.estimate for e in estimates], positions, "o", color=SERIES_COLOURS[1], markersize=5, label="estimate")
        axis.axvline(0, color="black", linewidth=0.8)
        axis.set_yticks(positions, names)
        axis.set_title(LABELS[measure])
        axis.set_xlabel(f"effect on E[{outcome}]")
    for axis in axes[len(measures):]:
        axis.set_visible(False)
    fig.suptitle(f"{result.sfm.x}: each contrast's effect ({outcome})")
    fig.tight_layout()
    handles, labels = axes[0].get_legend_handles_labels()
    legend_below(axes[len(measures) - 1], across_figure=True, ncol=3, handles=handles, labels=labels)
    return fig


def write_multilevel_report(result, path) -> Path:
    """The report of every contrast: the headline, one verdict matrix per outcome, the forest plot, the table, settings."""
    level = result.level
    summary = "<p>" + "</p><p>".join(html.escape(line) for line in multilevel_headline(result)) + "</p>"
    matrix = Section("Verdict matrix: contrast × pathway", f"<p>{html.escape(str(result.sfm))}</p>", anchor="matrix")
    for outcome in result.outcomes:
        matrix.add_matrix(verdict_cells(result, outcome), matrix_legend(level),
                          f"{outcome}: estimate [simultaneous {level:.0%} CI] per contrast and measure", corner="contrast")
    forest = Section("Forest plot", anchor="forest")
    for outcome in result.outcomes:
        forest.add_figure(result.plot(outcome=outcome),
                          f"{outcome}: dots are estimates, thick bars marginal and thin bars simultaneous {level:.0%} intervals.")
    frame = result.to_frame()
    table = pd.DataFrame({
        "contrast": frame["contrast"], "outcome": frame["subject"], "measure": frame["measure"].map(lambda m: LABELS.get(m, m)),
        "estimate": frame["estimate"].map("{:+.4f}".format),
        f"{level:.0%} CI": [format_ci(low, high) for low, high in zip(frame["ci_low"], frame["ci_high"])],
        f"simultaneous {level:.0%} CI": [format_ci(low, high) if np.isfinite(low) else "not estimable"
                                         for low, high in zip(frame["simultaneous_low"], frame["simultaneous_high"])],
        "p": frame["p_value"].map(format_p), "p_adj": frame["p_simultaneous"].map(format_p)})
    detail = Section("Every estimate", anchor="estimates").add_table(
        table, f"Marginal and simultaneous {level:.0%} intervals, p of H0: 0 (marginal and family-wise adjusted); "
               "result.csv, result.json")
    settings = {k: str(v) for k, v in result.settings.items() if k != "provenance"}
    settings.update({f"rows {k}": str(v) for k, v in result.counts.items()})
    settings["time"] = f"{result.seconds:.1f} s"
    settings.update(provenance_lines(result.settings["provenance"]))
    return write_report(path, f"fairpath decompose: every level of {result.sfm.x}", [matrix, forest, *robustness_section(result), detail],
                        summary, settings)


def robustness_section(decomposition) -> list[Section]:
    """How strong an unobserved confounder would have to be to bring each pathway effect (or its confidence bound) to
    0: the robustness values of ``decomposition.sensitivity`` (none for a decomposition with bootstrap draws)."""
    if any(fit.draws is not None for d in _contrast_decompositions(decomposition) for fit in d.fits.values()):
        return []
    bounds = decomposition.sensitivity()
    frame = bounds.to_frame()
    frame = frame[frame["measure"].isin(HEADLINE_MEASURES[1:]) & (frame["edges"] != "")]
    level = f"{bounds.level:.0%}"
    digits = compact_digits(frame[["usual_ci_low", "usual_ci_high"]].to_numpy().ravel())
    table = pd.DataFrame({
        **({"contrast": frame["contrast"]} if len(bounds.contrasts) > 1 else {}),
        "subject": frame["subject"], "measure": frame["measure"].map(LABELS),
        "estimate": frame["estimate"].map(lambda v: f"{v:+.{digits}f}"),
        f"usual {level} CI": [format_ci(low, high, digits) for low, high in zip(frame["usual_ci_low"], frame["usual_ci_high"])],
        "robustness value (estimate to 0)": frame["robustness_value"].map("{:.1%}".format),
        f"robustness value ({level} bound to 0)": frame["robustness_value_ci"].map(
            lambda v: "0 (the interval holds 0)" if v == 0 else f"{v:.1%}"),
        "biased by a confounder on": frame["edges"]})
    text = ("<p>Every estimate assumes that nothing unobserved confounds X, W and Y beyond Z. A robustness value is the "
            "strength r of a hidden confounder, explaining the share r of the outcome's residual variation and r of the "
            "weights' (cf_y = cf_d = r, ρ = 1), that would bring the estimate (or its confidence bound) to 0 "
            "(Chernozhukov et al. 2022, Cinelli &amp; Hazlett 2020). TV is an observed difference: no confounder changes it. "
            "Bounds for chosen strengths: <code>--sensitivity CF_Y,CF_D</code> or "
            "<code>result.sensitivity(cf_y=, cf_d=)</code>.</p>")
    return [Section("How strong would a hidden confounder have to be?", text, anchor="robustness").add_table(
        table, "Per pathway; the edges a confounder must act on to bias it (X↔W, X↔Y, W↔Y)")]


def _contrast_decompositions(decomposition) -> list:
    return list(getattr(decomposition, "decompositions", {"": decomposition}).values())
