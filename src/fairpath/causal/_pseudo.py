"""Per-row pseudo-outcomes whose means estimate ψ(xz, xw, xy) = E[Y_{xy, W_{xw}} | X = xz].

The one-step (influence-function) pseudo-outcomes, with P̂(xz) the sample share:

* xz = xw = xy:  1(X=xz)/P̂(xz) · Y
* xw = xy ≠ xz:  1(X=xw)/P̂(xz) · p(xz|z)/p(xw|z) · (Y − μ(xw,z)) + 1(X=xz)/P̂(xz) · μ(xw,z)
* xw ≠ xy:       1(X=xy)/P̂(xz) · p(xw|z,w)/p(xy|z,w) · p(xz|z)/p(xw|z) · (Y − μ(xy,z,w))
                 + 1(X=xw)/P̂(xz) · p(xz|z)/p(xw|z) · (μ(xy,z,w) − ν_{xy}(xw,z)) + 1(X=xz)/P̂(xz) · ν_{xy}(xw,z)

``xz = None`` gives the unconditional E[Y_{xy, W_{xw}}] (the P̂-weighted mixture of both groups).

A conditional ψ is a ratio (its normalisation P̂(xz) is estimated too), so its influence function
carries the term −ψ · (1(X=xz)/P̂(xz) − 1). It is added to the rows: their mean, the point
estimate, is unchanged exactly (1(X=xz)/P̂(xz) averages to 1), and their spread gives an honest SE.
With W empty ψ(xz, xw, xy) = ψ(xz, xy, xy). With Z empty X has no confounders, so
ψ(xz, xw, xy) = E[Y_{xy, W_{xw}}] for both xz: the spurious measures are then exactly zero, row by
row (the propensities p(x | z) are the sample shares and μ(x, z) the group means).
"""

from __future__ import annotations

import numpy as np

from fairpath.causal._nuisance import OutcomeNuisances


class PseudoOutcomes:
    """Computes (and caches) the pseudo-outcome arrays of one outcome column."""

    def __init__(self, x: np.ndarray, y: np.ndarray, px_z: np.ndarray, px_zw: np.ndarray,
                 nuisances: OutcomeNuisances, has_w: bool, has_z: bool = True, group_means: bool = False):
        self.x, self.y = x, y
        self.share = {0: float(np.mean(x == 0)), 1: float(np.mean(x == 1))}
        self.p_z = {1: px_z, 0: 1.0 - px_z}
        self.p_zw = {1: px_zw, 0: 1.0 - px_zw}
        self.nuisances, self.has_w, self.has_z = nuisances, has_w, has_z
        # medDML (faircause) averages the unconditional pseudo-outcome within a group instead of
        # using the conditional influence function.
        self.group_means = group_means
        self._cache: dict[tuple, np.ndarray] = {}

    def __call__(self, x_z, x_w, x_y) -> np.ndarray:
        if not self.has_w:
            x_w = x_y
        if not self.has_z:
            x_z = None
        key = (x_z, x_w, x_y)
        if key not in self._cache:
            self._cache[key] = self._compute(*key)
        return self._cache[key]

    def _indicator(self, level) -> np.ndarray:
        return (self.x == level).astype(float)

    def _compute(self, x_z, x_w, x_y) -> np.ndarray:
        if x_z is None:
            return self.share[0] * self._conditional(0, x_w, x_y) + self.share[1] * self._conditional(1, x_w, x_y)
        if self.group_means and not (x_z == x_w == x_y):
            rows = self._indicator(x_z) / self.share[x_z] * self(None, x_w, x_y)
        else:
            rows = self._conditional(x_z, x_w, x_y)
        return rows - rows.mean() * (self._indicator(x_z) / self.share[x_z] - 1.0)

    def _conditional(self, x_z, x_w, x_y) -> np.ndarray:
        y, share = self.y, self.share[x_z]
        in_z = self._indicator(x_z) / share
        if x_z == x_w == x_y:
            return in_z * y
        ratio_z = self.p_z[x_z] / self.p_z[x_w]
        if x_w == x_y:
            mu = self.nuisances.mu_xz[x_w]
            return self._indicator(x_w) / share * ratio_z * (y - mu) + in_z * mu
        mu = self.nuisances.mu_xzw[x_y]
        ratio_zw = self.p_zw[x_w] / self.p_zw[x_y]
        in_w = self._indicator(x_w) / share * ratio_z
        rows = self._indicator(x_y) / share * ratio_zw * ratio_z * (y - mu) + in_w * mu
        if x_z == x_w:  # in_z == in_w: the ν terms cancel row by row (see needs_nested)
            return rows
        return rows + (in_z - in_w) * self.nuisances.nested[(x_w, x_y)]
