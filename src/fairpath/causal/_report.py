"""The HTML report of a causal decomposition (``fairpath decompose --out``): what was found first, then the detail."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath._stats import p_clause
from fairpath._vocabulary import LABELS
from fairpath.report import Section, format_ci, format_p, provenance_lines, write_report

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
    bars.add_table(estimates_table(decomposition), f"Every measure with its {level:.0%} CI, in outcome units (estimates.csv, results.json)")
    overlap = Section("Overlap", f"<p>{html.escape(decomposition.overlap_line())}</p>", anchor="overlap")
    settings = {k: str(v) for k, v in decomposition.settings.items() if k != "provenance"}
    settings.update({f"rows {k}": str(v) for k, v in decomposition.counts_.items()})
    settings["time"] = f"{decomposition.seconds_:.1f} s"
    settings.update(provenance_lines(decomposition.settings["provenance"]))
    return write_report(path, f"fairpath decompose: {decomposition.sfm.x}", [bars, overlap], summary, settings)
