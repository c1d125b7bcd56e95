"""Structural causal models in the Standard Fairness Model with known ground truth.

Each model draws exogenous noise once per row, so the nested counterfactuals Y_{x, W_{x'}} of a row
use that row's own noise. The true value of every measure is computed from the exact conditional
mean E[Y | x, z, w] over a large Monte Carlo sample (error far below any estimator's SE).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.special import expit

from fairpath._measures import MEASURE_TERMS, combine_terms
from fairpath.causal import SFM
from fairpath._validation import Integer, Optional, Real, Seed, validate_params

_TRUTH_SAMPLE_SIZE = 1_000_000
_TRUTH_SEED = 20240101


@dataclass
class SyntheticData:
    """A sample from a synthetic SCM with its ground truth.

    Attributes
    ----------
    data : the observed sample (X coded 0/1).
    sfm : the Standard Fairness Model of the sample.
    truth : true value of every measure (``fairpath.causal.MEASURES``) for the outcome Y.
    potential_outcomes : per row, ``y_x0``, ``y_x1``, ``y_x1_wx0`` (= Y_{x1, W_{x0}}) and ``y_x0_wx1``.
    model : the generating model (``outcome_mean`` gives the exact E[Y | X, Z, W]).
    """

    data: pd.DataFrame
    sfm: SFM
    truth: dict[str, float]
    potential_outcomes: pd.DataFrame
    model: "StructuralModel" = field(repr=False)

    def outcome_mean(self, frame: pd.DataFrame) -> np.ndarray:
        """The exact E[Y | X, Z, W] at the rows of ``frame`` (for oracle predictors)."""
        return self.model.outcome_mean_frame(frame)


class StructuralModel(ABC):
    """Base class: subclasses define the noise, the mediators and the outcome mechanism."""

    name = "model"
    z_names: tuple[str, ...] = ()
    w_names: tuple[str, ...] = ()
    binary_outcome = False
    # True when X is independent of Z and of all noise: then every conditional ψ equals the
    # unconditional one, and the truth is averaged over all units (less Monte Carlo error).
    x_exogenous = False

    @abstractmethod
    def exogenous(self, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Noise, confounders ``z`` (n, p_z) and the protected attribute ``x`` for n units."""

    @abstractmethod
    def mediators(self, x: np.ndarray, u: dict) -> np.ndarray:
        """Mediators (n, p_w) when X is set to ``x`` for units with noise ``u``."""

    @abstractmethod
    def outcome_mean(self, x: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """E[Y | X=x, Z=z, W=w]."""

    def outcome(self, x, z, w, u) -> np.ndarray:
        mean = self.outcome_mean(x, z, w)
        if self.binary_outcome:
            return (u["u_y"] < mean).astype(float)
        return mean + u["u_y"]

    def outcome_mean_frame(self, frame: pd.DataFrame) -> np.ndarray:
        z = frame[list(self.z_names)].to_numpy(float) if self.z_names else np.empty((len(frame), 0))
        w = frame[list(self.w_names)].to_numpy(float)
        return self.outcome_mean(frame["x"].to_numpy(float), z, w)

    def _units(self, n: int, rng: np.random.Generator):
        u = self.exogenous(n, rng)
        return u, u["z"], u["x"]

    def counterfactual(self, x_y: float, x_w: float, u: dict, z: np.ndarray, noise: bool = True) -> np.ndarray:
        """Y_{x_y, W_{x_w}} per unit (its mean given the unit's W when ``noise`` is False)."""
        n = len(z)
        w = self.mediators(np.full(n, float(x_w)), u)
        x = np.full(n, float(x_y))
        return self.outcome(x, z, w, u) if noise else self.outcome_mean(x, z, w)

    def true_measures(self) -> dict[str, float]:
        return dict(_true_measures(self))

    def sample(self, n: int, seed: int | None = None) -> SyntheticData:
        rng = np.random.default_rng(seed)
        u, z, x = self._units(n, rng)
        w = self.mediators(x, u)
        y = self.outcome(x, z, w, u)
        columns = {"x": x.astype(int)}
        columns.update({name: z[:, j] for j, name in enumerate(self.z_names)})
        columns.update({name: w[:, j] for j, name in enumerate(self.w_names)})
        columns["y"] = y
        data = pd.DataFrame(columns)
        potential = pd.DataFrame(
            {
                "y_x0": self.counterfactual(0, 0, u, z),
                "y_x1": self.counterfactual(1, 1, u, z),
                "y_x1_wx0": self.counterfactual(1, 0, u, z),
                "y_x0_wx1": self.counterfactual(0, 1, u, z),
            }
        )
        sfm = SFM(x="x", x0=0, x1=1, z=self.z_names, w=self.w_names, y="y")
        return SyntheticData(data=data, sfm=sfm, truth=self.true_measures(), potential_outcomes=potential, model=self)


@lru_cache(maxsize=32)
def _true_measures(model: StructuralModel) -> tuple[tuple[str, float], ...]:
    rng = np.random.default_rng(_TRUTH_SEED)
    u, z, x = model._units(_TRUTH_SAMPLE_SIZE, rng)
    share = {0: float(np.mean(x == 0)), 1: float(np.mean(x == 1))}
    psi = {}
    for x_w in (0, 1):
        for x_y in (0, 1):
            values = model.counterfactual(x_y, x_w, u, z, noise=False)
            psi[(None, x_w, x_y)] = float(values.mean())
            for x_z in (0, 1):
                psi[(x_z, x_w, x_y)] = psi[(None, x_w, x_y)] if model.x_exogenous else float(values[x == x_z].mean())
    return tuple((name, combine_terms(terms, psi, share)) for name, terms in MEASURE_TERMS.items())


class AppendixA2(StructuralModel):
    """The paper's Appendix A.2 model: X ~ Bern(.5), W1 = X + U1, W2 = W1²/4 − X/3 + U2,
    Y = W1·W2/6 + W1 + X/2 + UY, all U standard normal, Z empty."""

    name = "appendix_a2"
    w_names = ("w1", "w2")
    x_exogenous = True

    def exogenous(self, n, rng):
        return {
            "x": rng.binomial(1, 0.5, n).astype(float),
            "z": np.empty((n, 0)),
            "u1": rng.standard_normal(n),
            "u2": rng.standard_normal(n),
            "u_y": rng.standard_normal(n),
        }

    def mediators(self, x, u):
        w1 = x + u["u1"]
        w2 = w1**2 / 4 - x / 3 + u["u2"]
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        return w[:, 0] * w[:, 1] / 6 + w[:, 0] + x / 2


class BinarySFM(StructuralModel):
    """Non-empty Z and W, binary Y; Z causes X, so every pathway (DE, IE, SE) carries an effect."""

    name = "binary_sfm"
    z_names = ("z1", "z2")
    w_names = ("w1", "w2")
    binary_outcome = True

    def exogenous(self, n, rng):
        z = np.column_stack([rng.standard_normal(n), rng.binomial(1, 0.5, n)])
        x = (rng.uniform(size=n) < expit(0.9 * z[:, 0] - 0.6 * z[:, 1])).astype(float)
        return {"x": x, "z": z, "u1": rng.standard_normal(n), "u2": rng.uniform(size=n), "u_y": rng.uniform(size=n)}

    def mediators(self, x, u):
        z = u["z"]
        w1 = 0.8 * x + 0.5 * z[:, 0] + u["u1"]
        w2 = (u["u2"] < expit(-0.3 + 0.9 * x + 0.4 * z[:, 1] + 0.3 * w1)).astype(float)
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        return expit(-0.5 + 0.6 * x + 0.5 * z[:, 0] - 0.4 * z[:, 1] + 0.6 * w[:, 0] + 0.7 * w[:, 1])


class ConfoundedSFM(StructuralModel):
    """Continuous Y; X and Z share a latent cause (a bidirected X–Z edge), non-linear mechanisms."""

    name = "confounded_sfm"
    z_names = ("z1", "z2")
    w_names = ("w1", "w2")

    def exogenous(self, n, rng):
        latent = rng.standard_normal(n)
        z = np.column_stack([latent + 0.5 * rng.standard_normal(n), rng.standard_normal(n)])
        x = (rng.uniform(size=n) < expit(1.2 * latent)).astype(float)
        return {"x": x, "z": z, "u1": rng.standard_normal(n), "u2": rng.standard_normal(n), "u_y": rng.standard_normal(n)}

    def mediators(self, x, u):
        z = u["z"]
        w1 = x + 0.5 * z[:, 0] + u["u1"]
        w2 = 0.3 * w1**2 - 0.5 * x + 0.4 * z[:, 1] + 0.5 * u["u2"]
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        return x + 0.8 * z[:, 0] - 0.5 * z[:, 1] + 0.7 * w[:, 0] + 0.3 * w[:, 0] * z[:, 1] + 0.5 * w[:, 1]


class MixedSFM(StructuralModel):
    """Continuous Y with a categorical confounder: Z = {z1 (real), region (four named levels)},
    W = {w1, w2}; Z causes X, so every pathway carries an effect. The data hold the region's
    names, as an administrative table would; the mechanisms read its effect per level."""

    name = "mixed_sfm"
    z_names = ("z1", "region")
    w_names = ("w1", "w2")
    REGIONS = ("north", "south", "east", "west")
    _REGION_EFFECT = np.array([-1.0, -0.3, 0.4, 1.0])

    def exogenous(self, n, rng):
        region = rng.choice(len(self.REGIONS), size=n, p=[0.4, 0.3, 0.2, 0.1]).astype(float)
        z = np.column_stack([rng.standard_normal(n), region])
        effect = self._REGION_EFFECT[region.astype(int)]
        x = (rng.uniform(size=n) < expit(0.8 * z[:, 0] + 0.7 * effect)).astype(float)
        return {"x": x, "z": z, "u1": rng.standard_normal(n), "u2": rng.standard_normal(n), "u_y": rng.standard_normal(n)}

    def mediators(self, x, u):
        z = u["z"]
        effect = self._REGION_EFFECT[z[:, 1].astype(int)]
        w1 = 0.9 * x + 0.5 * z[:, 0] + 0.4 * effect + u["u1"]
        w2 = 0.3 * w1**2 - 0.5 * x + 0.5 * effect + 0.5 * u["u2"]
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        effect = self._REGION_EFFECT[z[:, 1].astype(int)]
        return 0.8 * x + 0.6 * z[:, 0] - 0.7 * effect + 0.6 * w[:, 0] + 0.3 * w[:, 0] * effect + 0.4 * w[:, 1]

    def outcome_mean_frame(self, frame):
        codes = pd.Categorical(frame["region"], categories=self.REGIONS).codes
        z = np.column_stack([frame["z1"].to_numpy(float), codes.astype(float)])
        return self.outcome_mean(frame["x"].to_numpy(float), z, frame[list(self.w_names)].to_numpy(float))

    def sample(self, n, seed=None):
        sample = super().sample(n, seed)
        sample.data["region"] = np.asarray(self.REGIONS)[sample.data["region"].to_numpy(int)]
        return sample


@dataclass(frozen=True, eq=True)
class LinearSFM(StructuralModel):
    """Linear SCM with Z empty: W = α_XW·X + U_W, Y = α_WY·W + α_XY·X + U_Y (the paper's Corollary 1)."""

    alpha_xw: float = 1.0
    alpha_wy: float = 1.0
    alpha_xy: float = 0.5
    name = "linear_sfm"
    w_names = ("w",)
    x_exogenous = True

    def exogenous(self, n, rng):
        return {"x": rng.binomial(1, 0.5, n).astype(float), "z": np.empty((n, 0)), "u_w": rng.standard_normal(n), "u_y": rng.standard_normal(n)}

    def mediators(self, x, u):
        return (self.alpha_xw * x + u["u_w"])[:, None]

    def outcome_mean(self, x, z, w):
        return self.alpha_wy * w[:, 0] + self.alpha_xy * x


_A2, _BINARY, _CONFOUNDED, _MIXED = AppendixA2(), BinarySFM(), ConfoundedSFM(), MixedSFM()


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_appendix_a2(n: int = 5000, seed: int | None = None) -> SyntheticData:
    """Sample the paper's Appendix A.2 SCM (Z empty, W = {w1, w2}, continuous Y)."""
    return _A2.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_binary_sfm(n: int = 5000, seed: int | None = None) -> SyntheticData:
    """Sample an SFM with Z = {z1, z2}, W = {w1, w2} and binary Y."""
    return _BINARY.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_confounded_sfm(n: int = 5000, seed: int | None = None) -> SyntheticData:
    """Sample an SFM with continuous Y and a latent confounder of X and Z."""
    return _CONFOUNDED.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_mixed_sfm(n: int = 5000, seed: int | None = None) -> SyntheticData:
    """Sample an SFM with continuous Y, Z = {z1, region} (region: four named levels) and W = {w1, w2}:
    the shape of an administrative table, used by the scale benchmarks and tests."""
    return _MIXED.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed()), "alpha_xw": Real(), "alpha_wy": Real(), "alpha_xy": Real()})
def make_linear_sfm(n: int = 5000, seed: int | None = None, alpha_xw: float = 1.0, alpha_wy: float = 1.0, alpha_xy: float = 0.5) -> SyntheticData:
    """Sample a linear SCM with Z empty; the causal effect of X on Y is α_XW·α_WY + α_XY."""
    return LinearSFM(alpha_xw, alpha_wy, alpha_xy).sample(n, seed)
