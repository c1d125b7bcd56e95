"""The audit: causal decomposition, predictive parity and the Business Necessity Cookbook in one result."""

from __future__ import annotations

import html
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import write_csv
from fairpath._progress import progress as progress_bar
from fairpath._results import ResultMixin, result_class, result_frame
from fairpath._validation import (
    MAX_BOOTSTRAP_DRAWS, Boolean, Columns, Draws, Frame, Integer, Optional, Options, Probability, Real, SchedulerAddress, Seed, Splits, Text, check_columns_arg,
    check_comparable_scales, local_workers, validate_params,
)
from fairpath._vocabulary import parse_bn
from fairpath.causal import CONTRASTS, METHODS, SFM, CausalDecomposition
from fairpath.parity._cookbook import CookbookResult, business_necessity_cookbook
from fairpath.parity._multilevel import MultiLevelAudit
from fairpath.parity._ppm import PredictiveParity, predictive_parity
from fairpath.parity._verdict import bn_parity_sentence, parity_sentence, verdict_sentence
from fairpath.report import package_versions
from fairpath.report import api_call
from fairpath.report import provenance as make_provenance

@result_class
class AuditResult(ResultMixin):
    """Decomposition, predictive parity and Cookbook verdicts for one or more predictors.

    Attributes
    ----------
    decomposition : :class:`fairpath.causal.CausalDecomposition` of Y and every predictor.
    parity : dict predictor -> :class:`PredictiveParity`.
    cookbook : :class:`CookbookResult` with the verdicts.
    settings : every setting needed to reproduce the audit, with counts and package versions.
    notes : warnings worth reading (excluded rows, predictors equal to Y, trimmed rows, ...).
    """

    sfm: SFM
    predictors: list[str]
    decomposition: CausalDecomposition
    parity: dict[str, PredictiveParity]
    cookbook: CookbookResult
    settings: dict
    notes: list[str]

    @property
    def contrasts(self) -> list[str]:
        """Its one contrast (named by x1), as a K-level audit lists each of its contrasts."""
        return self.decomposition.contrasts

    @property
    def audits(self) -> dict[str, "AuditResult"]:
        """{its contrast: itself}: a K-level audit's ``audits`` holds one audit per contrast, so a loop over them runs
        on a binary X too."""
        return {self.contrasts[0]: self}

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

def _keep_groups(data: pd.DataFrame, sfm, notes: list[str]) -> pd.DataFrame:
    """Rows whose X is x0 or x1, with a note for the others (decomposition and PPM then agree on rows); every row
    when every level is audited."""
    if sfm.x not in data.columns:
        raise FairpathInputError(f"protected attribute column {sfm.x!r} not found; columns: {list(data.columns)}")
    if not sfm.binary:
        return data
    keep = data[sfm.x].isin([sfm.x0, sfm.x1])
    if not keep.all():
        message = f"{int((~keep).sum())} rows excluded because {sfm.x!r} is neither {sfm.x0!r} nor {sfm.x1!r}"
        warnings.warn(message, stacklevel=4)  # the caller of audit, above its parameter check
        notes.append(message)
    return data.loc[keep]


def _note_identical(data: pd.DataFrame, sfm, predictors, notes: list[str]) -> None:
    for predictor in predictors:
        if np.array_equal(data[predictor].to_numpy(dtype=float), data[sfm.y].to_numpy(dtype=float)):
            message = (
                f"predictor {predictor!r} is identical to the outcome {sfm.y!r}: it reproduces every effect "
                "of Y exactly (differences are 0 with SE 0)"
            )
            warnings.warn(message, stacklevel=4)  # the caller of audit, above its parameter check
            notes.append(message)


@validate_params({
    "data": Frame(), "predictors": Columns(), "method": Options(METHODS), "n_folds": Integer(2), "seed": Seed(),
    "level": Probability(), "alpha": Probability(), "margin": Optional(Real(0.0, None, open_low=True)), "n_bins": Integer(2),
    "n_boot": Draws(), "eps": Real(0.0, 0.5, open_low=True, open_high=True), "trim": Boolean(), "nboot1": Integer(1, MAX_BOOTSTRAP_DRAWS),
    "n_rep": Splits(), "workers": Optional(local_workers()), "scheduler": Optional(SchedulerAddress()), "title": Optional(Text()),
    "data_label": Text("naming the data the rows are, e.g. 'observed'"), "progress": Boolean(), "contrasts": Options(CONTRASTS),
})
def audit(
    data: pd.DataFrame,
    sfm,
    predictors,
    bn,
    *,
    predictor_functions=None,
    method: str = "debiasing",
    learner=None,
    n_folds: int = 5,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = 0.05,
    margin: float | None = None,
    n_bins: int = 10,
    n_boot: int = 200,
    eps: float = 0.01,
    trim: bool = False,
    nboot1: int = 1,
    n_rep: int | str = "auto",
    contrasts: str = "reference",
    scheduler=None,
    workers: int | None = None,
    title: str | None = None,
    descriptions: dict[str, str] | None = None,
    data_label: str = "observed",
    provenance: dict | None = None,
    progress: bool = True,
) -> AuditResult | MultiLevelAudit:
    """Audit predictors against an outcome under a business-necessity set ``bn`` (subset of DE, IE, SE).

    Runs :func:`fairpath.causal.decompose` on Y and every predictor (``predictor_functions``, ``method``,
    ``learner``, ``n_folds``, ``eps``, ``trim``, ``nboot1``, ``n_rep`` are passed to it; a predictor's
    function makes its E[Ŷ | x, z, w] exact instead of estimated), the predictive parity measures of
    every predictor (``n_bins`` quantile bins, ``n_boot`` bootstrap draws), and the Business Necessity
    Cookbook (family-wise level ``alpha``, equivalence margin ``margin``). Every randomness is seeded
    by ``seed``. With ``sfm.x1`` None every level of X is audited against ``sfm.x0`` (or every pair, ``contrasts="pairs"``):
    one decomposition of every contrast, the Cookbook Holm-adjusted over contrasts × pathways, predictive parity per
    contrast, returned as a :class:`MultiLevelAudit`. ``scheduler`` / ``workers`` run the medDML refits on Dask (see
    ``decompose``). ``descriptions`` (predictor -> what it is) are shown in the report;
    ``data_label`` says which data the rows are (``"observed"``, or e.g. ``"on the fair twins"``): the
    outcome is named with it everywhere, since its effects differ from one data set to another; ``provenance``
    (see :func:`fairpath.report.provenance`) records the input; by default it records this call with
    the SHA-256 of the data's values.
    """
    from fairpath._sfm import check_sfm
    from fairpath.causal import decompose, prepare_data

    check_sfm(sfm)
    predictors = check_columns_arg("predictors", predictors)
    if not predictors:
        raise FairpathInputError("no predictor column given; name at least one column holding the predictions")
    if sfm.y in predictors:
        raise FairpathInputError(f"predictor {sfm.y!r} is the outcome column itself; name the column of the predictions")
    bn = parse_bn(bn)
    notes: list[str] = []
    data = _keep_groups(data, sfm, notes)
    prepare_data(data, sfm, [sfm.y, *predictors])  # every column problem is reported before any fitting
    for predictor in predictors:
        check_comparable_scales(sfm.y, data[sfm.y], predictor, data[predictor])
    _note_identical(data, sfm, predictors, notes)

    record = provenance or make_provenance(call=api_call("fairpath.parity.audit", data, predictors=list(predictors), bn=list(bn), seed=seed),
                                           seed=seed)
    options = {"predictor_functions": predictor_functions, "method": method, "learner": learner, "n_folds": n_folds, "seed": seed,
               "level": level, "eps": eps, "trim": trim, "nboot1": nboot1, "n_rep": n_rep, "scheduler": scheduler, "workers": workers,
               "progress": progress, "provenance": record}
    parity_options = {"n_bins": n_bins, "n_boot": n_boot, "level": level, "seed": seed}
    # the decomposition's own values (learner, known_means, n_rep, counts) are set per contrast by contrast_audit
    settings = {
        "title": title or f"fairpath audit: {', '.join(predictors)} for {sfm.y}", "sfm": str(sfm), "bn": list(bn), "alpha": alpha,
        "margin": margin, "method": method, "learner": None, "known_means": None, "n_folds": n_folds, "seed": seed, "level": level,
        "n_bins": n_bins, "n_boot": n_boot, "eps": eps, "trim": trim, "nboot1": nboot1, "n_rep": None, "counts": None,
        "versions": package_versions(), "descriptions": dict(descriptions or {}), "data_label": data_label, "provenance": record,
    }
    if not sfm.binary:
        return audit_levels(data, sfm, predictors, bn, options=options, parity_options=parity_options, contrasts=contrasts, alpha=alpha,
                            margin=margin, notes=notes, settings=settings)
    steps = progress_bar(total=2 + len(predictors), desc="audit", enabled=progress, leave=False)
    parity = {}
    for predictor in predictors:  # first: cheap, and it reports an empty bin before any model is fitted
        steps.set_postfix_str(f"predictive parity of {predictor}")
        parity[predictor] = predictive_parity(data, sfm, predictor, **parity_options)
        steps.update()
    steps.set_postfix_str("decomposition")
    decomposition = decompose(data, sfm, predictors=predictors, **options)
    steps.update()
    steps.set_postfix_str("cookbook")
    cookbook = business_necessity_cookbook(decomposition, bn, predictors, alpha=alpha, margin=margin)
    steps.update()
    steps.close()
    return contrast_audit(sfm, predictors, decomposition, parity, cookbook, notes, settings)


def contrast_audit(sfm, predictors, decomposition, parity, cookbook, notes: list[str], settings: dict, *,
                   propensity: str = "propensity") -> AuditResult:
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
    return AuditResult(sfm=sfm, predictors=list(predictors), decomposition=decomposition, parity=parity, cookbook=cookbook,
                       settings=settings, notes=notes)


def audit_levels(data, sfm, predictors, bn, *, options: dict, parity_options: dict, contrasts: str, alpha: float, margin,
                 notes: list[str], settings: dict) -> MultiLevelAudit:
    """``audit`` for an SFM with ``x1`` None: one decomposition of every contrast, the Cookbook over all of them,
    predictive parity on each contrast's rows, and each contrast's :class:`AuditResult`."""
    from fairpath.causal import decompose

    decomposition = decompose(data, sfm, predictors=predictors, contrasts=contrasts, **options)
    cookbook = business_necessity_cookbook(decomposition, bn, predictors, alpha=alpha, margin=margin)
    audits = {}
    steps = progress_bar(total=len(decomposition.contrasts), desc="predictive parity per contrast", enabled=options["progress"],
                         leave=False)
    for name, contrast in decomposition.decompositions.items():
        rows = data.loc[data[sfm.x].isin([contrast.sfm.x0, contrast.sfm.x1])]
        parity = {p: predictive_parity(rows, contrast.sfm, p, **parity_options) for p in predictors}
        audits[name] = contrast_audit(contrast.sfm, predictors, contrast, parity, cookbook.for_contrast(name), notes, settings,
                                      propensity="share-balanced propensity")
        steps.update()
    steps.close()
    settings = {**settings, "contrasts": contrasts, "levels": decomposition.levels, "learner": decomposition.settings["learner"],
                "n_rep": decomposition.settings["n_rep"], "known_means": decomposition.settings["known_means"],
                "counts": decomposition.counts, "multiplicity": cookbook.multiplicity}
    # what the family left out, then each contrast's own notes (overlap, trimming), named by the contrast
    notes = [*notes, *decomposition.notes,
             *(f"{name}: {note}" for name, audit in audits.items() for note in audit.notes if note not in notes)]
    return MultiLevelAudit(sfm=sfm, predictors=list(predictors), decomposition=decomposition, cookbook=cookbook, audits=dict(audits),
                           settings=settings, notes=notes)
