"""Predictors with a known Cookbook verdict, built from a synthetic SCM's exact mechanisms.

Each one satisfies exactly one business-necessity set (when the outcome's DE, IE and SE are all
non-zero), which makes the Cookbook's verdicts checkable:

- ``oracle`` = E[Y | x, z, w]: transmits every effect of Y, satisfies BN = {DE, IE, SE};
- ``blind_x`` = E[Y | x1, z, w] (X ignored): Ctf-DE = 0, Ctf-IE and Ctf-SE equal Y's: BN = {IE, SE};
- ``z_only`` = E[Y_{x1} | z]: Ctf-DE = Ctf-IE = 0, Ctf-SE equal Y's: BN = {SE};
- ``noise``: independent of everything, transmits nothing: BN = ∅.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, Seed, validate_params

ORACLE_SATISFIES = {
    "oracle": ("DE", "IE", "SE"),
    "blind_x": ("IE", "SE"),
    "z_only": ("SE",),
    "noise": (),
}


def _potential_mean_given_z(model, z: np.ndarray, x: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """E[Y_x | Z = z] per row by Monte Carlo over the mediators' noise (independent of Z in an SFM)."""
    n = len(z)
    units = model.exogenous(n * draws, rng)
    units["z"] = np.repeat(z, draws, axis=0)
    x_all = np.full(n * draws, float(x))
    w = model.mediators(x_all, units)
    return model.outcome_mean(x_all, units["z"], w).reshape(n, draws).mean(axis=1)


@validate_params({"seed": Seed(), "draws": Integer(1)})
def oracle_predictors(sample, seed: int = 0, draws: int = 200) -> pd.DataFrame:
    """The four predictors above for the rows of a :class:`fairpath.datasets.SyntheticData` sample."""
    model, data = sample.model, sample.data
    if not model.z_names:
        raise FairpathInputError(f"model {model.name!r} has no confounders Z; z_only needs a model with Z")
    rng = np.random.default_rng(seed)
    z = data[list(model.z_names)].to_numpy(float)
    return pd.DataFrame(
        {
            "oracle": sample.outcome_mean(data),
            "blind_x": sample.outcome_mean(data.assign(x=1)),
            "z_only": _potential_mean_given_z(model, z, 1.0, draws, rng),
            "noise": rng.uniform(size=len(data)),
        },
        index=data.index,
    )
