"""The vectorised pseudo-outcomes against a slow, obvious row-by-row version of the formulas."""

from __future__ import annotations

import itertools

import numpy as np
from fairpath.causal._nuisance import OutcomeNuisances
from fairpath.causal._pseudo import PseudoOutcomes


def _manual(key, x, y, px_z, px_zw, nu):
    """ψ pseudo-outcome written out one row at a time, straight from the formulas."""
    x_z, x_w, x_y = key
    n = len(x)
    share = {v: sum(1 for xi in x if xi == v) / n for v in (0, 1)}
    out = []
    for i in range(n):
        pz = {1: px_z[i], 0: 1 - px_z[i]}
        pzw = {1: px_zw[i], 0: 1 - px_zw[i]}
        ind = {v: 1.0 if x[i] == v else 0.0 for v in (0, 1)}
        if x_z == x_w == x_y:
            value = ind[x_z] / share[x_z] * y[i]
        elif x_w == x_y:
            mu = nu.mu_xz[x_w][i]
            value = ind[x_w] / share[x_z] * pz[x_z] / pz[x_w] * (y[i] - mu) + ind[x_z] / share[x_z] * mu
        else:
            mu = nu.mu_xzw[x_y][i]
            nested = nu.nested[(x_w, x_y)][i]
            value = (ind[x_y] / share[x_z] * pzw[x_w] / pzw[x_y] * pz[x_z] / pz[x_w] * (y[i] - mu)
                     + ind[x_w] / share[x_z] * pz[x_z] / pz[x_w] * (mu - nested)
                     + ind[x_z] / share[x_z] * nested)
        out.append(value)
    out = np.array(out)
    # The ratio's influence-function term: −ψ · (1(X=xz)/P̂(xz) − 1), which leaves the mean unchanged.
    psi = out.mean()
    return np.array([v - psi * ((1.0 if x[i] == x_z else 0.0) / share[x_z] - 1.0) for i, v in enumerate(out)])


def _manual_uncentred(key, x, y, px_z, px_zw, nu):
    """The mixture for the unconditional ψ uses the raw (uncentred) conditional pseudo-outcomes."""
    x_z = key[0]
    share = np.mean(x == x_z)
    centred = _manual(key, x, y, px_z, px_zw, nu)
    return centred + centred.mean() * ((x == x_z) / share - 1.0)


def test_pseudo_outcomes_match_manual_formulas():
    rng = np.random.default_rng(0)
    n = 300
    x = rng.integers(0, 2, n)
    y = rng.normal(size=n)
    px_z, px_zw = rng.uniform(0.1, 0.9, n), rng.uniform(0.1, 0.9, n)
    nu = OutcomeNuisances(
        mu_xz={0: rng.normal(size=n), 1: rng.normal(size=n)},
        mu_xzw={0: rng.normal(size=n), 1: rng.normal(size=n)},
        nested={(0, 1): rng.normal(size=n), (1, 0): rng.normal(size=n)},
    )
    pseudo = PseudoOutcomes(x, y, px_z, px_zw, nu, has_w=True)
    for key in itertools.product((0, 1), repeat=3):
        np.testing.assert_allclose(pseudo(*key), _manual(key, x, y, px_z, px_zw, nu), rtol=1e-12, atol=1e-12)
    share1 = x.mean()
    mixture = ((1 - share1) * _manual_uncentred((0, 0, 1), x, y, px_z, px_zw, nu)
               + share1 * _manual_uncentred((1, 0, 1), x, y, px_z, px_zw, nu))
    np.testing.assert_allclose(pseudo(None, 0, 1), mixture, rtol=1e-12)
