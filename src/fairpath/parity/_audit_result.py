"""The result of :func:`fairpath.parity.audit`: every contrast's audit (one for a binary X), one Cookbook family, one verdict
per predictor."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairpath._io import write_csv
from fairpath._results import ResultMixin, result_class, result_frame
from fairpath._vocabulary import PATHWAYS
from fairpath.causal import SFM, CausalDecomposition
from fairpath._validation import validate_params
from fairpath.parity._contrast_audit import ContrastAudit
from fairpath.parity._cookbook import CERTIFIED, NOT_ESTIMABLE, VIOLATION, CookbookResult
from fairpath._stats import format_p
from fairpath.report import compact_digits
from fairpath.parity._verdict import verdict_sentence

# A Cookbook verdict's tone in the verdict matrix (see fairpath.report.matrix_html).
VERDICT_TONES = {VIOLATION: "bad", CERTIFIED: "good", NOT_ESTIMABLE: "na"}
NO_VIOLATION_TONE = "none"


@result_class
class AuditResult(ResultMixin):
    """Decomposition, predictive parity and Cookbook verdicts for one or more predictors, for every contrast of X's levels.

    A binary X (``sfm.x1`` given) has one contrast; its summary, report and plot are then that contrast's audit's.

    Attributes
    ----------
    decomposition : the :class:`~fairpath.causal.CausalDecomposition` of Y and every predictor.
    cookbook : the Cookbook over every contrast (with several, ``tests`` has a ``contrast`` column and Holm runs over
        contrasts × pathways per predictor); its ``overall`` is one verdict per predictor over all contrasts.
    audits : contrast -> :class:`ContrastAudit` of that contrast (its decomposition, predictive parity on the pair's rows
        and its Cookbook tests, adjusted over the whole family); :meth:`for_contrast` picks one.
    settings : every setting needed to reproduce the audit, with counts and package versions.
    notes : warnings worth reading (excluded rows, predictors equal to Y, trimmed rows, ...).
    """

    sfm: SFM
    predictors: list[str]
    decomposition: CausalDecomposition
    cookbook: CookbookResult
    audits: dict[str, ContrastAudit]
    settings: dict
    notes: list[str]

    @property
    def contrasts(self) -> list[str]:
        return list(self.audits)

    @property
    def single(self) -> bool:
        """Whether there is one contrast (a binary X)."""
        return self.decomposition.single

    def for_contrast(self, contrast: str | None = None) -> ContrastAudit:
        """The :class:`ContrastAudit` of one contrast (the only one when ``contrast`` is left out): its predictive
        parity (``parity``), its Cookbook tests and its sentences."""
        return self.audits[self.decomposition.contrast_name(contrast)]

    @property
    def status(self) -> dict[str, str]:
        """SUCCESS or FAIL per predictor, over every estimable contrast (NOT ESTIMABLE where no test is)."""
        return {p: overall["status"] for p, overall in self.cookbook.overall.items()}

    @property
    def percent(self) -> bool:
        """Whether effects are said in percentage points (a 0/1 outcome)."""
        return next(iter(self.audits.values())).percent

    def verdict_line(self, predictor: str) -> str:
        """``predictor``'s Cookbook verdict over every contrast in one sentence, in the outcome's units, with the p of its claim."""
        return verdict_sentence(self.cookbook, predictor, percent=self.percent)

    def verdict_lines(self) -> list[str]:
        """What was found, first: one verdict per predictor over every contrast with the p of its claim; for a single
        contrast, then its predictive parity and what the BN set implies for it (:meth:`ContrastAudit.verdict_lines`)."""
        if self.single:
            return self.for_contrast().verdict_lines()
        return [self.verdict_line(p) for p in self.predictors]

    def verdict_cells(self, predictor: str) -> pd.DataFrame:
        """Contrast × pathway cells (text, tone) of one predictor: the tested quantity [CI] (in pp for a 0/1 outcome) and its
        Holm p, coloured by verdict; "not estimable" where the test is left out of the family."""
        tests = self.cookbook.tests[self.cookbook.tests["predictor"] == predictor]
        digits = compact_digits(tests[["ci_low", "ci_high"]].to_numpy().ravel())

        def short(value: float) -> str:  # pp with one decimal, or three significant digits: a cell must stay narrow
            return f"{100 * value:+.1f}" if self.percent else f"{value:+.{digits}f}"

        cells = {}
        for pathway in PATHWAYS:
            rows = tests[tests["pathway"] == pathway].set_index("contrast").loc[self.contrasts]
            in_bn = bool(rows["in_bn"].iloc[0])
            column = f"{pathway}: Ctf(ŷ) − Ctf(y)" if in_bn else f"{pathway}: Ctf(ŷ)"
            cells[column] = [(NOT_ESTIMABLE, VERDICT_TONES[NOT_ESTIMABLE]) if row.verdict == NOT_ESTIMABLE else
                             (f"{short(row.estimate)} [{short(row.ci_low)}, {short(row.ci_high)}]\nHolm p {format_p(row.p_holm)}",
                              VERDICT_TONES.get(row.verdict, NO_VIOLATION_TONE)) for row in rows.itertuples()]
        return pd.DataFrame(cells, index=self.contrasts)

    def to_frame(self) -> pd.DataFrame:
        """The decomposition's table (with ``contrast`` and the simultaneous intervals), then every contrast's predictive
        parity (with its ``contrast``)."""
        parity = [p.to_frame().assign(contrast=name) for name, audit in self.audits.items() for p in audit.parity.values()]
        return result_frame(pd.concat([self.decomposition.to_frame(), *parity], ignore_index=True))

    def to_dict(self) -> dict:
        return {
            "sfm": self.sfm.to_dict(), "predictors": self.predictors, "status": self.status, "settings": self.settings,
            "decomposition": self.decomposition.to_dict(), "cookbook": self.cookbook.to_dict(),
            "contrasts": {name: {"status": audit.status, "cookbook": audit.cookbook.to_dict(),
                                 "predictive_parity": {p: r.to_dict() for p, r in audit.parity.items()}, "notes": audit.notes}
                          for name, audit in self.audits.items()},
            "notes": self.notes,
        }

    def _repr_fields(self) -> dict:
        return {"predictors": self.predictors, "bn": self.settings["bn"], "contrasts": len(self.contrasts), "status": self.status}

    def summary(self) -> str:
        """A single contrast's audit summary; with several, the verdicts, the decomposition and the Cookbook over every contrast."""
        if self.single:
            return self.for_contrast().summary()
        lines = [*self.verdict_lines(), f"AuditResult for {self.sfm}: {len(self.contrasts)} contrasts", self.decomposition.summary(),
                 self.cookbook.summary()]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def plot(self, ax=None, *, outcome: str | None = None):
        """A single contrast's audit plot (the decomposition of Y and every predictor, predictor bars coloured by verdict,
        :meth:`ContrastAudit.plot`; ``outcome`` unused); with several, the forest plot of the decomposition (every
        contrast's effects, marginal and simultaneous intervals)."""
        if self.single:
            return self.for_contrast().plot(ax)
        return self.decomposition.plot(ax, outcome=outcome)

    def _repr_html_(self) -> str:
        """A single contrast's notebook view (:meth:`ContrastAudit._repr_html_`); with several, the verdicts and forest plot."""
        if self.single:
            return self.for_contrast()._repr_html_()
        return super()._repr_html_()

    def _save_files(self, out: Path) -> dict[str, Path]:
        """A single contrast's files (cookbook.csv, ppm_bins.csv); with several, cookbook.csv and each contrast's audit
        saved into contrasts/<n>-<contrast>/ (its report linked from this one)."""
        from fairpath.parity._report import contrast_folder

        if self.single:
            return self.for_contrast()._save_files(out)
        paths = {f"contrast {name}": audit.save(out / "contrasts" / contrast_folder(position, name))["report"]
                 for position, (name, audit) in enumerate(self.audits.items(), start=1)}
        return {**paths, "cookbook": write_csv(self.cookbook.to_frame(), out / "cookbook.csv")}

    @validate_params(CausalDecomposition.sensitivity.parameter_constraints)
    def sensitivity(self, *, cf_y: float = 0.03, cf_d: float = 0.03, rho: float = 1.0, level: float | None = None,
                    benchmarks=None):
        """The decomposition's :meth:`~fairpath.causal.CausalDecomposition.sensitivity` (Y, every predictor and each
        predictor's paired difference from Y), with ``verdicts``: each Cookbook verdict and the confounding strength at
        which it would change (:mod:`fairpath.parity._robustness`). ``benchmarks``:
        :func:`~fairpath.causal.confounder_benchmarks` of ``audit.decomposition``."""
        from fairpath.parity._robustness import verdict_robustness

        bounds = self.decomposition.sensitivity(cf_y=cf_y, cf_d=cf_d, rho=rho, level=level, benchmarks=benchmarks)
        return bounds.with_verdicts(verdict_robustness(self.cookbook, bounds))

    def _write_report(self, path: Path) -> Path:
        """The report: a single contrast's audit report; with several, verdict matrices, forest plots and links to each
        contrast's report."""
        from fairpath.parity._report import write_audit_report, write_multilevel_audit_report

        return write_audit_report(self.for_contrast(), path) if self.single else write_multilevel_audit_report(self, path)
