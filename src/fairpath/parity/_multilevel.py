"""The audit of a protected attribute with K levels: every contrast's audit, one Cookbook family, one verdict per predictor."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fairpath._io import write_csv, replaces_outputs
from fairpath._results import ReadOnly, ResultMixin, result_frame, write_json
from fairpath._vocabulary import PATHWAYS
from fairpath.parity._cookbook import CERTIFIED, NOT_ESTIMABLE, VIOLATION
from fairpath._stats import format_p
from fairpath.report import compact_digits
from fairpath.parity._verdict import verdict_sentence

# A Cookbook verdict's tone in the verdict matrix (see fairpath.report.matrix_html).
VERDICT_TONES = {VIOLATION: "bad", CERTIFIED: "good", NOT_ESTIMABLE: "na"}
NO_VIOLATION_TONE = "none"


class MultiLevelAudit(ResultMixin):
    """The audit of every contrast of a protected attribute with K levels.

    Attributes
    ----------
    decomposition_ : the :class:`~fairpath.causal.MultiLevelDecomposition` of Y and every predictor.
    cookbook_ : the Cookbook over every contrast (``tests_`` has a ``contrast`` column; Holm over contrasts × pathways
        per predictor); its ``overall_`` is one verdict per predictor over all contrasts.
    audits_ : contrast -> :class:`AuditResult` of that contrast (its decomposition, predictive parity on the pair's rows
        and its Cookbook tests, adjusted over the whole family).
    """

    sfm = ReadOnly()
    predictors = ReadOnly()
    decomposition_ = ReadOnly()
    cookbook_ = ReadOnly()
    audits_ = ReadOnly()
    settings = ReadOnly()
    notes_ = ReadOnly()

    def __init__(self, sfm, predictors, decomposition_, cookbook_, audits_, settings, notes_):
        self.sfm = sfm
        self.predictors = list(predictors)
        self.decomposition_ = decomposition_
        self.cookbook_ = cookbook_
        self.audits_ = dict(audits_)
        self.settings = settings
        self.notes_ = notes_

    @property
    def contrasts(self) -> list[str]:
        return list(self.audits_)

    @property
    def status(self) -> dict[str, str]:
        """SUCCESS or FAIL per predictor, over every estimable contrast (NOT ESTIMABLE where no test is)."""
        return {p: overall["status"] for p, overall in self.cookbook_.overall_.items()}

    @property
    def percent(self) -> bool:
        return next(iter(self.audits_.values())).percent

    def verdict_lines(self) -> list[str]:
        """One verdict per predictor over every contrast, with the Holm p of each violation shown."""
        return [verdict_sentence(self.cookbook_, p, percent=self.percent) for p in self.predictors]

    def verdict_cells(self, predictor: str) -> pd.DataFrame:
        """Contrast × pathway cells (text, tone) of one predictor: the tested quantity [CI] (in pp for a 0/1 outcome) and its
        Holm p, coloured by verdict; "not estimable" where the test is left out of the family."""
        tests = self.cookbook_.tests_[self.cookbook_.tests_["predictor"] == predictor]
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
        """The decomposition's table (with ``contrast`` and the simultaneous intervals), then every contrast's predictive parity."""
        parity = [p.to_frame().assign(contrast=name) for name, audit in self.audits_.items() for p in audit.parity_.values()]
        return result_frame(pd.concat([self.decomposition_.to_frame(), *parity], ignore_index=True))

    def to_dict(self) -> dict:
        return {
            "sfm": self.sfm.to_dict(), "predictors": self.predictors, "status": self.status, "settings": self.settings,
            "decomposition": self.decomposition_.to_dict(), "cookbook": self.cookbook_.to_dict(),
            "contrasts": {name: {"status": audit.status, "cookbook": audit.cookbook_.to_dict(),
                                 "predictive_parity": {p: r.to_dict() for p, r in audit.parity_.items()}, "notes": audit.notes_}
                          for name, audit in self.audits_.items()},
            "notes": self.notes_,
        }

    def _repr_fields(self) -> dict:
        return {"predictors": self.predictors, "contrasts": len(self.contrasts), "status": self.status}

    def summary(self) -> str:
        lines = [*self.verdict_lines(), f"MultiLevelAudit for {self.sfm}: {len(self.contrasts)} contrasts", self.decomposition_.summary(),
                 self.cookbook_.summary()]
        lines += [f"note: {note}" for note in self.notes_]
        return "\n".join(lines)

    def plot(self, ax=None, *, outcome: str | None = None):
        """The forest plot of the decomposition (every contrast's effects, marginal and simultaneous intervals)."""
        return self.decomposition_.plot(ax, outcome=outcome)

    @replaces_outputs
    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write report.html (verdict matrices, forest plots, links to each contrast's report), results.json,
        estimates.csv, cookbook.csv, and each contrast's audit into contrasts/<n>-<contrast>/."""
        from fairpath.parity._report import contrast_folder, write_multilevel_audit_report

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {}
        for position, (name, audit) in enumerate(self.audits_.items(), start=1):
            paths[f"contrast {name}"] = audit.save(out / "contrasts" / contrast_folder(position, name))["report"]
        paths["report"] = write_multilevel_audit_report(self, out / "report.html")
        paths["results"] = write_json(self.to_dict(), out / "results.json")
        for name, frame in {"estimates": self.to_frame(), "cookbook": self.cookbook_.to_frame()}.items():
            paths[name] = out / f"{name}.csv"
            write_csv(frame, paths[name])
        return paths
