"""The result of :func:`fairpath.causal.decompose`: one binary decomposition per contrast of X's levels (one contrast,
x0 → x1, for a binary X), and simultaneous inference over the contrasts.

Simultaneous intervals (max-|t|). For one outcome and one measure, contrast c's estimate θ̂_c is the mean of its
per-row contributions φ_c over its pair's rows P_c (n_c of them). As a functional of the whole sample its influence
function is 1(i ∈ P_c)·n/n_c·(φ_c,i − θ_c), so

    Cov(θ̂_c, θ̂_d) ≈ Σ_{i ∈ P_c ∩ P_d} (φ_c,i − θ̂_c)(φ_d,i − θ̂_d) / (n_c·n_d),

which is not zero: the contrasts share the reference group's rows. The Gaussian multiplier bootstrap of
max_c |t_c| (Chernozhukov, Chetverikov & Kato 2013) draws Σ_i ξ_i·u_c,i with ξ_i ~ N(0, 1); given the data those
draws are exactly N(0, R), R the correlation of the influence functions above, so they are drawn from N(0, R)
directly (``SIMULTANEOUS_DRAWS`` of them, seeded by the decomposition's seed). The critical value c_α is the
``level`` quantile of max_c |T_c|, the simultaneous interval θ̂_c ± c_α·se_c (se_c the contrast's own SE, over
every cross-fitting split), and the single-step adjusted p of contrast c is P(max |T| ≥ |t_c|) (far in the tail,
where the draws cannot tell it, its Bonferroni bound). With one contrast (a binary X) there is nothing to adjust
for: the simultaneous intervals and p are the marginal ones exactly (a percentile interval included).

The family. A contrast flagged not estimable (most of its rows lack overlap: the binary analysis' rule,
:func:`~fairpath.causal._decompose.overlap_diagnostic`, on its rows) is left out of the family, and so is a contrast's
measure whose estimate or SE is not finite: their simultaneous intervals and adjusted p are NaN and the result's
``notes`` say why. When no contrast is estimable, every contrast stays in the family and the result is flagged not
estimable as a whole, as a binary decomposition is.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, confint_frame, estimate_row, result_frame
from fairpath._seeds import SIMULTANEOUS, child_rng
from fairpath._stats import Estimate, z_value
from fairpath._validation import Optional, Probability, Real, validate_params
from fairpath._sfm import SFM
from fairpath.causal._contrast import SENSITIVITY_PARAMETERS, ContrastDecomposition

CONTRASTS = ("reference", "pairs")
# The critical value's Monte Carlo SD is then about 0.006 (3 contrasts at 95%: 20 seeds of 2.387 ± 0.0065).
SIMULTANEOUS_DRAWS = 100_000
# An adjusted p from the draws needs this many of them beyond |t| (its relative error is then below a third).
MIN_TAIL_DRAWS = 10
FOREST_MEASURES = ("tv", "ctfde", "ctfie", "ctfse")


@result_class
class CausalDecomposition(ResultMixin):
    """Counterfactual decomposition of X's effect on Y and on each predictor, for every contrast of X's levels.

    A binary X (``sfm.x1`` given) has one contrast, x0 → x1, named by x1; with ``sfm.x1`` None every level is compared with
    the reference (or every pair). ``decompositions`` maps each contrast's name (the compared level, or ``"b vs a"`` for a
    pair without the reference) to its :class:`~fairpath.causal.ContrastDecomposition`: the binary analysis of that pair's
    rows, with the outcome regressions shared by all contrasts. Every method takes ``contrast=`` and needs it only when
    there are several (``result.estimate("ctfde")`` for a binary X, ``result.estimate("ctfde", contrast="black")`` for K
    levels). ``to_frame()`` adds a ``contrast`` column and the simultaneous interval (``simultaneous_low``,
    ``simultaneous_high``: family-wise over the contrasts, per outcome and measure, at the same level; the marginal one
    for a single contrast) and the p-values (``p_value``, ``p_simultaneous``) beside each marginal interval.
    """

    sfm: SFM
    decompositions: dict[str, ContrastDecomposition]
    contrast_rows: dict  # per contrast, per split: positions of its rows among the analysed rows
    n_rows: int
    settings: dict
    counts: dict
    seconds: float
    # filled on request: (outcome, measure) -> its contrasts and max-|t| draws; -> the contrasts left out of its family, and why
    _families: dict = field(default_factory=dict, init=False, repr=False)
    _left_out: dict = field(default_factory=dict, init=False, repr=False)

    # -- what was compared ------------------------------------------------------------------------
    @property
    def level(self) -> float:
        return self.settings["level"]

    @property
    def contrasts(self) -> list[str]:
        return list(self.decompositions)

    @property
    def n(self) -> int:
        """The rows analysed (every contrast's rows together)."""
        return self.counts["n"]

    @property
    def levels(self) -> list:
        """X's levels, the reference first."""
        return list(self.settings["levels"])

    @property
    def outcomes(self) -> list[str]:
        return self._first.outcomes

    @property
    def measures(self) -> tuple[str, ...]:
        return self._first.measures

    @property
    def _first(self):
        return next(iter(self.decompositions.values()))

    def __getitem__(self, contrast: str) -> ContrastDecomposition:
        """The :class:`~fairpath.causal.ContrastDecomposition` of one contrast."""
        return self.for_contrast(contrast)

    def for_contrast(self, contrast: str | None = None) -> ContrastDecomposition:
        """The :class:`~fairpath.causal.ContrastDecomposition` of one contrast (the only one when ``contrast`` is left out)."""
        return self.decompositions[self.contrast_name(contrast)]

    @property
    def single(self) -> bool:
        """Whether there is one contrast (a binary X): its report, summary and plot are then that contrast's."""
        return len(self.decompositions) == 1

    @property
    def not_estimable(self) -> dict[str, str]:
        """{contrast: why} for each contrast flagged not estimable, as its binary analysis would be (most of its rows
        have a propensity, share-balanced for K levels, outside [eps, 1 − eps])."""
        eps = self.settings["eps"]
        return {name: f"{d.overlap['share_outside']:.0%} of its rows have a {self.bounded_propensity} outside [{eps}, {1 - eps}]"
                for name, d in self.decompositions.items() if not d.estimable}

    @property
    def bounded_propensity(self) -> str:
        """What the positivity bounds apply to: the propensity of a binary X, else the share-balanced one (``balance``),
        so that a rare level is not flagged for its rarity."""
        return "propensity" if self.sfm.binary else "share-balanced propensity"

    @property
    def family(self) -> list[str]:
        """The contrasts of the simultaneous intervals and of the Cookbook's Holm family: the estimable ones, or every
        contrast when none is (the result is then flagged not estimable, as a binary decomposition)."""
        return [name for name in self.contrasts if name not in self.not_estimable] or self.contrasts

    @property
    def estimable(self) -> bool:
        """False when no contrast is estimable; a contrast that is not is left out of the family (:attr:`family`)."""
        return len(self.not_estimable) < len(self.contrasts)

    def left_out(self, measure: str, outcome: str | None = None) -> dict[str, str]:
        """{contrast: why} for the contrasts left out of the simultaneous family of ``measure``: not estimable, or
        its estimate or SE is not finite (per-row contributions with NaN or ±inf)."""
        key = (self._outcome(outcome), measure)
        if key not in self._left_out:
            family, reasons = self.family, self.not_estimable
            out = {}
            for name in self.contrasts:
                e = self.estimate(measure, outcome, contrast=name)
                if name not in family:
                    out[name] = f"not estimable: {reasons[name]}"
                elif not (np.isfinite(e.estimate) and np.isfinite(e.se)):
                    out[name] = f"not estimable: its {measure} estimate or SE is not finite (per-row contributions with NaN or ±inf)"
            self._left_out[key] = out
        return dict(self._left_out[key])

    @property
    def notes(self) -> list[str]:
        """What was left out of the simultaneous family and why, one sentence per contrast (and outcome)."""
        eps = self.settings["eps"]
        if not self.estimable:
            notes = [f"NOT ESTIMABLE: most rows have a {self.bounded_propensity} outside [{eps}, {1 - eps}]; the groups barely overlap, "
                     "so the effects are not estimable from these data" if self.single else
                     f"NOT ESTIMABLE: in every contrast most rows have a {self.bounded_propensity} outside [{eps}, {1 - eps}]; "
                     "the simultaneous intervals span every contrast, and none of them is to be trusted"]
        else:
            notes = [f"contrast {name!r} is NOT ESTIMABLE ({why}): left out of the family, so it has no simultaneous interval, "
                     "adjusted p or Cookbook test" for name, why in self.not_estimable.items()]
        for outcome in self.outcomes:
            measures: dict[str, list[str]] = {}
            for measure in self.measures:
                for name in self.left_out(measure, outcome):
                    if name in self.family:
                        measures.setdefault(name, []).append(measure)
            notes += [f"contrast {name!r}, {outcome}: {', '.join(names)} NOT ESTIMABLE (estimate or SE not finite): left out of "
                      "the family of these measures" for name, names in measures.items()]
        return notes

    @validate_params(SENSITIVITY_PARAMETERS)
    def sensitivity(self, *, cf_y: float = 0.03, cf_d: float = 0.03, rho: float = 1.0, level: float | None = None,
                    benchmarks=None):
        """Bounds of every measure of every contrast under an unobserved confounder of strength ``cf_y`` (the share of
        the outcome's residual variation it explains), ``cf_d`` (the share of the weights' variation) and correlation
        ``rho``; confidence bounds at ``level`` (default: the decomposition's; per contrast, not simultaneous) and
        robustness values: a :class:`~fairpath.causal.SensitivityResult` (the maths: :mod:`fairpath.causal._sensitivity`).
        ``benchmarks``: the strengths of confounders as strong as observed columns
        (:func:`~fairpath.causal.confounder_benchmarks`), marked on the plot and listed in the summary and report."""
        from fairpath.causal._sensitivity_result import sensitivity_result

        return sensitivity_result(self.sfm, self.decompositions, cf_y=cf_y, cf_d=cf_d, rho=rho, level=level, settings=self.settings,
                                  benchmarks=benchmarks)

    # -- inference ----------------------------------------------------------------------------------
    def contrast_name(self, contrast: str | None = None) -> str:
        """The contrast named (checked, as text), or the one contrast when there is one."""
        if contrast is None:
            if self.single:
                return self.contrasts[0]
            raise FairpathInputError(f"this decomposition has {len(self.contrasts)} contrasts: name one with contrast=, "
                                     f"one of {self.contrasts}")
        if str(contrast) not in self.decompositions:
            if self.single:
                raise FairpathInputError(f"no contrast {contrast!r}: this decomposition has one, {self.contrasts[0]!r} "
                                         f"({self.sfm.x} = {self.sfm.x1} against {self.sfm.x0}); leave contrast out or pass it")
            raise FairpathInputError(f"no contrast {contrast!r}; the contrasts are {self.contrasts}")
        return str(contrast)

    def estimate(self, measure: str, outcome: str | None = None, *, contrast: str | None = None) -> Estimate:
        """Estimate, SE and marginal CI of one measure of one contrast (the only one when ``contrast`` is left out)."""
        return self.for_contrast(contrast).estimate(measure, outcome)

    def difference(self, measure: str, outcome: str, reference: str | None = None, *, contrast: str | None = None) -> Estimate:
        """One contrast's measure(outcome) − measure(reference), paired (:meth:`ContrastDecomposition.difference`)."""
        return self.for_contrast(contrast).difference(measure, outcome, reference)

    def psi(self, x_z, x_w, x_y, outcome: str | None = None, *, contrast: str | None = None) -> Estimate:
        """One contrast's ψ(xz, xw, xy), its levels coded 0 (its x0) and 1 (its x1) (:meth:`ContrastDecomposition.psi`)."""
        return self.for_contrast(contrast).psi(x_z, x_w, x_y, outcome)

    def combination(self, terms, outcome: str | None = None, *, contrast: str | None = None) -> Estimate:
        """One contrast's signed sum of ψ terms (:meth:`ContrastDecomposition.combination`)."""
        return self.for_contrast(contrast).combination(terms, outcome)

    def pseudo_outcomes(self, outcome: str | None = None, *, contrast: str | None = None) -> pd.DataFrame:
        """One contrast's per-row contributions (:meth:`ContrastDecomposition.pseudo_outcomes`)."""
        return self.for_contrast(contrast).pseudo_outcomes(outcome)

    def _correlation(self, measure: str, outcome: str | None) -> tuple[list[str], np.ndarray]:
        """The contrasts of the family with a non-zero SE and the correlation of their influence functions (first split)."""
        columns, names = [], []
        left_out = self.left_out(measure, outcome)
        for name, decomposition in self.decompositions.items():
            if name in left_out:
                continue
            values = decomposition.pseudo_outcomes(outcome)[measure].to_numpy()
            centred = values - values.mean()
            if not np.any(centred):
                continue  # an exactly known value (e.g. Ctf-SE without Z): its interval is the point, whatever c is
            column = np.zeros(self.n_rows)
            column[self.contrast_rows[name][0]] = centred / len(centred)
            columns.append(column)
            names.append(name)
        if not columns:
            return [], np.empty((0, 0))
        return names, column_correlation(np.column_stack(columns))

    def _max_t_draws(self, measure: str, outcome: str | None) -> tuple[list[str], np.ndarray | None]:
        """The contrasts in the family and max_c |T_c| over ``SIMULTANEOUS_DRAWS`` Gaussian draws with their
        correlation (None with one contrast)."""
        outcome = self._outcome(outcome)
        if (outcome, measure) not in self._families:
            self._first.estimate(measure, outcome)  # refuses an unknown outcome or measure, naming them
            if self.single:  # no family to adjust for, and no n-row correlation to build
                names, draws = [name for name in self.contrasts if name not in self.left_out(measure, outcome)], None
            else:
                names, correlation = self._correlation(measure, outcome)
                key = (self.outcomes.index(outcome), self.measures.index(measure))
                draws = None if len(names) <= 1 else _max_t(key, correlation, self.settings["seed"])
            self._families[(outcome, measure)] = (names, draws)
        return self._families[(outcome, measure)]

    def _outcome(self, outcome: str | None) -> str:
        return self.sfm.y if outcome is None else outcome

    @validate_params({"level": Optional(Probability())})
    def critical_value(self, measure: str, outcome: str | None = None, *, level: float | None = None) -> float:
        """c_α of the simultaneous intervals of ``measure`` over the contrasts (the normal quantile with one contrast)."""
        level = self.level if level is None else level
        _, draws = self._max_t_draws(measure, outcome)
        return z_value(level) if draws is None else float(np.quantile(draws, level))

    def simultaneous(self, measure: str, outcome: str | None = None, *, level: float | None = None) -> dict[str, tuple[float, float]]:
        """{contrast: (low, high)}: intervals of ``measure`` that cover every contrast's value at once with probability ``level``;
        (NaN, NaN) for a contrast left out of the family (:meth:`left_out`)."""
        critical = self.critical_value(measure, outcome, level=level)
        adjusted = self._max_t_draws(measure, outcome)[1] is not None
        left_out = self.left_out(measure, outcome)
        out = {}
        for name in self.contrasts:
            e = self.estimate(measure, outcome, contrast=name)
            if name in left_out:
                out[name] = (np.nan, np.nan)
            elif not adjusted:  # one contrast in the family, nothing to adjust for: the marginal interval (a percentile one too)
                out[name] = e.confint(self.level if level is None else level)
            else:
                out[name] = (e.estimate - critical * e.se, e.estimate + critical * e.se)
        return out

    @validate_params({"null": Real()})
    def p_value(self, measure: str, outcome: str | None = None, *, contrast: str | None = None, null: float = 0.0,
                simultaneous: bool = False) -> float:
        """Two-sided p of H0: the contrast's ``measure`` equals ``null``; with ``simultaneous`` adjusted for testing every
        contrast of the measure: single-step max-|t|, P(max_c |T_c| ≥ |t|) over the draws, or where fewer than
        ``MIN_TAIL_DRAWS`` draws reach |t| (too few to estimate it) Bonferroni's bound min(1, C·p), C contrasts, which
        is at least that probability. A contrast left out of the family (:meth:`left_out`) has no adjusted p (NaN)."""
        contrast = self.contrast_name(contrast)
        e = self.estimate(measure, outcome, contrast=contrast)
        names, draws = self._max_t_draws(measure, outcome)
        marginal = e.p_value(null)
        if simultaneous and contrast in self.left_out(measure, outcome):
            return float("nan")
        if not simultaneous or draws is None or contrast not in names:
            return marginal
        beyond = np.count_nonzero(draws >= abs(e.estimate - null) / e.se)
        return float(beyond / len(draws)) if beyond >= MIN_TAIL_DRAWS else min(1.0, len(names) * marginal)

    @validate_params({"level": Probability()})
    def confint(self, level: float = 0.95, *, simultaneous: bool = False) -> pd.DataFrame:
        """Every interval at ``level`` with its ``contrast``: marginal, or with ``simultaneous`` family-wise over the
        contrasts of each outcome and measure."""
        if not simultaneous:
            return confint_frame((({"subject": outcome, "measure": measure, "contrast": name},
                                   self.estimate(measure, outcome, contrast=name))
                                  for name in self.contrasts for outcome in self.outcomes for measure in self.measures), level)
        rows = []
        for outcome in self.outcomes:
            for measure in self.measures:
                for name, (low, high) in self.simultaneous(measure, outcome, level=level).items():
                    rows.append({"subject": outcome, "measure": measure, "contrast": name,
                                 "estimate": self.estimate(measure, outcome, contrast=name).estimate,
                                 "ci_low": low, "ci_high": high, "level": level})
        return pd.DataFrame(rows)[["subject", "measure", "estimate", "ci_low", "ci_high", "level", "contrast"]]

    # -- presentation ---------------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """One row per contrast, outcome and measure: the core columns (marginal interval), ``contrast``, the
        simultaneous interval at the same level and the p-values (marginal and adjusted) of H0: 0."""
        rows = []
        for outcome in self.outcomes:
            for measure in self.measures:
                bounds = self.simultaneous(measure, outcome)
                for name in self.contrasts:
                    e = self.estimate(measure, outcome, contrast=name)
                    rows.append(estimate_row(outcome, measure, e, contrast=name, simultaneous_low=bounds[name][0],
                                             simultaneous_high=bounds[name][1], p_value=e.p_value(),
                                             p_simultaneous=self.p_value(measure, outcome, contrast=name, simultaneous=True)))
        return result_frame(rows)

    def to_dict(self) -> dict:
        frame = self.to_frame()
        simultaneous = {
            name: {outcome: {row.measure: {"low": row.simultaneous_low, "high": row.simultaneous_high, "p": row.p_simultaneous}
                             for row in part.itertuples()} for outcome, part in by_contrast.groupby("subject", sort=False)}
            for name, by_contrast in frame.groupby("contrast", sort=False)
        }
        return {
            "sfm": self.sfm.to_dict(), "settings": self.settings, "counts": self.counts, "seconds": self.seconds,
            "level": self.level, "estimable": self.estimable, "not_estimable": self.not_estimable, "notes": self.notes,
            "simultaneous": {"method": "max-|t| Gaussian multiplier bootstrap over the contrasts' influence functions",
                             "family": "the estimable contrasts of one outcome and measure", "draws": SIMULTANEOUS_DRAWS},
            "contrasts": {name: {**d.to_dict(), "simultaneous": simultaneous[name]} for name, d in self.decompositions.items()},
        }

    def summary(self) -> str:
        """The binary summary of a single contrast; with several, each contrast's line under the family's."""
        if self.single:
            return self.for_contrast().summary()
        lines = [f"Causal decomposition of {self.sfm}, {len(self.contrasts)} contrasts "
                 f"({'every pair' if self.settings['contrasts'] == 'pairs' else f'each level against {self.sfm.x0!r}'})",
                 f"n = {self.counts['n']}; rows per level: "
                 + ", ".join(f"{level} {count}" for level, count in self.counts["per_level"].items()),
                 f"simultaneous {self.level:.0%} intervals: max-|t| over the contrasts, per outcome and measure"]
        lines += [f"note: {note}" for note in self.notes]
        for name, decomposition in self.decompositions.items():
            flag = "" if decomposition.estimable else ", NOT ESTIMABLE"
            lines.append(f"[{name}{flag}] " + "; ".join(decomposition.summary_line(outcome) for outcome in self.outcomes))
        return "\n".join(lines)

    def verdict_cells(self, outcome: str | None = None) -> pd.DataFrame:
        """Contrast × measure cells (text, tone) of the verdict matrix: each estimate with its simultaneous interval, the
        tone ``strong`` (that interval excludes 0), ``weak`` (only the marginal one does) or ``none``;
        :meth:`verdict_legend` names them."""
        from fairpath.causal._report import verdict_cells

        return verdict_cells(self, self._outcome(outcome))

    def verdict_legend(self) -> dict[str, str]:
        """What each tone of :meth:`verdict_cells` means."""
        from fairpath.causal._report import matrix_legend

        return matrix_legend(self.level, left_out=any(self.left_out(m, o) for o in self.outcomes for m in self.measures))

    def headline(self) -> list[str]:
        """What was found, first: per outcome (and contrast), TV and each pathway effect in percentage points (for outcomes
        within [0, 1]) with CI, level and p, and which are significant."""
        from fairpath.causal._report import multilevel_headline

        return self.for_contrast().headline() if self.single else multilevel_headline(self)

    def _write_report(self, path: Path) -> Path:
        """The report: a single contrast's pathway bars; with several, the verdict matrix and forest plot."""
        from fairpath.causal._report import write_decomposition_report, write_multilevel_report

        return write_decomposition_report(self.for_contrast(), path) if self.single else write_multilevel_report(self, path)

    def _repr_fields(self) -> dict:
        return {"method": self.settings["method"], "contrasts": len(self.contrasts), "n": self.counts["n"], "outcomes": len(self.outcomes)}

    def plot(self, ax=None, *, measures=FOREST_MEASURES, outcome: str | None = None):
        """A single contrast's bars with intervals per measure and outcome column (the paper's Figure 5,
        :meth:`ContrastDecomposition.plot`; ``outcome`` unused); with several, the forest plot: per measure (one panel
        each), every contrast's estimate with its marginal interval (thick) and its simultaneous interval (thin), for
        ``outcome`` (default Y)."""
        from fairpath.causal._report import forest_plot

        if self.single:
            return self.for_contrast().plot(ax, measures=measures)
        return forest_plot(self, ax, [m for m in measures if m in self.measures], self._outcome(outcome))


def column_correlation(matrix: np.ndarray) -> np.ndarray:
    """The correlation of the (centred, non-zero) columns of ``matrix``; finite for any finite values: where the
    cross-products overflow (values near 1e154 and beyond) each column is first divided by its largest |value|, which
    leaves the correlation as it is."""
    with np.errstate(over="ignore", invalid="ignore"):
        covariance = matrix.T @ matrix
    if not np.isfinite(covariance).all():
        matrix = matrix / np.abs(matrix).max(axis=0)
        covariance = matrix.T @ matrix
    scale = np.sqrt(np.diag(covariance))
    return covariance / np.outer(scale, scale)


def _max_t(key: tuple, correlation: np.ndarray, seed: int) -> np.ndarray:
    """max |N(0, R)| over ``SIMULTANEOUS_DRAWS`` draws, R the contrasts' ``correlation``; ``key`` (outcome, measure)
    names the draws' stream."""
    values, vectors = np.linalg.eigh(correlation)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    normal = child_rng(seed, SIMULTANEOUS, *key).standard_normal((SIMULTANEOUS_DRAWS, len(correlation)))
    return np.abs(normal @ root.T).max(axis=1)
