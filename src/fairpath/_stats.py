"""Small statistical helpers shared by every estimator: normal and percentile intervals, Holm's adjustment."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats


def format_p(p: float) -> str:
    """A p-value for display: 3 significant digits, and ``< 1e-16`` below double precision (never ``0``)."""
    if p != p:  # NaN
        return "n/a"
    return "< 1e-16" if p < 1e-16 else f"{p:.3g}"


def p_clause(name: str, p: float) -> str:
    """``name = 0.0457``, or ``name < 1e-16`` below double precision (a p is never printed as 0)."""
    return f"{name} < 1e-16" if p < 1e-16 else f"{name} = {format_p(p)}"


def z_value(level: float) -> float:
    """Two-sided standard-normal quantile for a confidence level such as 0.95."""
    if not 0 < level < 1:
        raise ValueError(f"confidence level must lie in (0, 1), got {level!r}")
    return float(stats.norm.ppf(0.5 + level / 2))


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
    """A point estimate with its standard error and a confidence interval."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    level: float = 0.95

    @classmethod
    def from_se(cls, estimate: float, se: float, level: float = 0.95) -> "Estimate":
        half = z_value(level) * se
        return cls(float(estimate), float(se), float(estimate - half), float(estimate + half), level)

    @classmethod
    def from_draws(cls, estimate: float, draws: np.ndarray, level: float = 0.95) -> "Estimate":
        """Percentile interval and standard deviation of bootstrap draws."""
        draws = np.asarray(draws, dtype=float)
        alpha = (1 - level) / 2
        low, high = np.quantile(draws, [alpha, 1 - alpha])
        return cls(float(estimate), float(draws.std(ddof=1)), float(low), float(high), level)

    @property
    def p_value(self) -> float:
        """Two-sided p-value of H0: the quantity is 0 (normal approximation)."""
        if self.se <= 0:
            return 0.0 if self.estimate != 0 else 1.0
        return float(2 * stats.norm.sf(abs(self.estimate) / self.se))

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.estimate:.4f} (se {self.se:.4f}, {self.level:.0%} CI [{self.ci_low:.4f}, {self.ci_high:.4f}])"
