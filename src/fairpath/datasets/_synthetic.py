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
from scipy.special import expit, softmax

from fairpath._exceptions import FairpathInputError
from fairpath._measures import MEASURE_TERMS, combine_terms
from fairpath.causal import SFM
from fairpath._validation import Boolean, Integer, Optional, Real, Seed, check_int, validate_params

_TRUTH_SAMPLE_SIZE = 1_000_000
_TRUTH_SEED = 20240101
# Gauss-Legendre nodes in z1 of the quadrature truth (MultilevelSFM): its integrands are smooth on [−2, 2].
_TRUTH_NODES = 200
# Gauss-Hermite nodes per noise of a binary Y's quadrature truth (MultilevelSFM): expit of a smooth function of (U1, U2).
_HERMITE_NODES = 40


@dataclass
class SyntheticData:
    """A sample from a synthetic SCM with its ground truth.

    Attributes
    ----------
    data : the observed sample (X coded 0, 1, …: the model's levels).
    sfm : the Standard Fairness Model of the sample (the contrast of level 0 with level 1).
    truth : true value of every measure (``fairpath.causal.MEASURES``) for the outcome Y, contrast (0, 1).
    potential_outcomes : per row, ``y_x0`` and for every level k ≥ 1 ``y_xk``, ``y_xk_wx0`` (= Y_{k, W_0})
        and ``y_x0_wxk`` (= Y_{0, W_k}): ``y_x1``, ``y_x1_wx0`` and ``y_x0_wx1`` for a binary X.
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

    def truth_for(self, x0: int, x1: int) -> dict[str, float]:
        """True value of every measure for the contrast of level ``x0`` (baseline) with level ``x1``
        (see :meth:`StructuralModel.truth_for`)."""
        return self.model.truth_for(x0, x1)

    @property
    def truth_by_level(self) -> dict[int, dict[str, float]]:
        """``{k: truth_for(0, k)}`` for every level k ≥ 1: each level against the reference 0."""
        return {level: self.truth_for(0, level) for level in range(1, self.model.levels)}


class StructuralModel(ABC):
    """Base class: subclasses define the noise, the mediators and the outcome mechanism."""

    name = "model"
    z_names: tuple[str, ...] = ()
    w_names: tuple[str, ...] = ()
    binary_outcome = False
    # X's levels, coded 0 .. levels − 1 (0 is the reference).
    levels = 2
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

    def true_psi(self, x0: int, x1: int) -> tuple[dict, dict]:
        """ψ(xz, xw, xy) for positions 0 (x0) and 1 (x1) of ``MEASURE_TERMS`` (xz None: over the units with X ∈
        {x0, x1}) and the two levels' shares among those units: Monte Carlo means of the exact E[Y | x, z, w] over
        ``_TRUTH_SAMPLE_SIZE`` units of one seed, every pair from the same units."""
        rng = np.random.default_rng(_TRUTH_SEED)
        u, z, x = self._units(_TRUTH_SAMPLE_SIZE, rng)
        pair = (x == x0) | (x == x1)
        u = {name: values[pair] for name, values in u.items()}
        z, x = z[pair], x[pair]
        levels = (x0, x1)
        share = {i: float(np.mean(x == level)) for i, level in enumerate(levels)}
        psi = {}
        for i_w, x_w in enumerate(levels):
            for i_y, x_y in enumerate(levels):
                values = self.counterfactual(x_y, x_w, u, z, noise=False)
                psi[(None, i_w, i_y)] = float(values.mean())
                for i_z, x_z in enumerate(levels):
                    psi[(i_z, i_w, i_y)] = psi[(None, i_w, i_y)] if self.x_exogenous else float(values[x == x_z].mean())
        return psi, share

    def truth_for(self, x0: int, x1: int) -> dict[str, float]:
        """True value of every measure for the contrast (x0, x1) of two levels of X: the binary truth on
        the units with X ∈ {x0, x1}, x0 playing the baseline. Each ψ(xz, xw, xy) = E[Y_{xy, W_{xw}} | X = xz]
        with xz, xw, xy ∈ {x0, x1}; the unconditional ψ averages over the units with X ∈ {x0, x1}."""
        for name, level in (("x0", x0), ("x1", x1)):
            if check_int(name, level) not in range(self.levels):
                raise FairpathInputError(f"{name}={level!r} is not a level of X; the model's levels are 0 to {self.levels - 1}")
        if x0 == x1:
            raise FairpathInputError(f"x0 and x1 are both level {x0!r}; a contrast compares two different levels")
        return dict(_true_measures(self, int(x0), int(x1)))

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
        potential = {"y_x0": self.counterfactual(0, 0, u, z)}
        for level in range(1, self.levels):
            potential[f"y_x{level}"] = self.counterfactual(level, level, u, z)
            potential[f"y_x{level}_wx0"] = self.counterfactual(level, 0, u, z)
            potential[f"y_x0_wx{level}"] = self.counterfactual(0, level, u, z)
        sfm = SFM(x="x", x0=0, x1=1, z=self.z_names, w=self.w_names, y="y")
        return SyntheticData(data=data, sfm=sfm, truth=self.truth_for(0, 1), potential_outcomes=pd.DataFrame(potential), model=self)


@lru_cache(maxsize=128)
def _true_measures(model: StructuralModel, x0: int, x1: int) -> tuple[tuple[str, float], ...]:
    """The truth of the contrast (x0, x1) from the model's ψ table (see :meth:`StructuralModel.true_psi`)."""
    psi, share = model.true_psi(x0, x1)
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


class CountSFM(StructuralModel):
    """Binary Y with a continuous and a count mediator, the shape of COMPAS (prior offences): Z = {z1 (real),
    z2 (binary)}, X | z logistic, W1 = 0.7·X + 0.5·z1 + U1, W2 ~ Poisson(exp(−0.6 + 0.7·X + 0.3·z1 + 0.3·W1))
    (the inverse CDF at U2 ~ U(0, 1), so counterfactual counts share the unit's noise), and
    P(Y = 1 | x, z, w) = expit(−1 + 0.4·X + 0.5·z1 − 0.4·z2 + 0.5·W1 + 0.35·W2). The count is an integer column."""

    name = "count_sfm"
    z_names = ("z1", "z2")
    w_names = ("w1", "w2")
    binary_outcome = True

    def exogenous(self, n, rng):
        z = np.column_stack([rng.standard_normal(n), rng.binomial(1, 0.5, n)])
        x = (rng.uniform(size=n) < expit(0.8 * z[:, 0] - 0.5 * z[:, 1])).astype(float)
        return {"x": x, "z": z, "u1": rng.standard_normal(n), "u2": rng.uniform(size=n), "u_y": rng.uniform(size=n)}

    def mediators(self, x, u):
        from scipy import stats  # half a second to import: only this model needs it

        z = u["z"]
        w1 = 0.7 * x + 0.5 * z[:, 0] + u["u1"]
        w2 = stats.poisson.ppf(u["u2"], np.exp(-0.6 + 0.7 * x + 0.3 * z[:, 0] + 0.3 * w1))
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        return expit(-1.0 + 0.4 * x + 0.5 * z[:, 0] - 0.4 * z[:, 1] + 0.5 * w[:, 0] + 0.35 * w[:, 1])

    def sample(self, n, seed=None):
        sample = super().sample(n, seed)
        sample.data["w2"] = sample.data["w2"].astype(int)
        return sample


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


# P(X = k) per number of levels: the reference 0 is the largest group, and from three levels on the
# smallest holds 10% (with two, 40%: a 10% group beside a 90% one would break the overlap bounds).
_LEVEL_SHARES = {
    2: (0.6, 0.4),
    3: (0.5, 0.4, 0.1),
    4: (0.4, 0.3, 0.2, 0.1),
    5: (0.3, 0.25, 0.2, 0.15, 0.1),
    6: (0.25, 0.2, 0.17, 0.15, 0.13, 0.1),
}
MAX_SYNTHETIC_LEVELS = max(_LEVEL_SHARES)
# z1 is bounded so that every pairwise propensity stays away from 0 and 1 (see MultilevelSFM).
_Z1_BOUND = 2.0


@dataclass(frozen=True, eq=True)
class MultilevelSFM(StructuralModel):
    """Continuous Y and a protected attribute X with ``levels`` (2 to 6) levels 0 (the reference) … levels − 1.

    Z = {z1 ~ U(−2, 2), z2 ~ Bern(½)}. X | z is a multinomial logit with log-odds of level k against 0
    α_k + β_k·z1 + γ_k·(z2 − ½), so the pairwise propensity P(X=k | z) / (P(X=0 | z) + P(X=k | z)) is
    expit of it and, z1 being bounded, lies within [0.08, 0.92] for every z; α is calibrated so that
    P(X = k) is ``_LEVEL_SHARES[levels]``. W1 = a_k + 0.5·z1 + U1, W2 = b_k + 0.25·W1² − 0.3·z2 + 0.5·U2,
    Y = η + U_Y with η = d_k + e_k·z1 + f_k·W1 + 0.8·z1 − 0.6·z2 + 0.7·W1 + 0.3·W1·z2 + 0.5·W2, all U standard
    normal. Level 2 has d = e = f = 0, so its direct effect against the reference is exactly 0; the levels' mediator
    shifts (a, b) and their confounding (β, γ) differ, so their indirect and spurious effects differ.
    ``binary_outcome``: Y ~ Bernoulli(expit(0.7·η − 0.3)) instead, logistic with the X × W1 interaction f_k.
    """

    levels: int = 4
    binary_outcome: bool = False
    name = "multilevel_sfm"
    z_names = ("z1", "z2")
    w_names = ("w1", "w2")
    # Per level 0..5 (the first ``levels`` are used).
    _LOGIT_Z1 = np.array([0.0, 0.35, -0.25, 0.25, -0.2, 0.3])
    _LOGIT_Z2 = np.array([0.0, 0.4, 0.3, -0.5, 0.5, -0.4])
    _W1_SHIFT = np.array([0.0, 0.8, -0.5, 1.2, 0.4, -0.9])
    _W2_SHIFT = np.array([0.0, -0.4, 0.6, 0.3, -0.6, 0.8])
    _DIRECT = np.array([0.0, 0.5, 0.0, -0.4, 0.8, -0.3])
    _DIRECT_Z1 = np.array([0.0, 0.3, 0.0, -0.2, 0.2, 0.1])
    _DIRECT_W1 = np.array([0.0, 0.2, 0.0, -0.15, 0.1, 0.25])

    def __post_init__(self):
        check_int("levels", self.levels, 2, MAX_SYNTHETIC_LEVELS)

    def log_odds(self, z: np.ndarray, intercepts: np.ndarray | None = None) -> np.ndarray:
        """(n, levels): the log-odds of each level against the reference 0 at the rows of ``z``."""
        k = self.levels
        intercepts = _intercepts(self) if intercepts is None else intercepts
        return intercepts + z[:, :1] * self._LOGIT_Z1[:k] + (z[:, 1:2] - 0.5) * self._LOGIT_Z2[:k]

    def propensities(self, z: np.ndarray) -> np.ndarray:
        """(n, levels): P(X = k | z) at the rows of ``z``."""
        return softmax(self.log_odds(z), axis=1)

    def exogenous(self, n, rng):
        z = np.column_stack([rng.uniform(-_Z1_BOUND, _Z1_BOUND, n), rng.binomial(1, 0.5, n).astype(float)])
        cumulative = self.propensities(z).cumsum(axis=1)
        # the last cumulative share may round below a uniform draw of 1 − 1e-17: such a row is the last level
        x = np.minimum((rng.uniform(size=n)[:, None] >= cumulative).sum(axis=1), self.levels - 1).astype(float)
        u1, u2 = rng.standard_normal(n), rng.standard_normal(n)
        # drawn last, as before the binary outcome existed: a continuous Y's samples stay what they were
        noise_y = rng.uniform(size=n) if self.binary_outcome else rng.standard_normal(n)
        return {"x": x, "z": z, "u1": u1, "u2": u2, "u_y": noise_y}

    def true_psi(self, x0: int, x1: int) -> tuple[dict, dict]:
        """ψ by quadrature, exact to about 1e-12: given z, E[Y_{xy, W_{xw}} | z] is closed-form for a continuous Y (Y
        is linear in W1, W2 and W1·z2, with E[W1 | z] = m = a_xw + 0.5·z1, E[W1²] = m² + 1) and a Gauss-Hermite sum
        over (U1, U2) for a binary one, and ψ(xz, xw, xy) is its mean weighted by
        P(X = xz | z) over z (Gauss-Legendre in z1 on [−2, 2], both values of z2). A Monte Carlo truth of 1,000,000
        units was 0.015 off for the TV of a level holding a tenth of them: 0.2 SD of the estimate at n = 5000."""
        nodes, weights = np.polynomial.legendre.leggauss(_TRUTH_NODES)
        z = np.column_stack([np.tile(_Z1_BOUND * nodes, 2), np.repeat([0.0, 1.0], _TRUTH_NODES)])
        density = np.tile(weights, 2) / weights.sum() / 2  # z1 uniform, z2 a fair coin
        propensity = self.propensities(z)
        levels = (x0, x1)
        group = {i: density * propensity[:, level] for i, level in enumerate(levels)}
        pair = group[0] + group[1]
        share = {i: float(group[i].sum() / pair.sum()) for i in (0, 1)}
        psi = {}
        for i_w, x_w in enumerate(levels):
            for i_y, x_y in enumerate(levels):
                mean = self._mean_given_z(x_y, x_w, z)
                psi[(None, i_w, i_y)] = float((mean * pair).sum() / pair.sum())
                for i_z in (0, 1):
                    psi[(i_z, i_w, i_y)] = float((mean * group[i_z]).sum() / group[i_z].sum())
        return psi, share

    def _mean_given_z(self, x_y: int, x_w: int, z: np.ndarray) -> np.ndarray:
        """E[Y_{x_y, W_{x_w}} | z]: in closed form, or for a binary Y by Gauss-Hermite quadrature over (U1, U2)."""
        z1, z2 = z[:, 0], z[:, 1]
        if not self.binary_outcome:
            w1 = self._W1_SHIFT[x_w] + 0.5 * z1
            w2 = self._W2_SHIFT[x_w] + 0.25 * (w1**2 + 1.0) - 0.3 * z2
            return self.outcome_mean(np.full(len(z), float(x_y)), z, np.column_stack([w1, w2]))
        nodes, weights = np.polynomial.hermite_e.hermegauss(_HERMITE_NODES)
        weights = weights / weights.sum()  # standard normal
        grid = np.array(np.meshgrid(nodes, nodes, indexing="ij")).reshape(2, -1)  # (u1, u2) pairs
        units = len(z) * grid.shape[1]
        u = {"z": np.repeat(z, grid.shape[1], axis=0), "u1": np.tile(grid[0], len(z)), "u2": np.tile(grid[1], len(z))}
        w = self.mediators(np.full(units, float(x_w)), u)
        mean = self.outcome_mean(np.full(units, float(x_y)), u["z"], w).reshape(len(z), -1)
        return mean @ np.outer(weights, weights).ravel()

    def mediators(self, x, u):
        k, z = x.astype(int), u["z"]
        w1 = self._W1_SHIFT[k] + 0.5 * z[:, 0] + u["u1"]
        w2 = self._W2_SHIFT[k] + 0.25 * w1**2 - 0.3 * z[:, 1] + 0.5 * u["u2"]
        return np.column_stack([w1, w2])

    def outcome_mean(self, x, z, w):
        k = x.astype(int)
        direct = self._DIRECT[k] + self._DIRECT_Z1[k] * z[:, 0] + self._DIRECT_W1[k] * w[:, 0]
        eta = direct + 0.8 * z[:, 0] - 0.6 * z[:, 1] + 0.7 * w[:, 0] + 0.3 * w[:, 0] * z[:, 1] + 0.5 * w[:, 1]
        return expit(0.7 * eta - 0.3) if self.binary_outcome else eta


@lru_cache(maxsize=None)
def _intercepts(model: MultilevelSFM) -> np.ndarray:
    """α with P(X = k) = ``_LEVEL_SHARES[levels]``: a fixed-point iteration (α_k += log(target / share))
    on a midpoint grid of z1 (error ~1e-8) for both values of z2."""
    m = 4000
    z1 = -_Z1_BOUND + 2 * _Z1_BOUND * (np.arange(m) + 0.5) / m
    grid = np.column_stack([np.tile(z1, 2), np.repeat([0.0, 1.0], m)])
    target = np.array(_LEVEL_SHARES[model.levels])
    alpha = np.log(target / target[0])
    for _ in range(500):
        shares = softmax(model.log_odds(grid, alpha), axis=1).mean(axis=0)
        if np.abs(shares - target).max() < 1e-12:
            break
        alpha = alpha + np.log(target / shares)
        alpha = alpha - alpha[0]
    alpha.setflags(write=False)
    return alpha


_A2, _BINARY, _COUNT, _CONFOUNDED, _MIXED = AppendixA2(), BinarySFM(), CountSFM(), ConfoundedSFM(), MixedSFM()


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_appendix_a2(n: int = 5000, seed: int = 0) -> SyntheticData:
    """Sample the paper's Appendix A.2 SCM (Z empty, W = {w1, w2}, continuous Y)."""
    return _A2.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_binary_sfm(n: int = 5000, seed: int = 0) -> SyntheticData:
    """Sample an SFM with Z = {z1, z2}, W = {w1, w2} and binary Y."""
    return _BINARY.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_count_sfm(n: int = 5000, seed: int = 0) -> SyntheticData:
    """Sample an SFM with binary Y, Z = {z1, z2} and W = {w1 (real), w2 (a count)}, the shape of COMPAS."""
    return _COUNT.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_confounded_sfm(n: int = 5000, seed: int = 0) -> SyntheticData:
    """Sample an SFM with continuous Y and a latent confounder of X and Z."""
    return _CONFOUNDED.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed())})
def make_mixed_sfm(n: int = 5000, seed: int = 0) -> SyntheticData:
    """Sample an SFM with continuous Y, Z = {z1, region} (region: four named levels) and W = {w1, w2}:
    the shape of an administrative table, used by the scale benchmarks and tests."""
    return _MIXED.sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed()), "alpha_xw": Real(), "alpha_wy": Real(), "alpha_xy": Real()})
def make_linear_sfm(n: int = 5000, seed: int = 0, alpha_xw: float = 1.0, alpha_wy: float = 1.0, alpha_xy: float = 0.5) -> SyntheticData:
    """Sample a linear SCM with Z empty; the causal effect of X on Y is α_XW·α_WY + α_XY."""
    return LinearSFM(alpha_xw, alpha_wy, alpha_xy).sample(n, seed)


@validate_params({"n": Integer(1), "seed": Optional(Seed()), "levels": Integer(2, MAX_SYNTHETIC_LEVELS), "binary_outcome": Boolean()})
def make_multilevel_sfm(n: int = 5000, seed: int = 0, *, levels: int = 4, binary_outcome: bool = False) -> SyntheticData:
    """Sample an SFM whose protected attribute X has ``levels`` levels 0 (the reference, the largest group:
    40% with four levels) to levels − 1 (the smallest: 10% from three levels on), Z = {z1, z2},
    W = {w1, w2} and continuous Y (``binary_outcome``: a 0/1 Y, logistic in the same linear predictor);
    level 2 has no direct effect against the reference.

    ``truth_for(a, b)`` gives the truth of any contrast and ``truth_by_level`` every level against 0;
    ``sfm`` and ``truth`` are those of the contrast (0, 1).
    """
    return MultilevelSFM(levels, binary_outcome).sample(n, seed)
