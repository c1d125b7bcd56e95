"""Shared parts of the paper's reproductions: resumable steps, the paper's numbers beside fairpath's.

A study runs as named steps; each step's result is written atomically to ``OUT/steps/<name>.json``
as soon as it finishes, and a rerun with the same settings, input file and fairpath version loads it
instead of recomputing (any other is refused, naming what differs). The
comparison table puts every number the paper states beside fairpath's estimate and says, in one
sentence, whether the difference lies within the stated uncertainty.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._fingerprint import key_differences, read_key, resume_key, write_key
from fairpath._io import atomic_write_text
from fairpath._results import to_json_text
from fairpath._stats import p_clause

class PaperSettings:
    """What the paper studies' settings dataclasses share: a dict for the step files and the audit's options."""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def audit_options(self) -> dict:
        return {"learner": self.learner, "n_folds": self.n_folds, "n_boot": self.n_boot, "level": self.level,
                "seed": self.seed, "progress": False}



# The steps' format, in their resume key: raised whenever a step file gains or changes a field (format 2: the
# estimates tables name their series ``subject``, as every result's to_frame() does).
STEP_FORMAT = 2


class StepStore:
    """Per-step result files under ``out/steps``, valid only under the key they were computed with: the settings
    (the study's input file among them, by its SHA-256), the step format and the fairpath version. A folder of
    another key is refused, naming what differs: a study's steps take minutes to hours, so none is thrown away."""

    def __init__(self, out: str | Path, settings: dict, progress: bool = True):
        self.folder = Path(out) / "steps"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.progress = progress
        self.ran: list[str] = []
        key_file = self.folder / "settings.json"
        key = resume_key("paper study steps", STEP_FORMAT, **settings)
        saved = read_key(key_file)
        if saved is None:
            write_key(key_file, key)
        elif changed := key_differences(saved, key):
            raise FairpathInputError(
                f"{self.folder} holds steps computed with other settings ({changed}); "
                "use another --out folder or delete it to start afresh"
            )

    def run(self, name: str, compute) -> dict:
        """The result of step ``name``: loaded when its file exists, else computed and saved at once."""
        path = self.folder / f"{name}.json"
        if path.exists():
            self._say(f"step {name}: done earlier, loaded from {path}")
            return json.loads(path.read_text())
        self._say(f"step {name}: running")
        start = time.perf_counter()
        result = json.loads(to_json_text(compute()))
        result["seconds"] = time.perf_counter() - start
        atomic_write_text(to_json_text(result), path)
        self.ran.append(name)
        self._say(f"step {name}: finished in {result['seconds']:.1f} s")
        return result

    def _say(self, message: str) -> None:
        if self.progress:
            print(message, file=sys.stderr, flush=True)


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
