"""One contrast's decomposition (x0 → x1): the binary analysis of its pair's rows, held by :func:`fairpath.causal.decompose`'s
:class:`~fairpath.causal.CausalDecomposition`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._results import ResultMixin, result_class, confint_frame, estimate_row, interval_bars, panel_axes, result_frame
from fairpath._stats import Estimate
from fairpath._validation import Frame, Optional, Probability, Real, validate_params
from fairpath._vocabulary import LABELS
from fairpath._measures import DESCRIPTIONS, MEASURES, needs_nested
from fairpath.causal._methods import resolve_method
from fairpath.causal._pseudo import PseudoOutcomes
from fairpath.causal._splits import over_splits
from fairpath._sfm import SFM

_PLOTTED = ("tv", "ctfde", "ctfie", "ctfse")
# The strengths of a confounder (decomposition.sensitivity): shares in [0, 1), a correlation in [0, 1], a level.
SENSITIVITY_PARAMETERS = {"cf_y": Real(0.0, 1.0, open_high=True), "cf_d": Real(0.0, 1.0, open_high=True), "rho": Real(0.0, 1.0),
                          "level": Optional(Probability()), "benchmarks": Optional(Frame())}


@dataclass
class OutcomeFit:
    """Per-row measure contributions of one outcome column (their mean is the estimate), the
    pseudo-outcome builder for ψ, and bootstrap draws when the method produced them.

    ``more_splits`` holds the (rows, pseudo) pairs of further cross-fitting splits (``n_rep > 1``):
    each split gives an estimate and SE, aggregated by the mean (Chernozhukov et al. 2018, the mean
    version of their split aggregation): the mean estimate θ, and the SE √mean(se_s² + (θ_s − θ)²),
    so the spread over splits enters the interval. The mean keeps every linear identity of one
    split exact (TV = Ctf-DE − Ctf-IE − Ctf-SE; ψ contrasts; paired differences); DoubleML's median
    does not.
    """

    rows: pd.DataFrame
    pseudo: PseudoOutcomes
    draws: pd.DataFrame | None
    more_splits: tuple = ()

    @property
    def all_rows(self) -> list[pd.DataFrame]:
        return [self.rows, *(rows for rows, _ in self.more_splits)]

    @property
    def all_pseudo(self) -> list[PseudoOutcomes]:
        return [self.pseudo, *(pseudo for _, pseudo in self.more_splits)]


@result_class
class ContrastDecomposition(ResultMixin):
    """Counterfactual decomposition of one contrast x0 → x1 of X's effect on Y and on each predictor: the binary analysis
    of that pair's rows, one of :class:`~fairpath.causal.CausalDecomposition`'s ``decompositions``.

    ``to_frame()`` lists subject (the outcome column), measure, estimate, se, ci_low, ci_high, level;
    ``difference`` gives the paired comparison of one measure between two outcome columns (the Cookbook's test).
    Inference on request: ``confint(level)`` gives every interval at another level and ``p_value(measure, outcome,
    null=δ)`` tests against another value; each :class:`~fairpath._stats.Estimate` (also a ``difference`` or
    ``combination`` of ψ terms) has the same methods.
    """

    sfm: SFM
    fits: dict[str, OutcomeFit]
    settings: dict
    counts: dict
    overlap: dict
    seconds: float
    encoded: dict

    # -- counts -----------------------------------------------------------------------------------
    @property
    def level(self) -> float:
        return self.settings["level"]

    @property
    def outcomes(self) -> list[str]:
        return list(self.fits)

    n = property(lambda self: self.counts["n"])
    n_x0 = property(lambda self: self.counts["n_x0"])
    n_x1 = property(lambda self: self.counts["n_x1"])
    n_extreme = property(lambda self: self.counts["n_extreme"])
    n_trimmed = property(lambda self: self.counts["n_trimmed"])

    @property
    def measures(self) -> tuple[str, ...]:
        """The measures this decomposition estimated (``decompose(measures=...)``)."""
        return tuple(self.settings.get("measures", MEASURES))

    @property
    def estimable(self) -> bool:
        """False when most rows lack overlap (``overlap["share_outside"]`` > ``NON_ESTIMABLE_SHARE``):
        the effects are then not estimable from these data, whatever the intervals say."""
        return bool(self.overlap["estimable"])

    # -- estimates --------------------------------------------------------------------------------
    def _fit(self, outcome: str | None) -> OutcomeFit:
        outcome = self.sfm.y if outcome is None else outcome
        if outcome not in self.fits:
            raise FairpathInputError(f"outcome {outcome!r} was not decomposed; available: {self.outcomes}")
        return self.fits[outcome]

    def _check_measure(self, measure: str) -> None:
        if measure not in MEASURES:
            raise FairpathInputError(f"unknown measure {measure!r}; use one of {MEASURES}")
        if measure not in self.measures:
            raise FairpathInputError(
                f"measure {measure!r} was not estimated (this decomposition has {list(self.measures)}); "
                "pass it to decompose(..., measures=[...])"
            )

    def _from_rows(self, row_sets: list[np.ndarray], draws: np.ndarray | None) -> Estimate:
        """The estimate from the per-row contributions of each split (one unless ``n_rep > 1``) or the draws."""
        estimate, se = over_splits(row_sets)
        if draws is None:
            return Estimate.from_se(estimate, se, self.level)
        estimate = resolve_method(self.settings["method"]).point_estimate(estimate, draws)
        return Estimate.from_draws(estimate, draws, self.level)

    def estimate(self, measure: str, outcome: str | None = None) -> Estimate:
        """Estimate, SE and CI of one measure for one outcome column (default: Y)."""
        self._check_measure(measure)
        fit = self._fit(outcome)
        draws = None if fit.draws is None else fit.draws[measure].to_numpy()
        return self._from_rows([rows[measure].to_numpy() for rows in fit.all_rows], draws)

    def difference(self, measure: str, outcome: str, reference: str | None = None) -> Estimate:
        """measure(outcome) − measure(reference) with an SE from the paired per-row contributions
        (or the paired bootstrap draws), since both columns share rows, folds and propensities."""
        self._check_measure(measure)
        fit, ref = self._fit(outcome), self._fit(reference)
        row_sets = [a[measure].to_numpy() - b[measure].to_numpy() for a, b in zip(fit.all_rows, ref.all_rows)]
        draws = None if fit.draws is None else fit.draws[measure].to_numpy() - ref.draws[measure].to_numpy()
        return self._from_rows(row_sets, draws)

    @validate_params({"level": Probability()})
    def confint(self, level: float = 0.95) -> pd.DataFrame:
        """Every interval at ``level``, computed from what each estimate keeps (the SE of a normal interval, the
        draws of a percentile one): subject (the outcome column), measure, estimate, ci_low, ci_high, level.
        At the decomposition's own level these are ``to_frame()``'s intervals."""
        return confint_frame((({"subject": outcome, "measure": measure}, self.estimate(measure, outcome))
                              for outcome in self.outcomes for measure in self.measures), level)

    @validate_params({"null": Real()})
    def p_value(self, measure: str, outcome: str | None = None, *, null: float = 0.0) -> float:
        """Two-sided p-value of H0: ``measure`` of ``outcome`` (default: Y) equals ``null`` (:meth:`Estimate.p_value`)."""
        return self.estimate(measure, outcome).p_value(null)

    def psi(self, x_z, x_w, x_y, outcome: str | None = None) -> Estimate:
        """ψ(xz, xw, xy) = E[Y_{xy, W_{xw}} | X = xz] with levels coded 0 (x0) and 1 (x1);
        ``x_z=None`` gives the unconditional E[Y_{xy, W_{xw}}]. SE from the influence function."""
        return self.combination([(1, (x_z, x_w, x_y))], outcome)

    def combination(self, terms, outcome: str | None = None) -> Estimate:
        """Any signed sum of ψ terms, e.g. ``[(1, (1, 0, 1)), (-1, (1, 0, 0))]`` (a direct effect among x1)."""
        pseudo = self._fit(outcome).pseudo
        for _, key in terms:
            if len(key) != 3 or key[0] not in (0, 1, None) or any(v not in (0, 1) for v in key[1:]):
                raise FairpathInputError(f"ψ term {key!r} must be (x_z, x_w, x_y) with values 0/1 (x_z may be None)")
            if pseudo.has_w and needs_nested(key, pseudo.group_means, pseudo.has_z) and not pseudo.nuisances.nested:
                raise FairpathInputError(
                    f"ψ term {key!r} needs the nested means, which were not fitted for measures {list(self.measures)}; "
                    "pass a measure that needs them (e.g. nde) to decompose(..., measures=[...])"
                )
        row_sets = [sum(sign * split(*key) for sign, key in terms) for split in self._fit(outcome).all_pseudo]
        return Estimate.from_se(*over_splits(row_sets), self.level)

    @validate_params(SENSITIVITY_PARAMETERS)
    def sensitivity(self, *, cf_y: float = 0.03, cf_d: float = 0.03, rho: float = 1.0, level: float | None = None,
                    benchmarks=None):
        """Bounds of every measure under an unobserved confounder of strength ``cf_y`` (the share of the outcome's
        residual variation it explains), ``cf_d`` (the share of the weights' variation) and correlation ``rho``,
        confidence bounds at ``level`` (default: the decomposition's) and robustness values: a
        :class:`~fairpath.causal.SensitivityResult` (the maths: :mod:`fairpath.causal._sensitivity`). ``benchmarks``:
        the strengths of confounders as strong as observed columns (:func:`~fairpath.causal.confounder_benchmarks`),
        shown beside the bounds."""
        from fairpath.causal._sensitivity_result import sensitivity_result

        return sensitivity_result(self.sfm, {str(self.sfm.x1): self}, cf_y=cf_y, cf_d=cf_d, rho=rho, level=level,
                                  settings=self.settings, benchmarks=benchmarks)

    def pseudo_outcomes(self, outcome: str | None = None) -> pd.DataFrame:
        """Per-row contributions (n × measures) of one outcome column (of the first split when
        ``n_rep > 1``); column means are the point estimates of the influence-function method."""
        return self._fit(outcome).rows.copy()

    # -- presentation -----------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """One row per outcome column (``subject``) and measure: estimate, se, ci_low, ci_high, level."""
        return result_frame([estimate_row(outcome, measure, self.estimate(measure, outcome))
                             for outcome in self.outcomes for measure in self.measures])

    def summary_line(self, outcome: str | None = None, *, label: str | None = None) -> str:
        """``TV (v) = CtfDE (v) − CtfIE (v) − CtfSE (v)`` as faircause prints it, the outcome named ``label`` when given."""
        v = {m: self.estimate(m, outcome).estimate if m in self.measures else float("nan") for m in _PLOTTED}
        name = label or (self.sfm.y if outcome is None else outcome)
        return (f"{name}: TV ({v['tv']:+.4f}) = CtfDE ({v['ctfde']:+.4f}) − CtfIE ({v['ctfie']:+.4f}) "
                f"− CtfSE ({v['ctfse']:+.4f})")

    def summary(self) -> str:
        counts = self.counts
        lines = [
            f"Causal decomposition of {self.sfm}",
            f"method {self.settings['method']}, learner {self.settings['learner']}, {self.settings['n_folds']} folds, "
            f"seed {self.settings['seed']}; n = {counts['n']} (x0: {counts['n_x0']}, x1: {counts['n_x1']})",
        ]
        if counts["n_excluded"]:
            lines.append(f"{counts['n_excluded']} rows excluded: X neither x0 nor x1")
        lines.append(self.overlap_line())
        if not self.estimable:
            lines.append("NOT ESTIMABLE: most rows lack overlap between the groups, so these effects are not "
                         "estimable from these data; the numbers below are not to be trusted")
        lines += [self.summary_line(outcome) for outcome in self.outcomes]
        return "\n".join(lines)

    def overlap_line(self) -> str:
        """Overlap diagnostic: rows with a propensity outside [eps, 1 − eps] and the range per group."""
        o, eps = self.overlap, self.settings["eps"]
        action = f"{self.counts['n_trimmed']} trimmed" if self.settings["trim"] else "clipped to the bounds"
        ranges = "; ".join(
            f"{g}: P(x1|z) [{r['p_x1_z_min']:.3f}, {r['p_x1_z_max']:.3f}], P(x1|z,w) [{r['p_x1_zw_min']:.3f}, {r['p_x1_zw_max']:.3f}]"
            for g, r in o["propensity"].items()
        )
        return (f"overlap: {o['n_outside']} rows with a propensity outside [{eps}, {1 - eps}] ({o['share_outside']:.1%}), "
                f"{action}; {ranges}")

    def headline(self) -> list[str]:
        """What was found, first: per outcome, TV and each pathway effect in percentage points (for outcomes within
        [0, 1]) with CI, level and p, and which are significant."""
        from fairpath.causal._report import headline

        return headline(self)

    def _write_report(self, path: Path) -> Path:
        """The report, opening with :meth:`headline`."""
        from fairpath.causal._report import write_decomposition_report

        return write_decomposition_report(self, path)

    def _repr_fields(self) -> dict:
        return {"method": self.settings["method"], "n": self.counts["n"], "outcomes": len(self.outcomes),
                "measures": len(self.measures)}

    def to_dict(self) -> dict:
        estimates = {
            outcome: {m: {k: v for k, v in self.estimate(m, outcome).to_dict().items() if k != "level"} for m in self.measures}
            for outcome in self.outcomes
        }
        return {
            "sfm": self.sfm.to_dict(), "settings": self.settings, "counts": self.counts,
            "overlap": self.overlap, "estimable": self.estimable,
            "encoded_columns": self.encoded, "seconds": self.seconds, "level": self.level,
            "descriptions": DESCRIPTIONS, "estimates": estimates,
        }

    def plot(self, ax=None, *, measures=_PLOTTED, colors: dict | None = None):
        """Bars with confidence intervals per measure and outcome column (the paper's Figure 5), on ``ax``
        when given.

        ``colors`` maps an outcome to a bar colour (the audit report colours predictors by verdict).
        """
        import matplotlib

        from fairpath.report import legend_below, new_figure

        measures = [m for m in measures if m in self.measures]
        frame = self.to_frame().set_index(["subject", "measure"])
        fig, (ax,) = panel_axes(ax, 1, lambda: new_figure(figsize=(2 + 1.6 * len(measures), 3.8)))
        width = 0.8 / len(self.outcomes)
        positions = np.arange(len(measures))
        palette = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, outcome in enumerate(self.outcomes):
            rows = frame.loc[outcome].loc[list(measures)]
            centre, half = interval_bars(rows["ci_low"], rows["ci_high"])
            color = (colors or {}).get(outcome, palette[i % len(palette)])
            shifted = positions + (i - (len(self.outcomes) - 1) / 2) * width
            ax.bar(shifted, rows["estimate"], width, label=outcome, color=color, edgecolor="black", linewidth=0.4)
            ax.errorbar(shifted, centre, yerr=half, fmt="none", ecolor="black", capsize=3)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(positions, [LABELS[m] for m in measures])
        ax.set_ylabel(f"effect on E[{self.sfm.y}] (outcome units)\nbars: {self.level:.0%} CI")
        ax.set_title(f"Decomposition of {self.sfm.x}: {self.sfm.x0} → {self.sfm.x1}")
        fig.tight_layout()
        legend_below(ax, fontsize=8, ncol=min(len(self.outcomes), 4))
        fig.tight_layout()
        return fig
