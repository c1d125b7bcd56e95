"""The measures as signed sums of the building block ψ(xz, xw, xy) = E[Y_{xy, W_{xw}} | X = xz].

``xz = None`` stands for the unconditional E[Y_{xy, W_{xw}}], which is the P(x)-weighted mixture of
the two conditional ones.
"""

from __future__ import annotations

from fairpath._vocabulary import MEASURE_OF_PATHWAY

Term = tuple[int, tuple]

MEASURE_TERMS: dict[str, tuple[Term, ...]] = {
    "tv": ((1, (1, 1, 1)), (-1, (0, 0, 0))),
    "ctfde": ((1, (0, 0, 1)), (-1, (0, 0, 0))),
    "ctfie": ((1, (0, 0, 1)), (-1, (0, 1, 1))),
    "ctfse": ((1, (0, 1, 1)), (-1, (1, 1, 1))),
    "ett": ((1, (0, 1, 1)), (-1, (0, 0, 0))),
    "te": ((1, (None, 1, 1)), (-1, (None, 0, 0))),
    "nde": ((1, (None, 0, 1)), (-1, (None, 0, 0))),
    "nie": ((1, (None, 0, 1)), (-1, (None, 1, 1))),
    "expse_x0": ((1, (0, 0, 0)), (-1, (None, 0, 0))),
    "expse_x1": ((1, (1, 1, 1)), (-1, (None, 1, 1))),
}
MEASURES = tuple(MEASURE_TERMS)

# The Cookbook's pathway names -> their measures (one definition, in the vocabulary module).
PATHWAYS = MEASURE_OF_PATHWAY

DESCRIPTIONS = {
    "tv": "total variation E[Y|x1] − E[Y|x0]",
    "ctfde": "counterfactual direct effect",
    "ctfie": "counterfactual indirect effect",
    "ctfse": "counterfactual spurious effect",
    "ett": "effect of treatment on the treated (x0 group)",
    "te": "total effect",
    "nde": "natural direct effect",
    "nie": "natural indirect effect",
    "expse_x0": "experimental spurious effect at x0",
    "expse_x1": "experimental spurious effect at x1",
}


def needs_nested(key: tuple, group_means: bool = False, has_z: bool = True) -> bool:
    """Whether ψ(xz, xw, xy) uses the nested mean ν_{xy}(xw, z).

    Only cross-world terms (xw ≠ xy) have one. In the one-step estimator it enters as
    1(X=xz)/P̂ · ν − 1(X=xw)/P̂ · p(xz|z)/p(xw|z) · ν, which is zero row by row when xz = xw: so
    ctfde, ctfie, ctfse, ett (all with xz = xw) need no ν; nde and nie (xz = None) do. medDML's
    group means average the unconditional term, which always has one. With Z empty every ψ is the
    unconditional one (``has_z=False``), so every cross-world term needs ν.
    """
    x_z, x_w, x_y = key
    return x_w != x_y and (group_means or not has_z or x_z != x_w)


def measures_need_nested(measures, group_means: bool = False, has_z: bool = True) -> bool:
    return any(needs_nested(key, group_means, has_z) for m in measures for _, key in MEASURE_TERMS[m])


def combine_terms(terms, psi: dict, share: dict):
    """Signed sum of ψ values; unconditional ψ(None, ·, ·) is taken from ``psi`` if present,
    else mixed from the conditional ones with group shares ``share``."""
    total = 0.0
    for sign, (x_z, x_w, x_y) in terms:
        if x_z is None and (None, x_w, x_y) not in psi:
            value = share[0] * psi[(0, x_w, x_y)] + share[1] * psi[(1, x_w, x_y)]
        else:
            value = psi[(x_z, x_w, x_y)]
        total = total + sign * value
    return total
