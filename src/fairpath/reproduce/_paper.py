"""Shared parts of the paper's reproductions: their run folder, the paper's numbers beside fairpath's.

A study runs as named steps of a :class:`fairpath._runs.RunFolder` in ``OUT/steps`` (see
:func:`study_steps`): each step's result is written atomically as soon as it finishes, and a rerun
with the same settings, input file and fairpath version loads it instead of recomputing. The
comparison table puts every number the paper states beside fairpath's estimate and says, in one
sentence, whether the difference lies within the stated uncertainty.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._runs import RunFolder
from fairpath._stats import p_clause

class PaperSettings:
    """What the paper studies' settings dataclasses share: a dict for the step files and the audit's options."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def audit_options(self) -> dict:
        return {"learner": self.learner, "n_folds": self.n_folds, "n_boot": self.n_boot, "level": self.level,
                "seed": self.seed, "progress": False}



# The steps' format, in their resume key: raised whenever a step file gains or changes a field (format 3: the
# seconds a step took live in the run folder's timings.json, not in the step).
STEP_FORMAT = 3


def study_steps(out: str | Path, study: str, settings: PaperSettings, input_sha256: str, progress: bool) -> RunFolder:
    """The run folder ``out/steps`` of a paper study: its steps are valid under the settings, the input file (by its
    SHA-256), the step format and the fairpath version; a folder of another key is refused, naming what differs (a
    study's steps take minutes to hours, so none is thrown away)."""
    return RunFolder(Path(out) / "steps", kind="paper study", version=STEP_FORMAT,
                     key={"study": study, **settings.to_dict(), "input_sha256": input_sha256}, progress=progress)


@dataclass(frozen=True)
class PaperValue:
    """A number the paper states: ``value`` with, where the paper gives one, ``uncertainty`` (the ± half-width)."""

    figure: str
    quantity: str  # e.g. "Ctf-DE"
    outcome: str  # the paper's name of the outcome or predictor
    value: float
    uncertainty: float | None = None
    kind: str = "estimate"  # "estimate" (a share, shown in %) or "p" (a p-value)
    note: str = ""  # how the paper's number was obtained, where fairpath's differs in method


def audit_record(result, rename: dict | None = None) -> dict:
    """What a study keeps of an audit: its estimates, the Cookbook's tests, the verdicts and notes (predictors renamed by
    ``rename``)."""
    estimates = result.to_frame().replace({"subject": rename or {}})
    tests = result.cookbook.tests.replace({"predictor": rename or {}})
    keep = ["predictor", "pathway", "tested", "estimate", "ci_low", "ci_high", "p_value", "p_holm", "verdict", "claim"]
    status = {(rename or {}).get(k, k): v for k, v in result.status.items()}
    return {"estimates": estimates.to_dict(orient="records"), "cookbook": tests[keep].to_dict(orient="records"),
            "status": status, "notes": result.notes}


def _pct(value: float) -> str:
    return f"{100 * value:+.2f}%"


# Where the paper states no uncertainty, a difference of one percentage point of a share is material: the paper's own
# uncertainties are 1.1 to 3.0 points, and the full COMPAS Cookbook rejects Northpointe's spurious gap of about that size.
MATERIAL_DIFFERENCE = 0.01
GRADES = ("agree", "disagree", "inconclusive")


def decidable(ci_low: float | None, ci_high: float | None, reference: float, window: float) -> bool:
    """The one grading rule of the reproductions (compas, census, theorem1): whether the interval
    [``ci_low``, ``ci_high``] can tell if a quantity lies within ±``window`` of ``reference``.

    It can when it is narrower than the window (half-width < ``window``) or lies wholly outside it.
    Otherwise it holds the reference and values more than ``window`` away at once, whatever the truth:
    a comparison on it is *inconclusive at this size* (more rows or repetitions would decide it). No
    interval decides nothing.
    """
    if ci_low is None or ci_high is None or not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return False
    outside = ci_high < reference - window or ci_low > reference + window
    return bool((ci_high - ci_low) / 2 < window or outside)


def grade(agrees: bool, decided: bool) -> str:
    """``agree`` / ``disagree`` by a comparison's own criterion where its interval decides it, else ``inconclusive``."""
    return GRADES[2] if not decided else GRADES[0] if agrees else GRADES[1]


def grade_counts(comparison: pd.DataFrame) -> str:
    """``9 agree, 0 disagree, 4 inconclusive``: the comparison table's grades counted."""
    counts = comparison["grade"].value_counts()
    return ", ".join(f"{int(counts.get(g, 0))} {g}" for g in GRADES)


def size_phrase(rows: int, rows_available: int, quick: bool, seeds: int | None = None) -> str:
    """``1,500 of 7,214 rows, 2 seeds (quick run)``: the size a reproduction's grades hold at."""
    text = f"{rows:,} of {rows_available:,} rows" if rows < rows_available else f"all {rows:,} rows"
    if seeds is not None:
        text += f", {seeds} seeds"
    return text + (" (quick run)" if quick else "")


def subsample(frame: pd.DataFrame, rows: int | None, seed: int) -> pd.DataFrame:
    """``rows`` random rows of ``frame`` (all when None or not fewer), renumbered."""
    if rows is None or rows >= len(frame):
        return frame
    return frame.sample(rows, random_state=seed).reset_index(drop=True)


def _inconclusive_sentence(interval: str, level: float, window: float, around: str) -> str:
    return (f" Inconclusive at this size: fairpath's {level:.0%} CI {interval} is wider than ±{100 * window:.2f}% "
            f"around {around} and reaches into it, so it cannot tell agreement from a difference of that size.")


def compare(paper: PaperValue, estimate: float, ci_low: float | None = None, ci_high: float | None = None,
            level: float = 0.95) -> dict:
    """One row of the comparison table, with the sentence that judges the difference and its ``grade``.

    For an estimate the interval is fairpath's CI of it and the window the paper's stated uncertainty
    (else :data:`MATERIAL_DIFFERENCE`) around the paper's value; for a p-value it is the CI of the
    tested quantity and the window ±:data:`MATERIAL_DIFFERENCE` around the null, 0 (see :func:`decidable`).
    """
    row = {"figure": paper.figure, "quantity": paper.quantity, "outcome": paper.outcome}
    interval = f"[{_pct(ci_low)}, {_pct(ci_high)}]" if ci_low is not None else ""
    if paper.kind == "p":
        same = (paper.value < 0.05) == (estimate < 0.05)
        decided = decidable(ci_low, ci_high, 0.0, MATERIAL_DIFFERENCE)
        verdict = "the same decision at the 5% level" if same else "a different decision at the 5% level"
        sentence = (f"The paper's p = {paper.value:.2f} and fairpath's {p_clause('p', estimate)} lead to {verdict} "
                    f"({'rejected' if estimate < 0.05 else 'not rejected'} by fairpath)." + (f" {paper.note}" if paper.note else ""))
        if not decided:
            sentence += (_inconclusive_sentence(interval, level, MATERIAL_DIFFERENCE, "0 (the null)") if interval
                         else " Inconclusive: no interval of the tested quantity is given.")
        return {**row, "paper": f"p = {paper.value:.2f}", "fairpath": p_clause("p", estimate), "difference": "",
                "within": same, "grade": grade(same, decided), "sentence": sentence}
    difference = estimate - paper.value
    window = paper.uncertainty if paper.uncertainty is not None else MATERIAL_DIFFERENCE
    decided = decidable(ci_low, ci_high, paper.value, window)
    if paper.uncertainty is not None:
        within = abs(difference) <= paper.uncertainty
        sentence = (f"fairpath's {_pct(estimate)} differs from the paper's {_pct(paper.value)} by {_pct(difference)}, "
                    f"{'within' if within else 'outside'} the paper's stated uncertainty ±{100 * paper.uncertainty:.2f}%.")
        paper_text = f"{_pct(paper.value)} ± {100 * paper.uncertainty:.2f}%"
    else:
        within = ci_low is not None and ci_low <= paper.value <= ci_high
        sentence = (f"The paper states no uncertainty for {_pct(paper.value)}; it lies "
                    f"{'inside' if within else 'outside'} fairpath's {level:.0%} CI {interval} "
                    f"(difference {_pct(difference)}).")
        paper_text = _pct(paper.value)
    if not decided:
        sentence += _inconclusive_sentence(interval, level, window, "the paper's value") if interval else " Inconclusive: no interval."
    fairpath_text = f"{_pct(estimate)} {interval}".strip()
    return {**row, "paper": paper_text, "fairpath": fairpath_text, "difference": _pct(difference), "within": within,
            "grade": grade(within, decided), "sentence": sentence}


def verdict_phrase(cookbook: pd.DataFrame, predictor: str, status: str, name: str | None = None) -> str:
    """``ŷ^NP FAIL (violation shown on DE +6.52%, Holm p = 0.0115; …)``: a Cookbook verdict with the p of its claim."""
    tests = cookbook[cookbook["predictor"] == predictor]
    shown = tests[tests["verdict"] == "violation"]
    if len(shown):
        detail = "violation shown on " + "; ".join(f"{t.pathway} {_pct(t.estimate)}, {p_clause('Holm p', t.p_holm)}"
                                                   for t in shown.itertuples())
    else:
        detail = f"no violation shown, smallest {p_clause('Holm p', float(tests['p_holm'].min()))}"
    return f"{name or predictor} {status} ({detail})"


def estimate_lookup(estimates: pd.DataFrame, outcome: str, measure: str) -> dict:
    """The row of a long estimates table (subject, measure, estimate, se, ci_low, ci_high, level) as a dict."""
    rows = estimates[(estimates["subject"] == outcome) & (estimates["measure"] == measure)]
    if rows.empty:
        raise FairpathInputError(f"no estimate of {measure!r} for {outcome!r} in the study's results")
    return rows.iloc[0].to_dict()
