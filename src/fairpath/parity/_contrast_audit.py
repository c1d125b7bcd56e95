"""One contrast's audit: its decomposition, predictive parity on the pair's rows and its Cookbook tests."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from fairpath._io import write_csv
from fairpath._results import ResultMixin, result_class, result_frame
from fairpath.causal import SFM, ContrastDecomposition
from fairpath.parity._cookbook import CookbookResult
from fairpath.parity._ppm import PredictiveParity
from fairpath.parity._verdict import bn_parity_sentence, parity_sentence, verdict_sentence


@result_class
class ContrastAudit(ResultMixin):
    """One contrast's audit (x0 → x1): decomposition, predictive parity and Cookbook verdicts for one or more predictors,
    one of :class:`AuditResult`'s ``audits``.

    Attributes
    ----------
    decomposition : the contrast's :class:`fairpath.causal.ContrastDecomposition` of Y and every predictor.
    parity : dict predictor -> :class:`PredictiveParity`.
    cookbook : :class:`CookbookResult` with the verdicts.
    settings : every setting needed to reproduce the audit, with counts and package versions.
    notes : warnings worth reading (excluded rows, predictors equal to Y, trimmed rows, ...).
    """

    sfm: SFM
    predictors: list[str]
    decomposition: ContrastDecomposition
    parity: dict[str, PredictiveParity]
    cookbook: CookbookResult
    settings: dict
    notes: list[str]

    @property
    def status(self) -> dict[str, str]:
        """SUCCESS or FAIL per predictor (NOT ESTIMABLE where none of its tests is estimable)."""
        return {p: overall["status"] for p, overall in self.cookbook.overall.items()}

    @property
    def outcome_label(self) -> str:
        """The outcome named with the data it was measured on, e.g. ``y (observed)`` or ``y (on the fair twins)``."""
        return f"{self.sfm.y} ({self.settings['data_label']})"

    @property
    def percent(self) -> bool:
        """Whether effects are said in percentage points (a 0/1 outcome)."""
        return all(p.settings["binary_y"] for p in self.parity.values())

    def summary_lines(self) -> list[str]:
        return [self.decomposition.summary_line(outcome, label=self.outcome_label if outcome == self.sfm.y else None)
                for outcome in self.decomposition.outcomes]

    def verdict_lines(self) -> list[str]:
        """What was found, first: the verdict of every predictor with the p of its claim, then :meth:`parity_lines`."""
        return [self.verdict_line(p) for p in self.predictors] + self.parity_lines()

    def parity_lines(self) -> list[str]:
        """Each predictor's predictive parity (iPPM with its interval) and what the BN set implies for it (Theorem 1)."""
        return [self.parity_line(p) for p in self.predictors] + [self.bn_parity_line()]

    def verdict_line(self, predictor: str) -> str:
        """``predictor``'s Cookbook verdict in one sentence, in the outcome's units, with the p of its claim."""
        return verdict_sentence(self.cookbook, predictor, percent=self.percent)

    def parity_line(self, predictor: str, original=None) -> str:
        """``predictor``'s iPPM with its interval and level; beside ``original``'s (a PredictiveParity on the same
        rows) as a gain or a loss when given."""
        return parity_sentence(self.parity[predictor], percent=self.percent, original=original)

    def bn_parity_line(self) -> str:
        """What the BN set implies for predictive parity (Theorem 1), with the outcome's effects on these data."""
        return bn_parity_sentence(self.cookbook.bn, self.sfm.y, self.cookbook.outcome_effects,
                                  data_label=self.settings["data_label"], percent=self.percent)

    def to_frame(self) -> pd.DataFrame:
        """All estimates in long form: subject (Y or a predictor), measure, estimate, se, ci_low, ci_high, level."""
        frames = [self.decomposition.to_frame(), *(p.to_frame() for p in self.parity.values())]
        return result_frame(pd.concat(frames, ignore_index=True))

    def flat_settings(self) -> dict[str, str]:
        """Settings as display strings (the report's reproducibility block)."""
        flat = {}
        for key, value in self.settings.items():
            if isinstance(value, dict):
                flat.update({f"{key}.{k}": str(v) for k, v in value.items()})
            else:
                flat[key] = str(value)
        return flat

    def to_dict(self) -> dict:
        return {
            "sfm": self.sfm.to_dict(),
            "predictors": self.predictors,
            "status": self.status,
            "settings": self.settings,
            "decomposition": self.decomposition.to_dict(),
            "predictive_parity": {p: r.to_dict() for p, r in self.parity.items()},
            "cookbook": self.cookbook.to_dict(),
            "notes": self.notes,
        }

    def _repr_fields(self) -> dict:
        return {"predictors": self.predictors, "bn": self.settings["bn"], "status": self.status}

    def summary(self) -> str:
        lines = [*self.verdict_lines(), f"AuditResult for {self.sfm}", *self.summary_lines()]
        lines += [p.summary() for p in self.parity.values()]
        lines.append(self.cookbook.summary())
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def plot(self, ax=None):
        """The decomposition of Y and every predictor, predictor bars coloured by verdict: one panel per
        pathway and one for TV, on ``ax`` (a sequence of four axes) when given."""
        from fairpath.parity._report import decomposition_figure

        return decomposition_figure(self.decomposition, self.cookbook, ax)

    def _repr_html_(self) -> str:
        from fairpath.parity._report import _cookbook_table, _status_html
        from fairpath.report import figure_to_data_uri, table_html

        return (
            f"<div><h4>fairpath audit: {html.escape(str(self.sfm))}</h4>{_status_html(self)}"
            f'<img src="{figure_to_data_uri(self.plot())}" style="max-width:100%">'
            f"{table_html(_cookbook_table(self.cookbook))}</div>"
        )

    def _save_files(self, out: Path) -> dict[str, Path]:
        """cookbook.csv (the Cookbook's tests) and ppm_bins.csv (every predictor's PPM bins)."""
        bins = pd.concat([r.bins.assign(predictor=p) for p, r in self.parity.items()], ignore_index=True)
        return {"cookbook": write_csv(self.cookbook.to_frame(), out / "cookbook.csv"),
                "ppm_bins": write_csv(bins[["predictor", *[c for c in bins.columns if c != "predictor"]]], out / "ppm_bins.csv")}

    def _write_report(self, path: Path) -> Path:
        from fairpath.parity._report import write_audit_report

        return write_audit_report(self, path)


def contrast_audit(sfm, predictors, decomposition, parity, cookbook, notes: list[str], settings: dict, *,
                   propensity: str = "propensity") -> ContrastAudit:
    """The audit of one contrast from its parts: the notes its decomposition calls for (``propensity`` names what the
    bounds apply to), its values in the settings."""
    notes, eps = list(notes), settings["eps"]
    if decomposition.settings["known_means"]:
        notes.append(f"E[Ŷ | x, z, w] of {', '.join(decomposition.settings['known_means'])} evaluated from the predictor's function "
                     "(exact, not estimated), so no regression error of that mean enters its measures")
    if not decomposition.estimable:
        notes.append(f"NOT ESTIMABLE: {decomposition.overlap['share_outside']:.0%} of rows have a {propensity} outside "
                     f"[{eps}, {1 - eps}]; the groups barely overlap, so the effects are not estimable from these data "
                     "and the Cookbook certifies nothing")
    if decomposition.n_trimmed:
        notes.append(f"{decomposition.n_trimmed} rows trimmed from the decomposition ({propensity} outside [{eps}, {1 - eps}]); "
                     "predictive parity uses all rows")
    elif decomposition.n_extreme and decomposition.estimable:  # not estimable: said above, not "weak" positivity
        notes.append(f"{decomposition.n_extreme} rows have a {propensity} outside [{eps}, {1 - eps}] (weak positivity); "
                     "not trimmed")
    settings = {**settings, "sfm": str(sfm), "learner": decomposition.settings["learner"],
                "known_means": decomposition.settings["known_means"], "n_rep": decomposition.settings["n_rep"],
                "counts": {"n": decomposition.n, "n_x0": decomposition.n_x0, "n_x1": decomposition.n_x1,
                           "n_trimmed": decomposition.n_trimmed}}
    return ContrastAudit(sfm=sfm, predictors=list(predictors), decomposition=decomposition, parity=parity, cookbook=cookbook,
                       settings=settings, notes=notes)
