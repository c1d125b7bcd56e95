"""The audit: causal decomposition, predictive parity and the Business Necessity Cookbook in one result."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._levels import contrast_codes
from fairpath._progress import progress as progress_bar
from fairpath._validation import (
    MAX_BOOTSTRAP_DRAWS, Boolean, Columns, Draws, Frame, Integer, Optional, Options, Probability, Real, SchedulerAddress, Seed, Splits, Text, check_columns_arg,
    check_comparable_scales, local_workers, validate_params,
)
from fairpath._vocabulary import parse_bn
from fairpath.causal import CONTRASTS, METHODS
from fairpath.parity._audit_result import AuditResult
from fairpath.parity._contrast_audit import contrast_audit
from fairpath.parity._cookbook import business_necessity_cookbook
from fairpath.parity._ppm import predictive_parity
from fairpath.report import package_versions
from fairpath.report import api_call
from fairpath.report import provenance as make_provenance


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
) -> AuditResult:
    """Audit predictors against an outcome under a business-necessity set ``bn`` (subset of DE, IE, SE).

    Runs :func:`fairpath.causal.decompose` on Y and every predictor (``predictor_functions``, ``method``,
    ``learner``, ``n_folds``, ``eps``, ``trim``, ``nboot1``, ``n_rep`` are passed to it; a predictor's
    function makes its E[Ŷ | x, z, w] exact instead of estimated), the predictive parity measures of
    every predictor (``n_bins`` quantile bins, ``n_boot`` bootstrap draws), and the Business Necessity
    Cookbook (family-wise level ``alpha``, equivalence margin ``margin``). Every randomness is seeded
    by ``seed``. With ``sfm.x1`` None every level of X is audited against ``sfm.x0`` (or every pair, ``contrasts="pairs"``):
    one decomposition of every contrast, the Cookbook Holm-adjusted over contrasts × pathways, predictive parity per
    contrast. The result is an :class:`AuditResult` either way: a binary X is its one-contrast case. ``scheduler`` /
    ``workers`` run the medDML refits on Dask (see ``decompose``). ``descriptions`` (predictor -> what it is) are shown in the report;
    ``data_label`` says which data the rows are (``"observed"``, or e.g. ``"on the fair twins"``): the
    outcome is named with it everywhere, since its effects differ from one data set to another; ``provenance``
    (see :func:`fairpath.report.provenance`) records the input; by default it records this call with
    the SHA-256 of the data's values.
    """
    from fairpath._sfm import check_sfm
    from fairpath.causal import prepare_data

    check_sfm(sfm)
    predictors = check_columns_arg("predictors", predictors)
    if not predictors:
        raise FairpathInputError("no predictor column given; name at least one column holding the predictions")
    if sfm.y in predictors:
        raise FairpathInputError(f"predictor {sfm.y!r} is the outcome column itself; name the column of the predictions")
    bn = parse_bn(bn)
    notes: list[str] = []
    data = _keep_groups(data, sfm, notes)
    prepared = prepare_data(data, sfm, [sfm.y, *predictors])  # every column problem is reported before any fitting
    prepared.check_fold_sizes(sfm.x, n_folds)  # and a level too small to fit, before its predictive parity finds an empty bin
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
    return _audit_contrasts(data, sfm, predictors, bn, levels=prepared.levels, options=options, parity_options=parity_options, contrasts=contrasts,
                            alpha=alpha, margin=margin, notes=notes, settings=settings)


def _audit_contrasts(data, sfm, predictors, bn, *, levels: tuple, options: dict, parity_options: dict, contrasts: str, alpha: float, margin,
                     notes: list[str], settings: dict) -> AuditResult:
    """``audit`` once its arguments are checked: predictive parity on each contrast's rows (first: cheap, and it reports an
    empty bin before any model is fitted), one decomposition of every contrast, the Cookbook over all of them, and each
    contrast's :class:`ContrastAudit`."""
    from fairpath.causal import decompose

    pairs = [(levels[a], levels[b]) for a, b in contrast_codes(len(levels), contrasts)]  # the decomposition's contrasts, in its order
    steps = progress_bar(total=len(pairs) + 2, desc="audit", enabled=options["progress"], leave=False)
    parity = []
    for x0, x1 in pairs:
        steps.set_postfix_str(f"predictive parity, {x1} against {x0}")
        rows = data.loc[data[sfm.x].isin([x0, x1])]
        parity.append({p: predictive_parity(rows, sfm.for_contrast(x0, x1), p, **parity_options) for p in predictors})
        steps.update()
    steps.set_postfix_str("decomposition")
    decomposition = decompose(data, sfm, predictors=predictors, contrasts=contrasts, **options)
    steps.update()
    steps.set_postfix_str("cookbook")
    cookbook = business_necessity_cookbook(decomposition, bn, predictors, alpha=alpha, margin=margin)
    steps.update()
    steps.close()
    audits = {name: contrast_audit(contrast.sfm, predictors, contrast, contrast_parity,
                                   cookbook if decomposition.single else cookbook.for_contrast(name), notes, settings,
                                   propensity=decomposition.bounded_propensity)
              for (name, contrast), contrast_parity in zip(decomposition.decompositions.items(), parity)}
    settings = {**settings, "contrasts": contrasts, "levels": decomposition.levels, "learner": decomposition.settings["learner"],
                "n_rep": decomposition.settings["n_rep"], "known_means": decomposition.settings["known_means"],
                "counts": decomposition.counts, "multiplicity": cookbook.multiplicity}
    if decomposition.single:
        notes = next(iter(audits.values())).notes
    else:  # what the family left out, then each contrast's own notes (overlap, trimming), named by the contrast
        notes = [*notes, *decomposition.notes,
                 *(f"{name}: {note}" for name, audit in audits.items() for note in audit.notes if note not in notes)]
    return AuditResult(sfm=sfm, predictors=list(predictors), decomposition=decomposition, cookbook=cookbook, audits=audits,
                       settings=settings, notes=notes)
