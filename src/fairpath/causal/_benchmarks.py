"""A confounder as strong as an observed column (Cinelli & Hazlett 2020; long story short, section 5): the
decomposition refitted without each Z or W column gives the strengths that column has, in the bounds' parameters."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._learners import PRESETS
from fairpath._validation import Columns, Frame, Optional, validate_params
from fairpath.causal._decompose import decompose
from fairpath.causal._sensitivity import benchmark_rows


@validate_params({"data": Frame(), "covariates": Optional(Columns())})
def confounder_benchmarks(decomposition, data: pd.DataFrame, covariates=None) -> pd.DataFrame:
    """The strengths a confounder as strong as each observed column would have, for every measure of ``decomposition``.

    Each of ``covariates`` (default: every Z and W column of the model) is left out and the decomposition refitted on
    ``data`` (the table it was fitted on) with the same settings and seed; comparing the two fits gives, per contrast,
    subject (outcome or predictor) and measure, cf_y = (σ²_without − σ²_with)/σ²_without (the share of the residual
    variation the column explains), cf_d = (ν²_with − ν²_without)/ν²_with (the share of the representer's) and |ρ| (from
    the change of the estimate), the largest over the measure's regression parts. Pass the table to
    ``decomposition.sensitivity(benchmarks=...)``, which adds the bias bound they give and marks them on its plot.

    Parameters
    ----------
    decomposition : a :class:`~fairpath.causal.CausalDecomposition` (or one contrast's
        :class:`~fairpath.causal.ContrastDecomposition`; an audit's is ``audit.decomposition``), fitted with a preset
        learner by name and no ``predictor_functions``.
    data : the table it was fitted on (the rows are checked against its counts).
    covariates : the Z and W columns to benchmark (one refit each).
    """
    contrasts = getattr(decomposition, "decompositions", None) or {str(decomposition.sfm.x1): decomposition}
    sfm = decomposition.sfm
    settings = decomposition.settings
    observed = [*sfm.z, *sfm.w]
    covariates = observed if covariates is None else list(covariates)
    if not covariates:
        raise FairpathInputError(f"covariates names no column: name Z or W columns ({observed}) or leave it out for all")
    twice = sorted({c for c in covariates if covariates.count(c) > 1})
    if twice:
        raise FairpathInputError(f"covariates name {twice} more than once: name each column once")
    unknown = [c for c in covariates if c not in observed]
    if unknown:
        raise FairpathInputError(f"covariates {unknown} are not Z or W columns of the model; use any of {observed}")
    if settings["learner"] not in PRESETS or settings.get("known_means"):
        raise FairpathInputError(f"the benchmarks refit the decomposition without each column, which needs its learner by name "
                                 f"{PRESETS} and no predictor_functions; this one has learner {settings['learner']!r}, known "
                                 f"means {settings.get('known_means')}")
    predictors = [name for name in next(iter(contrasts.values())).outcomes if name != sfm.y]
    options = {key: settings[key] for key in ("method", "learner", "n_folds", "seed", "level", "eps", "trim", "n_rep", "measures")}
    rows = []
    for column in covariates:
        short_sfm = replace(sfm, z=tuple(c for c in sfm.z if c != column), w=tuple(c for c in sfm.w if c != column))
        with warnings.catch_warnings():  # the overlap warnings were given by the decomposition itself
            warnings.simplefilter("ignore")
            short = decompose(data, short_sfm, predictors, contrasts=settings.get("contrasts", "reference"), progress=False, **options)
        for contrast, long in contrasts.items():
            refitted = short.decompositions.get(contrast)
            if refitted is None or refitted.n != long.n:
                raise FairpathInputError(f"data gives contrast {contrast!r} {0 if refitted is None else refitted.n} rows, the "
                                         f"decomposition analysed {long.n}: pass the table it was fitted on")
            rows += benchmark_rows(long, refitted, column, contrast)
    return pd.DataFrame(rows, columns=["contrast", "subject", "measure", "column", "cf_y", "cf_d", "rho"])
