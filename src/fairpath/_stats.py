"""Small statistical helpers shared by every estimator: normal and percentile intervals, tests against a
value, equivalence tests, Holm's adjustment.

scipy (for quantiles and tails) and the argument checks of :mod:`fairpath._validation` (which bring pandas) are
imported where they are used, not with this module, which ``import fairpath`` loads: the command line's
``--help`` must stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fairpath._exceptions import FairpathInputError

_NORMAL, _PERCENTILE, _GIVEN = "normal", "percentile", "given"


def format_p(p: float) -> str:
    """A p-value for display: 3 significant digits, and ``< 1e-16`` below double precision (never ``0``)."""
    if p != p:  # NaN
        return "n/a"
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"


def p_clause(name: str, p: float) -> str:
    """``name = 0.0457``, or ``name < 1e-16`` below double precision (a p is never printed as 0)."""
    return f"{name} < 1e-16" if p < 1e-16 else f"{name} = {format_p(p)}"


def _check_level(level) -> None:
    from fairpath._validation import check_probability

    check_probability("level", level)


def z_value(level: float) -> float:
    """Two-sided standard-normal quantile for a confidence level such as 0.95."""
    from scipy.stats import norm

    _check_level(level)
    return float(norm.ppf(0.5 + level / 2))


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile interval of bootstrap draws: their (1 − level)/2 and (1 + level)/2 quantiles."""
    alpha = (1 - level) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha])
    return float(low), float(high)


def percentile_p_value(draws: np.ndarray, null: float) -> float:
    """Two-sided p-value of H0: θ = ``null`` by inverting the percentile interval of the same draws: the smallest
    1 − level whose interval (:func:`percentile_interval`, linear interpolation between sorted draws) excludes
    ``null``, so ``p < α`` exactly when the interval at 1 − α excludes it. On skewed draws this is not the normal
    p of their SD.

    The interval at level 1 − α has ends Q(α/2) and Q(1 − α/2), Q the draws' interpolated quantile function. It
    excludes ``null`` from above when α/2 > sup{q : Q(q) ≤ null} and from below when 1 − α/2 < inf{q : Q(q) ≥
    null}, so p = 2·min(sup{q : Q(q) ≤ null}, 1 − inf{q : Q(q) ≥ null}) (ties give the two a gap). B draws
    resolve no interval beyond their extremes: where ``null`` lies outside every draw, or p would be smaller than
    2/(B + 1), p is 2/(B + 1), the smallest p a test by B draws can claim (never 0). Its size is one minus the
    interval's coverage: with 200 draws about 0.065 at 0.05 and 0.022 at 0.01, with 999 nominal
    (``benchmarks/study_percentile_p.py``), so a p below 0.05 wants 999 draws or more."""
    ordered = np.sort(np.asarray(draws, dtype=float))
    top = len(ordered) - 1
    below, above = np.searchsorted(ordered, null, "right") - 1, np.searchsorted(ordered, null, "left")

    def position(i: int) -> float:  # where Q reaches null between draws i and i + 1, as a probability
        return (i + (null - ordered[i]) / (ordered[i + 1] - ordered[i])) / top

    q_high = 0.0 if below < 0 else 1.0 if below == top else position(below)
    q_low = 1.0 if above > top else 0.0 if above == 0 else position(above - 1)
    return float(min(max(2 * min(q_high, 1 - q_low), 2 / (top + 2)), 1.0))


def equivalence_p_value(estimate: float, se: float, margin: float) -> float:
    """Two one-sided tests (TOST) of H0: |θ| ≥ margin against H1: |θ| < margin (normal approximation); the
    public, checked form is ``fairpath.parity.tost_p_value``."""
    from scipy.stats import norm

    if se <= 0:
        return 0.0 if abs(estimate) < margin else 1.0
    p_lower = norm.sf((estimate + margin) / se)  # H0: θ ≤ −margin
    p_upper = norm.cdf((estimate - margin) / se)  # H0: θ ≥ +margin
    return float(max(p_lower, p_upper))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted_sorted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(adjusted_sorted, 1.0)
    return adjusted


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and a confidence interval at ``level``.

    It keeps what its interval was computed from, so other levels and other null values are computed on
    request (:meth:`confint`, :meth:`p_value`, :meth:`equivalence_p`): the standard error of a normal
    interval (:meth:`from_se`, e.g. from influence-function values) or the bootstrap draws of a percentile
    interval (:meth:`from_draws`). One made from its five numbers alone knows only its own interval.
    A paired difference or a sum of ψ terms (``CausalDecomposition.difference``, ``combination``) is an Estimate too,
    its SE taken from the paired per-row contributions or draws.
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    level: float = 0.95
    _basis: str = field(default=_GIVEN, repr=False, compare=False)
    _draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_se(cls, estimate: float, se: float, level: float = 0.95) -> "Estimate":
        """Normal interval estimate ± z·se."""
        half = z_value(level) * se
        return cls(float(estimate), float(se), float(estimate - half), float(estimate + half), level, _NORMAL)

    @classmethod
    def from_draws(cls, estimate: float, draws: np.ndarray, level: float = 0.95) -> "Estimate":
        """Percentile interval and standard deviation of bootstrap draws (kept for other levels)."""
        _check_level(level)
        draws = np.asarray(draws, dtype=float)
        return cls(float(estimate), float(draws.std(ddof=1)), *percentile_interval(draws, level), level, _PERCENTILE, draws)

    def confint(self, level: float = 0.95) -> tuple[float, float]:
        """(low, high) of the interval at ``level``: the stored one at the estimate's own level; else
        estimate ± z·se (normal) or the draws' quantiles (percentile)."""
        _check_level(level)
        if level == self.level:
            return self.ci_low, self.ci_high
        if self._basis == _NORMAL:
            half = z_value(level) * self.se
            return float(self.estimate - half), float(self.estimate + half)
        if self._basis == _PERCENTILE:
            return percentile_interval(self._draws, level)
        raise FairpathInputError(
            f"this estimate knows only its {self.level:g} interval (it was made from its numbers, not with "
            f"Estimate.from_se or Estimate.from_draws), so level={level!r} cannot be computed; ask for level={self.level!r}"
        )

    def p_value(self, null: float = 0.0) -> float:
        """Two-sided p-value of H0: the quantity equals ``null``: by the draws of a percentile estimate, inverting
        its interval (:func:`percentile_p_value`: p < α exactly when :meth:`confint` at 1 − α excludes ``null``);
        otherwise the normal approximation with the SE."""
        from scipy.stats import norm

        from fairpath._validation import check_float

        check_float("null", null)
        if self._basis == _PERCENTILE:
            return percentile_p_value(self._draws, null)
        if self.se <= 0:
            return 0.0 if self.estimate != null else 1.0
        return float(2 * norm.sf(abs(self.estimate - null) / self.se))

    def equivalence_p(self, margin: float) -> float:
        """p-value of the equivalence test (TOST) of H0: |quantity| ≥ ``margin`` against |quantity| < ``margin``."""
        from fairpath._validation import check_float

        check_float("margin", margin, 0.0, open_low=True)
        return equivalence_p_value(self.estimate, self.se, margin)

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high, "level": self.level}

    def __str__(self) -> str:
        return f"{self.estimate:.4f} (se {self.se:.4f}, {self.level:.0%} CI [{self.ci_low:.4f}, {self.ci_high:.4f}])"
