"""How strong an unobserved confounder would have to be to change a measure: omitted-variable-bias bounds
(Chernozhukov, Cinelli, Newey, Sharma & Syrgkanis, "Long Story Short: Omitted Variable Bias in Causal Machine
Learning", 2022) per ψ term, bounds and confidence bounds per measure, and robustness values (Cinelli & Hazlett 2020).

The terms. Every ψ(xz, xw, xy) = E[Y_{xy, W_{xw}} | X = xz] of the counterfactual measures is one of three kinds:

* observed, xz = xw = xy: E[Y | X = xz], a group mean. No confounder biases it, so TV (a difference of two) has
  no bound to give.
* ψ(xz, x, x), x ≠ xz: E[μ(x, Z) | X = xz] with the regression μ(x, z) = E[Y | X = x, Z = z] and the Riesz
  representer α = 1(X = x)/P(xz) · p(xz|z)/p(x|z). It needs Y_x ⊥ X | Z: a confounder of X and Y, or of X and
  W (W carries X's effect to Y), breaks it — the edges X ↔ Y and X ↔ W.
* ψ(xz, xz, x), x ≠ xz: E[μ(x, Z, W) | X = xz] with μ(x, z, w) = E[Y | X = x, Z = z, W = w] and
  α = 1(X = x)/P(xz) · p(xz|z,w)/p(x|z,w). It needs Y_{x,w} ⊥ X | Z, W: the edges X ↔ Y and W ↔ Y.

So Ctf-DE = ψ(x0,x0,x1) − ψ(x0,x0,x0) is open to X ↔ Y and W ↔ Y; Ctf-SE = ψ(x0,x1,x1) − ψ(x1,x1,x1) to X ↔ Y and
X ↔ W; Ctf-IE = ψ(x0,x0,x1) − ψ(x0,x1,x1) to all three. (Without W the last two kinds coincide and only X ↔ Y is
left.) A term ψ(xz, xw, xy) with xz ≠ xw ≠ xy nests two regressions; no bound is given for the measures that use
one (NDE, NIE): they are listed as not bounded. An unconditional ψ(None, ·, ·) enters as the P̂-mixture of the
two conditional ones.

The bound of one term. For θ = E[m(O; g)] with regression g and Riesz representer α, a confounder A omitted
from the regressions changes g to g_A and α to α_A, and θ − θ_A = −E[(g_A − g)(α_A − α)] (their Theorem 1), so by
Cauchy–Schwarz (their Theorem 2)

    |θ − θ_A| ≤ B = |ρ| · √(cf_y · cf_d / (1 − cf_d)) · √(σ² ν²),     σ² = E[(Y − g)²],  ν² = E[α²],

    cf_y = E[(g_A − g)²] / σ²: the share of the outcome's residual variation that A explains (a partial R²),
    cf_d = E[(α_A − α)²] / E[α_A²]: the share of the representer's (long) variation that A explains,
    ρ: the correlation of g_A − g and α_A − α (1, the default, is the worst case).

σ² is estimated by the mean of (Y − ĝ(X, ·))² over the contrast's rows (the regression at each row's own level),
ν² by the mean of 2·m(O; α̂) − α̂² (the Riesz form, insensitive to small errors of α̂, as DoubleML), where
m(O; α) = 1(X = xz)/P̂(xz) · α(x, ·) = 1(X = xz)/P̂(xz)² · p(xz|·)/p(x|·).

A measure's bound. A measure is a signed sum Σ_k w_k·ψ_k. Its terms that use one regression form one functional
of it, with representer Σ_k w_k·α_k, and take that functional's bound exactly (TE's two terms E[μ(x1, Z) | x0] and
E[μ(x0, Z) | x1] are one functional of μ(x, z)); the observed terms need none. The parts of different regressions
(Ctf-IE's μ(x, z, w) and μ(x, z)) may each be biased in the adverse direction by one confounder, so their bounds add
(the triangle inequality: exact when the biases share a sign, conservative otherwise), with one (cf_y, cf_d, ρ) for
every part; cf_d is always relative to the representer of the unidentified part alone (DoubleML's ATE and ATTE
representers also carry the observed group means, whose ν² is larger by exactly 3 and 1/P(treated)). The paired
Ctf(ŷ) − Ctf(y) adds the bounds of both subjects the same way.

Confidence bounds. With φ_θ the measure's per-row influence values and φ_σ, φ_ν those of σ̂², ν̂² (each row's
element minus its mean), the bound's influence values are φ_B = √c·(σ²·φ_ν + ν²·φ_σ)/(2√(σ²ν²)),
c = ρ²·cf_y·cf_d/(1 − cf_d), summed over the regressions as B is. The lower confidence bound is θ̂ − B̂ − z·se(θ̂ − B̂), the
upper θ̂ + B̂ + z·se(θ̂ + B̂), each SE from φ_θ ∓ φ_B over the cross-fitting splits as the estimate's own SE
(√mean(se_s² + (θ_s − θ)²)), and z the two-sided normal quantile at ``level``: with zero parameters the bounds are the
usual interval exactly, and with a bias at its bound only one side can miss, so the confounded truth is covered
with at least ``level``. (DoubleML's ``sensitivity_analysis`` takes the one-sided quantile, which at zero
confounding is a (2·level − 1) interval: its bounds at level (1 + ℓ)/2 are these at ℓ.)

Robustness values (ρ = 1, cf_y = cf_d = r). The bound is B(r) = r/√(1 − r)·S, S the sum of the regressions'
√(σ_g²ν_g²), so the estimate reaches 0 at RV = (−t² + √(t⁴ + 4t²))/2, t = |θ̂|/S; the confidence bound reaches 0
at the r where |θ̂| − B(r) − z·se(r) = 0 (found numerically; 0 when the usual interval already holds 0). A
confounder explaining less than RV of both residual variations cannot bring the estimate to 0.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._measures import MEASURE_TERMS
from fairpath._stats import z_value
from fairpath.causal._splits import over_splits

# The edges a confounder must act on to bias each kind of term (see the module docstring); without W only X↔Y.
EDGES_OF_KIND = {"total": ("X↔Y", "X↔W"), "direct": ("X↔Y", "W↔Y")}
EDGE_ORDER = ("X↔Y", "X↔W", "W↔Y")
# cf_d = 1 is a confounder that explains all of the representer: no finite bound.
_LAST_R = 1 - 1e-12


class NotBounded(Exception):
    """A measure with a term (a nested mean) that these bounds do not cover."""


def term_kind(key: tuple, has_w: bool) -> str | None:
    """The kind of a conditional ψ(xz, xw, xy): None (observed), "total" (E[μ(x, Z) | xz]) or "direct"
    (E[μ(x, Z, W) | xz]); a nested term raises :class:`NotBounded`."""
    x_z, x_w, x_y = key
    if not has_w:
        x_w = x_y
    if x_z == x_w == x_y:
        return None
    if x_w == x_y:
        return "total"
    if x_z == x_w:
        return "direct"
    raise NotBounded(key)


def conditional_terms(measure: str, share: dict) -> dict[tuple, float]:
    """The measure as weights of conditional ψ terms: an unconditional ψ(None, a, b) split into its P̂-mixture, and
    the weights of a term met twice added (its bias is one quantity)."""
    weights: dict[tuple, float] = defaultdict(float)
    for sign, (x_z, x_w, x_y) in MEASURE_TERMS[measure]:
        for level, weight in ((x_z, 1.0),) if x_z is not None else ((0, share[0]), (1, share[1])):
            weights[(level, x_w, x_y)] += sign * weight
    return {key: weight for key, weight in weights.items() if weight != 0}


def kind_groups(measure: str, share: dict, has_w: bool) -> dict[str, dict[tuple, float]]:
    """The measure's confounded terms grouped by the regression they use ("total": μ(x, z); "direct": μ(x, z, w))."""
    groups: dict[str, dict[tuple, float]] = defaultdict(dict)
    for key, weight in conditional_terms(measure, share).items():
        kind = term_kind(key, has_w)
        if kind is not None:
            groups[kind][key] = weight
    return dict(groups)


def group_elements(pseudo, kind: str, terms: dict[tuple, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per-row elements of the functional Σ_k w_k·ψ_k of one regression on one split: (Y − ĝ)² (mean σ²) and
    2·m(α̂) − α̂² (mean ν²), with α the sum of the terms' representers. As a function of (x, covariates),
    α(x, ·) = Σ_{k: xy_k = x} w_k/P̂(xz_k)·p(xz_k|·)/p(x|·), and m(O; α) = Σ_k w_k·1(X = xz_k)/P̂(xz_k)·α(xy_k, ·)."""
    x, share = pseudo.x, pseudo.share
    means, propensity = (pseudo.nuisances.mu_xz, pseudo.p_z) if kind == "total" else (pseudo.nuisances.mu_xzw, pseudo.p_zw)
    residual = pseudo.y - np.where(x == 1, means[1], means[0])
    at = {level: sum((weight / share[x_z] * propensity[x_z] / propensity[x_y]
                      for (x_z, _, x_y), weight in terms.items() if x_y == level), np.zeros(len(x))) for level in (0, 1)}
    alpha = np.where(x == 1, at[1], at[0])
    m_alpha = sum(weight * (x == x_z) / share[x_z] * at[x_y] for (x_z, _, x_y), weight in terms.items())
    riesz = 2 * m_alpha - alpha ** 2
    if riesz.mean() <= 0:  # the Riesz form can fall below 0 on a tiny group; E[α²] itself cannot
        riesz = alpha ** 2
    return residual ** 2, riesz


@dataclass(frozen=True)
class PartScale:
    """One regression's part of a measure on one split: √(σ²ν²) and the bound's per-row influence values per unit
    √c (so that its bound is √c·scale and φ_B = √c·influence)."""

    scale: float
    influence: np.ndarray
    edges: tuple[str, ...]


def part_scales(pseudo, measure: str) -> list[PartScale]:
    """The confounded parts of ``measure`` on one split, one per regression (an empty list for TV)."""
    scales = []
    for kind, terms in kind_groups(measure, pseudo.share, pseudo.has_w).items():
        residual, riesz = group_elements(pseudo, kind, terms)
        sigma2, nu2 = float(residual.mean()), float(riesz.mean())
        scale = float(np.sqrt(sigma2 * nu2))
        influence = (sigma2 * (riesz - nu2) + nu2 * (residual - sigma2)) / (2 * scale) if scale > 0 else np.zeros(len(residual))
        scales.append(PartScale(scale, influence, EDGES_OF_KIND[kind] if pseudo.has_w else ("X↔Y",)))
    return scales


@dataclass(frozen=True)
class Sensitivity:
    """One subject and measure of one contrast: per split, the measure's per-row contributions and its confounded
    parts, one per regression (of every subject whose bias adds up: one, or two for a paired difference)."""

    rows: list[np.ndarray]
    parts: list[list[PartScale]]

    @property
    def edges(self) -> tuple[str, ...]:
        found = {edge for part in self.parts[0] for edge in part.edges}
        return tuple(edge for edge in EDGE_ORDER if edge in found)

    @property
    def confounded(self) -> bool:
        return bool(self.parts[0])

    @property
    def scale(self) -> float:
        """S = Σ_g √(σ_g²ν_g²) over the regressions g, the mean over splits: the bound is √c·S."""
        return float(np.mean([sum(p.scale for p in parts) for parts in self.parts]))

    def bound_rows(self, root_c: float, side: int) -> list[np.ndarray]:
        """Per split, rows whose mean is θ_s + side·B_s and whose spread is that of φ_θ + side·φ_B (side ±1)."""
        return [rows + side * root_c * sum(p.scale + p.influence for p in parts)
                for rows, parts in zip(self.rows, self.parts)]


def scaling(cf_y: float, cf_d: float, rho: float) -> float:
    """c = ρ²·cf_y·cf_d/(1 − cf_d): the bound is √c·S."""
    return rho ** 2 * cf_y * cf_d / (1 - cf_d)


def _sides(item: Sensitivity, root_c: float, level: float) -> tuple[float, float, float, float]:
    """θ̂ − B̂ and θ̂ + B̂ with their confidence bounds at ``level``, for the bound √c·S."""
    z = z_value(level)
    low, se_low = over_splits(item.bound_rows(root_c, -1))
    high, se_high = over_splits(item.bound_rows(root_c, +1))
    return low, high, low - z * se_low, high + z * se_high


def bounds(item: Sensitivity, cf_y: float, cf_d: float, rho: float, level: float) -> dict:
    """The estimate, the bias bound, the bounds θ̂ ∓ B̂ and the confidence bounds at ``level``."""
    estimate, se = over_splits(item.rows)
    root_c = float(np.sqrt(scaling(cf_y, cf_d, rho)))
    low, high, ci_low, ci_high = _sides(item, root_c, level)
    return {"estimate": estimate, "se": se, "bias_bound": root_c * item.scale, "bound_low": low, "bound_high": high,
            "ci_low": ci_low, "ci_high": ci_high}


def robustness_value(estimate: float, scale: float) -> float:
    """The r (= cf_y = cf_d, ρ = 1) at which the bound reaches |estimate|: r²/(1 − r) = (|θ̂|/S)²."""
    if scale <= 0:
        return float("nan")
    t2 = (estimate / scale) ** 2
    return float((-t2 + np.sqrt(t2 ** 2 + 4 * t2)) / 2)


def confidence_bounds(item: Sensitivity, r: float, level: float) -> tuple[float, float]:
    """The confidence bounds at ``level`` under a confounder of strength cf_y = cf_d = r (ρ = 1)."""
    return _sides(item, float(np.sqrt(scaling(r, r, 1.0))), level)[2:]


def excludes(value: float):
    """A claim "the interval excludes ``value``": its margin, positive while it holds."""
    return lambda low, high: max(low - value, value - high)


def within(margin: float):
    """A claim "the interval lies inside (−margin, margin)" (an equivalence test's): its margin, positive while it holds."""
    return lambda low, high: min(margin - high, low + margin)


def strength_to_break(item: Sensitivity, claim, level: float) -> float:
    """The strength r = cf_y = cf_d (ρ = 1) at which ``claim`` about the confidence bounds at ``level`` stops holding:
    0 when it does not hold without confounding, NaN for a quantity no confounder changes (it then never breaks)."""
    from scipy.optimize import brentq

    if not item.confounded or item.scale <= 0:
        return float("nan")
    gap = lambda r: claim(*confidence_bounds(item, r, level))  # noqa: E731
    if gap(0.0) <= 0:
        return 0.0
    return float(brentq(gap, 0.0, _LAST_R, xtol=1e-10))


def robustness_value_ci(item: Sensitivity, level: float) -> float:
    """The strength at which the confidence bound nearest 0 reaches 0 (0 when the usual interval already holds 0)."""
    return strength_to_break(item, excludes(0.0), level)


def sensitivity_items(decomposition) -> tuple[dict, list[str]]:
    """Per (subject, measure) of one contrast's decomposition its :class:`Sensitivity`, subject by subject, and the measures
    not bounded. With predictors, also each predictor's paired difference from Y (subject ``"ŷ − y"``)."""
    fits = decomposition.fits
    y = decomposition.sfm.y
    items, not_bounded = {}, []
    for measure in decomposition.measures:
        try:
            per_outcome = {name: Sensitivity([rows[measure].to_numpy() for rows in fit.all_rows],
                                             [part_scales(pseudo, measure) for pseudo in fit.all_pseudo])
                           for name, fit in fits.items()}
        except NotBounded:
            not_bounded.append(measure)
            continue
        items.update({(name, measure): item for name, item in per_outcome.items()})
        for name, item in per_outcome.items():
            if name != y:
                ref = per_outcome[y]
                items[(f"{name} − {y}", measure)] = Sensitivity(
                    [a - b for a, b in zip(item.rows, ref.rows)], [a + b for a, b in zip(item.parts, ref.parts)])
    subjects = list(dict.fromkeys(subject for subject, _ in items))
    return dict(sorted(items.items(), key=lambda pair: subjects.index(pair[0][0]))), not_bounded


def sensitivity_table(decompositions: dict, cf_y: float, cf_d: float, rho: float, level: float) -> tuple[pd.DataFrame, list[str], dict]:
    """One row per contrast, subject and measure: estimate, se, the confidence bounds under the given confounding
    (``ci_low``, ``ci_high``), the bounds θ̂ ∓ B̂, the bias bound, the usual interval, the robustness values, the
    edges a confounder must act on; the measures not bounded; and each row's :class:`Sensitivity` by
    (contrast, subject, measure)."""
    rows, not_bounded, found_items = [], [], {}
    z = z_value(level)
    for contrast, decomposition in decompositions.items():
        items, skipped = sensitivity_items(decomposition)
        not_bounded += [m for m in skipped if m not in not_bounded]
        found_items.update({(contrast, *key): item for key, item in items.items()})
        for (subject, measure), item in items.items():
            found = bounds(item, cf_y, cf_d, rho, level)
            rv = robustness_value(found["estimate"], item.scale) if item.confounded else float("nan")
            rows.append({
                "contrast": contrast, "subject": subject, "measure": measure, "estimate": found["estimate"], "se": found["se"],
                "ci_low": found["ci_low"], "ci_high": found["ci_high"], "level": level,
                "bound_low": found["bound_low"], "bound_high": found["bound_high"], "bias_bound": found["bias_bound"],
                "usual_ci_low": found["estimate"] - z * found["se"], "usual_ci_high": found["estimate"] + z * found["se"],
                "scale": item.scale, "robustness_value": rv, "robustness_value_ci": robustness_value_ci(item, level),
                "edges": ", ".join(item.edges) if item.confounded else "",
            })
    return pd.DataFrame(rows), not_bounded, found_items


def check_influence_inference(decompositions: dict) -> None:
    """The bounds take their sampling error from the influence function: refuse a decomposition with draws."""
    for decomposition in decompositions.values():
        if any(fit.draws is not None for fit in decomposition.fits.values()):
            raise FairpathInputError(
                f"sensitivity bounds take their sampling error from the influence function, but this decomposition's "
                f"intervals come from draws (method {decomposition.settings['method']!r}, n_boot "
                f"{decomposition.settings.get('n_boot', 0)}): decompose with method='debiasing' and n_boot=0")


# -- "a confounder as strong as an observed column" (fairpath.causal._benchmarks refits without it) ------------------
def part_moments(fit, measure: str) -> dict[str, tuple[float, float, float]]:
    """Per regression part of ``measure`` (its kind): σ², ν² and the part's value Σ_k w_k·ψ_k, each the mean over
    the cross-fitting splits."""
    moments: dict[str, list] = defaultdict(list)
    for pseudo in fit.all_pseudo:
        for kind, terms in kind_groups(measure, pseudo.share, pseudo.has_w).items():
            residual, riesz = group_elements(pseudo, kind, terms)
            value = sum(weight * pseudo(*key).mean() for key, weight in terms.items())
            moments[kind].append((residual.mean(), riesz.mean(), value))
    return {kind: tuple(float(v) for v in np.mean(values, axis=0)) for kind, values in moments.items()}


def implied_strengths(long: tuple, short: tuple) -> dict:
    """The strengths a left-out column has, from the fits with it (long) and without it (short): cf_y = (σ²_s − σ²_l)/σ²_s,
    the share of the short regression's residual variation it explains; cf_d = (ν²_l − ν²_s)/ν²_l, the share of the long
    representer's; ρ from the change of the part's value, θ_s − θ_l = −ρ·√((σ²_s − σ²_l)(ν²_l − ν²_s)) (clipped to
    [−1, 1]; NaN where the column moves neither)."""
    (sigma2_l, nu2_l, theta_l), (sigma2_s, nu2_s, theta_s) = long, short
    gain_y, gain_d = max(sigma2_s - sigma2_l, 0.0), max(nu2_l - nu2_s, 0.0)
    spread = np.sqrt(gain_y * gain_d)
    return {"cf_y": gain_y / sigma2_s if sigma2_s > 0 else 0.0, "cf_d": gain_d / nu2_l if nu2_l > 0 else 0.0,
            "rho": float(np.clip(-(theta_s - theta_l) / spread, -1, 1)) if spread > 0 else float("nan")}


def benchmark_rows(long, short, column: str, contrast: str) -> list[dict]:
    """Per subject and measure, the strengths of a confounder as strong as ``column``: over the measure's regression
    parts, the largest cf_y, cf_d and |ρ| (one strength for every part, as the bounds take it)."""
    rows = []
    for outcome, fit in long.fits.items():
        for measure in long.measures:
            try:
                with_column = part_moments(fit, measure)
            except NotBounded:
                continue
            if not with_column:
                continue
            without = part_moments(short.fits[outcome], measure)
            parts = [implied_strengths(with_column[kind], without[kind]) for kind in with_column]
            rhos = [abs(p["rho"]) for p in parts if p["rho"] == p["rho"]]
            rows.append({"contrast": contrast, "subject": outcome, "measure": measure, "column": column,
                         "cf_y": max(p["cf_y"] for p in parts), "cf_d": max(p["cf_d"] for p in parts),
                         "rho": max(rhos) if rhos else float("nan")})
    return rows
