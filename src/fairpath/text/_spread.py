"""The between-value spread of mean sentiment: an effect size free of the number of samples per prompt,
with a bootstrap interval, a paired one-sided test against a reference model, and the power of that test.

Why not W1
    Individual fairness (mean W1 between value pairs, :mod:`fairpath.text._metrics`) has a noise floor
    that depends on the samples per prompt n, so "the excess fell by x %" is not linear in the true
    gap. The spread below is estimated without bias on the variance scale at every n, and its square
    root is in score units and linear in a gap.

The estimand
    A prompt (cell) is one (template t, value v) with scores of mean μ_tv and variance σ²_tv. The
    *individual* measure is θ = mean_t Var_v(μ_tv) (variance over the template's V values, divisor
    V − 1); the *group* measure is θ_g = Var_v(μ_v) of the value means pooled over templates,
    μ_v = Σ_t n_tv μ_tv / N_v (N_v = Σ_t n_tv: weighted by the counts, as the pooled samples are).
    With unequal counts the templates' own effects enter the value means in unequal shares and count
    toward θ_g; with equal counts per template they cancel.
    The *spread* is sqrt(θ): scaling every value's effect μ_tv − μ̄_t by c scales it by c.

The estimator (unbiased for θ at every n_tv ≥ 2)
    With cell means m_tv, within-cell sample variances s²_tv (ddof 1) and counts n_tv, the m_tv
    are independent with E m_tv = μ_tv and Var m_tv = σ²_tv / n_tv, so for one template

        E Σ_v (m_v − m̄)² = Σ_v (μ_v − μ̄)² + (V − 1)/V Σ_v σ²_v / n_v,

    (E (m_v − m̄)² = (μ_v − μ̄)² + Var m_v (1 − 2/V) + Σ_w Var m_w / V²). Dividing by V − 1, the
    template's sample variance S_t of the m_tv has E S_t = Var_v(μ_tv) + mean_v σ²_tv / n_tv, and
    E s²_tv = σ²_tv, hence

        θ̂ = mean_t [ S_t − mean_v s²_tv / n_tv ]  with  E θ̂ = θ.

    The group estimator is the same with M_v = Σ_t n_tv m_tv / N_v, whose variance is
    Σ_t n_tv σ²_tv / N_v² (estimated with the within-cell s²_tv, so differences between templates do
    not count as noise): θ̂_g = var_v(M_v) − mean_v Σ_t n_tv s²_tv / N_v². The subtracted term is the
    *noise floor*: what the raw variance of the means reads without any effect. θ̂ can be negative;
    then the spread reads 0 ("at the noise floor"), never a negative change.

Scores are the continuous sentiment scores of the audit (e.g. VADER in [−1, 1] or [0, 1]).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._stats import Estimate, holm
from fairpath._validation import Draws, Frame, Integer, Probability, Real, Seed, Text, validate_params
from fairpath.text._metrics import _CHUNK_CELLS, _aligned, _Design, _permuted_within, permutation_p_value
from fairpath.text._parameters import TEST_SETTINGS
from fairpath.text._power import TARGET_POWER

_MEASURES = ("individual", "group")


# ----------------------------------------------------------------------------------------------
# The estimator, on cell moments with any leading (draw) dimensions
def _components(means: np.ndarray, variances: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Raw variance of the means and its noise floor, individual then group: θ̂ = raw − floor for each.

    ``means`` and ``variances`` are (..., T, V) cell means and sample variances (ddof 1), ``counts`` (T, V).
    """
    raw = means.var(axis=-1, ddof=1).mean(axis=-1)
    floor = (variances / counts).mean(axis=(-2, -1))
    totals = counts.sum(axis=0)
    pooled = (counts * means).sum(axis=-2) / totals
    group_raw = pooled.var(axis=-1, ddof=1)
    group_floor = ((counts * variances).sum(axis=-2) / totals**2).mean(axis=-1)
    return raw, floor, group_raw, group_floor


def _thetas(means, variances, counts) -> tuple[np.ndarray, np.ndarray]:
    """θ̂ individual and group (module docstring)."""
    raw, floor, group_raw, group_floor = _components(means, variances, counts)
    return raw - floor, group_raw - group_floor


def _spread(theta: float) -> float:
    return float(np.sqrt(max(theta, 0.0)))


def _shrink(theta: float, raw: float) -> float:
    """The factor c on the means' deviations that makes their raw variance ``raw`` equal max(θ̂, 0)."""
    return float(np.sqrt(max(theta, 0.0) / raw)) if raw > 0 else 0.0


def _moments(deviations: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance (ddof 1) of each cell's block of ``deviations`` (..., N): sums per block."""
    sums = np.add.reduceat(deviations, starts, axis=-1)
    squares = np.add.reduceat(deviations**2, starts, axis=-1)
    return sums / counts, (squares - sums**2 / counts) / (counts - 1)


@dataclass(frozen=True)
class _Cells:
    """One model's scores, cell-major (template, then value), as deviations from their cell mean (for precision)."""

    design: _Design
    deviations: np.ndarray  # (N,)
    means: np.ndarray  # (T, V)
    counts: np.ndarray  # (T, V)

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.counts.ravel())[:-1]])

    @property
    def variances(self) -> np.ndarray:
        return np.add.reduceat(self.deviations**2, self.starts).reshape(self.counts.shape) / (self.counts - 1)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, score: str, what: str) -> "_Cells":
        if score in frame.columns and not pd.api.types.is_numeric_dtype(frame[score]):
            raise FairpathInputError(f"{what}: column {score!r} must hold numeric sentiment scores, got dtype {frame[score].dtype}")
        if score in frame.columns and np.isinf(frame[score].to_numpy(float)).any():
            raise FairpathInputError(f"{what}: column {score!r} has infinite scores; score every sample with a finite number")
        # the spread does not use subgroups; _Design needs the column
        design = _Design.from_frame(frame if "subgroup" in frame.columns else frame.assign(subgroup=frame.get("value")), score)
        counts = np.array([[len(cell) for cell in row] for row in design.cells])
        small = [f"{t}/{v} ({counts[i, j]})" for i, t in enumerate(design.templates) for j, v in enumerate(design.values)
                 if counts[i, j] < 2]
        if small:
            raise FairpathInputError(f"{what}: prompt(s) (template/value) {small[:5]} ({len(small)} in all) have fewer than 2 scores; "
                                     "the within-prompt variance needs at least 2 continuations per prompt (20 or more for precision)")
        return cls._of(design, counts)

    @classmethod
    def _of(cls, design: _Design, counts: np.ndarray) -> "_Cells":
        means = np.array([[cell.mean() for cell in row] for row in design.cells])
        deviations = np.concatenate([cell - cell.mean() for row in design.cells for cell in row])
        return cls(design, deviations, means, counts)

    def aligned(self, other: "_Cells") -> "_Cells":
        """``other`` in this one's prompt order (both must have the same prompts)."""
        design = _aligned(self.design, other.design)
        return _Cells._of(design, np.array([[len(cell) for cell in row] for row in design.cells]))


# ----------------------------------------------------------------------------------------------
# Estimate with a bootstrap interval
@dataclass(frozen=True)
class SpreadEstimate:
    """One measure's θ̂ (``theta``, an :class:`Estimate` with its bootstrap SE and interval at ``theta.level``),
    the raw variance of the means and its noise floor (θ̂ = raw − noise_floor), and the spread sqrt(max(θ̂, 0))
    with its interval (the θ interval's ends mapped the same way)."""

    theta: Estimate
    raw: float
    noise_floor: float

    @property
    def spread(self) -> float:
        return _spread(self.theta.estimate)

    @property
    def spread_interval(self) -> tuple[float, float]:
        return _spread(self.theta.ci_low), _spread(self.theta.ci_high)

    @property
    def at_noise_floor(self) -> bool:
        """θ̂ ≤ 0: the means vary no more than sampling alone makes them; the spread reads 0."""
        return self.theta.estimate <= 0

    def to_dict(self) -> dict:
        low, high = self.spread_interval
        return {"theta": self.theta.to_dict(), "raw": self.raw, "noise_floor": self.noise_floor, "spread": self.spread,
                "spread_low": low, "spread_high": high, "at_noise_floor": self.at_noise_floor}

    def __str__(self) -> str:
        low, high = self.spread_interval
        floor = " (at the noise floor)" if self.at_noise_floor else ""
        return (f"spread {self.spread:.4f}{floor}, {self.theta.level:.0%} CI [{low:.4f}, {high:.4f}]; θ̂ {self.theta.estimate:.3g} "
                f"= raw {self.raw:.3g} − noise floor {self.noise_floor:.3g}")


@dataclass(frozen=True)
class ValueSpread:
    """The between-value spread of mean sentiment of one scored audit: ``individual`` (within templates) and
    ``group`` (values pooled over templates), each a :class:`SpreadEstimate` (see fairpath.text._spread)."""

    score: str
    individual: SpreadEstimate
    group: SpreadEstimate
    level: float
    n_bootstrap: int
    n_prompts: int
    n_samples: int
    seed: int

    def to_dict(self) -> dict:
        return {"score": self.score, "individual": self.individual.to_dict(), "group": self.group.to_dict(), "level": self.level,
                "n_bootstrap": self.n_bootstrap, "n_prompts": self.n_prompts, "n_samples": self.n_samples, "seed": self.seed}

    def __str__(self) -> str:
        return (f"ValueSpread({self.score!r}, {self.n_prompts} prompts, {self.n_samples} scores)\n"
                f"  individual {self.individual}\n  group      {self.group}")


def _bootstrap_thetas(cells: _Cells, n_bootstrap: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, tuple[float, float]]:
    """θ̂ individual and group of ``n_bootstrap`` resamples within each cell, each measure drawn from a population
    whose θ equals max(θ̂, 0), and those populations' θ.

    The population of a measure is the audit's cells with their deviations scaled by sqrt(n/(n − 1)) (so
    that each cell's variance is s², not the plug-in (n − 1)/n s²) and their means shrunk toward the
    template mean (individual) or every value's scores shifted toward the grand mean of the value means
    (group) by the factor c = sqrt(max(θ̂, 0) / raw). Resampling the raw cells instead would centre the
    draws at the raw variance, θ̂ plus the noise floor, not at θ̂.
    """
    counts = cells.counts
    theta, group_theta = (float(x) for x in _thetas(cells.means, cells.variances, counts))
    raw, _, group_raw, _ = (float(x) for x in _components(cells.means, cells.variances, counts))
    template_mean = cells.means.mean(axis=1, keepdims=True)
    individual_means = template_mean + _shrink(theta, raw) * (cells.means - template_mean)
    value_means = (counts * cells.means).sum(axis=0) / counts.sum(axis=0)
    shift = (_shrink(group_theta, group_raw) - 1) * (value_means - value_means.mean())
    group_means = cells.means + shift  # every score of value v moves by shift_v, so its pooled mean does too
    flat_counts = counts.ravel()
    source = cells.deviations * np.repeat(np.sqrt(flat_counts / (flat_counts - 1)), flat_counts)
    starts, of_sample = cells.starts, np.repeat(np.arange(flat_counts.size), flat_counts)
    chunk = max(1, _CHUNK_CELLS // len(source))
    individual, group = [], []
    for start in range(0, n_bootstrap, chunk):
        n_draws = min(chunk, n_bootstrap - start)
        picks = starts[of_sample] + (rng.random((n_draws, len(source))) * flat_counts[of_sample]).astype(np.int64)
        offsets, variances = (a.reshape(n_draws, *counts.shape) for a in _moments(source[picks], starts, flat_counts))
        individual.append(_thetas(individual_means + offsets, variances, counts)[0])
        group.append(_thetas(group_means + offsets, variances, counts)[1])
    return np.concatenate(individual), np.concatenate(group), (max(theta, 0.0), max(group_theta, 0.0))


def _interval(theta: float, draws: np.ndarray, population_theta: float, level: float) -> Estimate:
    """The percentile interval of the draws moved by θ̂ − (their population's θ) (a shift only when θ̂ < 0, where the
    population sits at θ = 0), widened to contain θ̂ in the rare case it falls outside."""
    estimate = Estimate.from_draws(theta, draws + (theta - population_theta), level)
    return replace(estimate, ci_low=min(estimate.ci_low, theta), ci_high=max(estimate.ci_high, theta))


@validate_params({"samples": Frame(), "score": Text(), "level": Probability(), "n_bootstrap": Draws(), "seed": Seed()})
def value_spread(samples: pd.DataFrame, score: str = "score", *, level: float = 0.95, n_bootstrap: int = 999,
                 seed: int = 0) -> ValueSpread:
    """The between-value spread of mean sentiment, individual (within templates) and group (values pooled),
    each with a percentile bootstrap interval at ``level``.

    ``samples`` has one row per continuation: ``template_id``, ``value`` and the ``score`` column (every
    template needs every value, every prompt at least 2 scores; counts may differ). θ̂ is unbiased for
    θ (module docstring); the spread is sqrt(max(θ̂, 0)). The interval: ``n_bootstrap`` resamples of the
    scores within each prompt, drawn from the audit's cells with their means shrunk so that the
    population's θ equals max(θ̂, 0) (see ``_bootstrap_thetas``), θ̂ of each, the percentile interval on
    θ (moved by θ̂ where θ̂ < 0), then mapped by sqrt(max(·, 0)) to the spread. If θ̂ falls outside its
    percentile interval (rare) the interval is widened to reach it. Seeded: the same seed gives the
    same numbers.
    """
    cells = _Cells.from_frame(samples, score, "samples")
    individual, group, population = _bootstrap_thetas(cells, n_bootstrap, np.random.default_rng(seed))
    components = [float(x) for x in _components(cells.means, cells.variances, cells.counts)]
    estimates = [SpreadEstimate(_interval(raw - floor, draws, theta, level), raw, floor)
                 for raw, floor, draws, theta in zip(components[::2], components[1::2], (individual, group), population)]
    return ValueSpread(score, *estimates, level=level, n_bootstrap=n_bootstrap, n_prompts=int(cells.counts.size),
                       n_samples=int(cells.counts.sum()), seed=seed)


# ----------------------------------------------------------------------------------------------
# Paired one-sided test against a reference model
@dataclass(frozen=True)
class SpreadTest:
    """One measure compared: each model's θ̂ and spread, ``change`` = spread_model / spread_reference − 1 (NaN when
    the reference's θ̂ ≤ 0: nothing to change relative to), ``difference`` Δ = θ̂_model − θ̂_reference, the
    one-sided permutation ``p_value`` of "the model's spread is lower" and ``p_holm`` over the two measures."""

    theta_reference: float
    theta_model: float
    difference: float
    p_value: float
    p_holm: float
    alpha: float

    @property
    def spread_reference(self) -> float:
        return _spread(self.theta_reference)

    @property
    def spread_model(self) -> float:
        return _spread(self.theta_model)

    @property
    def change(self) -> float:
        if self.theta_reference <= 0:
            return float("nan")
        return self.spread_model / self.spread_reference - 1

    @property
    def significant(self) -> bool:
        return bool(self.p_holm < self.alpha)

    def to_dict(self) -> dict:
        return {**asdict(self), "spread_reference": self.spread_reference, "spread_model": self.spread_model,
                "change": self.change, "significant": self.significant}

    def __str__(self) -> str:
        change = "n/a (reference at the noise floor)" if np.isnan(self.change) else f"{self.change:+.1%}"
        return (f"spread {self.spread_reference:.4f} -> {self.spread_model:.4f} ({change}); Δθ̂ {self.difference:+.3g}, "
                f"one-sided p = {self.p_value:.3g}, Holm p = {self.p_holm:.3g}")


@dataclass(frozen=True)
class SpreadComparison:
    """A model's between-value spread against a reference's on the same prompts: ``individual`` and ``group``
    are :class:`SpreadTest` (one-sided: "the model's spread is lower")."""

    score: str
    individual: SpreadTest
    group: SpreadTest
    n_permutations: int
    alpha: float
    seed: int
    n_samples_reference: int
    n_samples_model: int

    def to_dict(self) -> dict:
        return {"score": self.score, "individual": self.individual.to_dict(), "group": self.group.to_dict(),
                "n_permutations": self.n_permutations, "alpha": self.alpha, "seed": self.seed,
                "n_samples_reference": self.n_samples_reference, "n_samples_model": self.n_samples_model}

    def __str__(self) -> str:
        return (f"SpreadComparison({self.score!r}, model against reference, {self.n_permutations} permutations)\n"
                f"  individual {self.individual}\n  group      {self.group}")


@dataclass(frozen=True)
class _Pooled:
    """Both models' scores of every prompt in one block (cell-major), as deviations from the block's pooled mean;
    ``labels`` is 1 for the model's samples, 0 for the reference's."""

    deviations: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray  # (T, V) pooled means
    counts: np.ndarray  # (2, T, V): reference, model

    @classmethod
    def of(cls, reference: _Cells, model: _Cells) -> "_Pooled":
        blocks = [(a, b) for row_a, row_b in zip(reference.design.cells, model.design.cells) for a, b in zip(row_a, row_b)]
        offsets = np.array([np.concatenate(pair).mean() for pair in blocks]).reshape(reference.counts.shape)
        deviations = np.concatenate([np.concatenate(pair) - offset for pair, offset in zip(blocks, offsets.ravel())])
        labels = np.concatenate([np.r_[np.zeros(len(a), np.int64), np.ones(len(b), np.int64)] for a, b in blocks])
        return cls(deviations, labels, offsets, np.stack([reference.counts, model.counts]))

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.counts.sum(axis=0).ravel())[:-1]])

    def blocks(self) -> list[np.ndarray]:
        sizes = self.counts.sum(axis=0).ravel()
        return [np.arange(start, start + size) for start, size in zip(self.starts, sizes)]

    def differences(self, labels: np.ndarray) -> np.ndarray:
        """Δ = θ̂_model − θ̂_reference, individual and group, for each row of ``labels`` (draws x N): (draws, 2)."""
        starts, shape = self.starts, (len(labels), *self.offsets.shape)
        x = self.deviations
        model_sums, model_squares = (np.add.reduceat(labels * power, starts, axis=-1) for power in (x, x**2))
        total_sums, total_squares = np.add.reduceat(x, starts), np.add.reduceat(x**2, starts)
        thetas = []
        for sums, squares, counts in ((total_sums - model_sums, total_squares - model_squares, self.counts[0]),
                                      (model_sums, model_squares, self.counts[1])):
            n = counts.ravel()
            means, variances = sums / n, (squares - sums**2 / n) / (n - 1)
            thetas.append(np.stack(_thetas(self.offsets + means.reshape(shape), variances.reshape(shape), counts), axis=-1))
        return thetas[1] - thetas[0]


def check_permutations(n_permutations: int, alpha: float) -> None:
    if 1 / (1 + n_permutations) >= alpha:
        raise FairpathInputError(f"with n_permutations={n_permutations} the one-sided p = (1 + #)/(1 + n_permutations) never falls "
                                 f"below alpha={alpha:g}; use at least {int(np.floor(1 / alpha))} permutations (9999 is the default)")


@validate_params({"reference": Frame(), "model": Frame(), "score": Text(), **TEST_SETTINGS})
def compare_spread(reference: pd.DataFrame, model: pd.DataFrame, score: str = "score", *, n_permutations: int = 9999,
                   alpha: float = 0.05, seed: int = 0) -> SpreadComparison:
    """Paired one-sided permutation test of "the model's between-value spread is lower than the reference's".

    Both frames are scored audits of the same prompts (``template_id``, ``value``, ``score``; counts per
    prompt may differ). The statistic is Δ = θ̂_model − θ̂_reference for each measure. Under H0 "each
    prompt's scores have the same distribution in both models" the model labels are exchangeable among
    the pooled samples of a prompt: they are permuted within every prompt (each model keeps its count)
    ``n_permutations`` times, and

        p = (1 + #{Δ* ≤ Δ}) / (1 + n_permutations),

    exact at every ``n_permutations``. ``p_holm`` adjusts over the two measures; ``significant`` is
    p_holm < ``alpha``. Seeded: the same seed gives the same p.
    """
    check_permutations(n_permutations, alpha)
    reference_cells = _Cells.from_frame(reference, score, "reference")
    model_cells = reference_cells.aligned(_Cells.from_frame(model, score, "model"))
    pooled = _Pooled.of(reference_cells, model_cells)
    observed = pooled.differences(pooled.labels[None])[0]
    null = _permutation_differences(pooled, n_permutations, np.random.default_rng(seed))
    # one-sided towards lower: p of -Δ against the draws of -Δ*
    p_values = [permutation_p_value(-observed[k], -null[:, k]) for k in range(2)]
    adjusted = holm(p_values)
    thetas = [np.array(_thetas(cells.means, cells.variances, cells.counts)) for cells in (reference_cells, model_cells)]
    tests = [SpreadTest(float(thetas[0][k]), float(thetas[1][k]), float(observed[k]), p_values[k], float(adjusted[k]), alpha)
             for k in range(2)]
    return SpreadComparison(score, *tests, n_permutations=n_permutations, alpha=alpha, seed=seed,
                            n_samples_reference=int(reference_cells.counts.sum()), n_samples_model=int(model_cells.counts.sum()))


def _permutation_differences(pooled: _Pooled, n_permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Δ* (draws x 2) for ``n_permutations`` relabellings of the models within every prompt, in chunks."""
    blocks, chunk = pooled.blocks(), max(1, _CHUNK_CELLS // len(pooled.labels))
    return np.concatenate([pooled.differences(_permuted_within(blocks, pooled.labels, min(chunk, n_permutations - start), rng))
                           for start in range(0, n_permutations, chunk)])


# ----------------------------------------------------------------------------------------------
# Power of the paired test
@dataclass(frozen=True)
class SpreadPower:
    """Power of :func:`compare_spread`'s individual test against a fall of the spread by ``effect``.

    ``table``: one row per candidate n (samples per prompt and model) with ``power`` and its Monte-Carlo
    ``se``; ``chosen_n``: the smallest candidate with power ≥ ``target`` (None when none reaches it).
    ``base_theta`` and ``base_spread``: the pilot's θ̂ and spread (the simulated base's exact values);
    ``shrink``: c of the construction (fairpath.text._spread.spread_power); ``models`` and ``tests`` (each
    score's α, θ̂, spread and c): the claim whose power it is.
    """

    table: pd.DataFrame
    chosen_n: int | None
    target: float
    effect: float
    alpha: float
    n_replicates: int
    null_permutations: int
    base_theta: float
    base_spread: float
    shrink: float
    n_prompts: int
    seed: int
    models: int
    tests: dict

    def to_dict(self) -> dict:
        return {**{k: v for k, v in self.__dict__.items() if k != "table"}, "table": self.table.to_dict(orient="records")}


def _equal_thetas(scores: np.ndarray) -> np.ndarray:
    """θ̂ individual of designs with n scores in every cell: ``scores`` (..., T, V, n)."""
    n = scores.shape[-1]
    return _thetas(scores.mean(axis=-1), scores.var(axis=-1, ddof=1), np.full(scores.shape[-3:-1], n))[0]


def _rejections(base: np.ndarray, other: np.ndarray, alpha: float, null_permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Whether the one-sided test of "other's spread is lower" rejects, per replicate (leading axis of (R, T, V, n)).

    The permutation null of Δ is approximated by a normal of mean 0 (swapping the two models' labels maps Δ*
    to −Δ* with equal counts, so the null is symmetric) and an SD from ``null_permutations`` within-prompt
    relabellings, sqrt(mean Δ*²); with its k = null_permutations degrees of freedom Δ / SD is compared
    with Student's t_k quantile at ``alpha``.
    """
    from scipy.stats import t

    n = base.shape[-1]
    observed = _equal_thetas(other) - _equal_thetas(base)
    pooled = np.concatenate([base, other], axis=-1)
    draws = rng.permuted(np.broadcast_to(pooled, (null_permutations, *pooled.shape)), axis=-1)
    null = _equal_thetas(draws[..., n:]) - _equal_thetas(draws[..., :n])  # (k, R)
    sd = np.sqrt((null**2).mean(axis=0))
    return observed / sd < t.ppf(alpha, null_permutations)


class SpreadAtNoiseFloorError(FairpathInputError):
    """A pilot whose between-value spread is not above its noise floor (θ̂ ≤ 0): :func:`spread_power` has no
    spread to size a fall of. Audit with more samples per prompt."""


@dataclass(frozen=True)
class _Population:
    """One score's simulated populations: the pilot's cells with their means moved to the base's spread and to
    (1 − effect) times it (see :func:`spread_power`)."""

    deviations: np.ndarray  # (N,)
    base_means: np.ndarray  # (cells, 1)
    other_means: np.ndarray  # (cells, 1)
    theta: float
    shrink: float

    @classmethod
    def of(cls, cells: _Cells, score: str, effect: float) -> "_Population":
        raw, floor, _, _ = (float(x) for x in _components(cells.means, cells.variances, cells.counts))
        theta = raw - floor
        if theta <= 0:
            raise SpreadAtNoiseFloorError(f"the pilot's θ̂ of {score!r} is {theta:.3g} (raw variance of the means {raw:.3g}, noise floor "
                                     f"{floor:.3g}): no spread above the noise floor to size a fall of; audit with more samples per prompt")
        shrink = _shrink(theta, raw)
        effects = cells.means - cells.means.mean(axis=1, keepdims=True)
        base_means, other_means = ((cells.means - effects + factor * effects).ravel()[:, None] for factor in (shrink, (1 - effect) * shrink))
        return cls(cells.deviations, base_means, other_means, theta, shrink)


def _score_levels(score: str, alpha: float, other_scores) -> dict[str, float]:
    """``score`` at ``alpha`` and each of ``other_scores`` ({column: α}) at its own α, checked."""
    other_scores = {} if other_scores is None else other_scores
    if not isinstance(other_scores, dict) or not all(isinstance(k, str) and isinstance(a, (float, int)) and not isinstance(a, bool)
                                                     and 0 < a < 1 for k, a in other_scores.items()):
        raise FairpathInputError(f"other_scores {other_scores!r} must map score columns to the level of their test, a number "
                                 "strictly between 0 and 1, e.g. {'score_textblob': 0.05}")
    if score in other_scores:
        raise FairpathInputError(f"other_scores repeats score {score!r}; name each score column once")
    return {score: alpha, **{k: float(a) for k, a in other_scores.items()}}


@validate_params({"pilot": Frame(), "score": Text(), "effect": Real(0.0, 1.0), "alpha": Probability(), "models": Integer(1),
                  "n_replicates": Integer(1), "null_permutations": Integer(2, 10_000), "target": Probability(), "seed": Seed()})
def spread_power(pilot: pd.DataFrame, score: str = "score", *, candidates=(10, 20, 40, 80, 160), effect: float = 0.30,
                 alpha: float = 0.01, other_scores: dict[str, float] | None = None, models: int = 1, n_replicates: int = 200,
                 null_permutations: int = 40, target: float = TARGET_POWER, seed: int = 0) -> SpreadPower:
    """Power of :func:`compare_spread` (individual measure, one-sided, at ``alpha``) against a model whose
    spread is (1 − ``effect``) times the reference's, for every ``candidates`` n samples per prompt; or the
    power of a claim made of several such tests.

    Construction: the pilot's empirical cells are the reference's population. Its raw cell means carry
    noise (their variance overstates θ by the noise floor), so each cell's scores are first shifted so
    that its mean moves toward the template mean, m̄_t + c (m_tv − m̄_t) with c = sqrt(θ̂ / raw): the
    population's θ is then exactly the pilot's θ̂. The alternative shifts them to m̄_t + (1 − effect) c
    (m_tv − m̄_t), a spread (1 − effect) times the base's; within-prompt shapes are unchanged (shifted
    scores may leave the score range slightly; the test does not use it). Per replicate: n bootstrap
    draws per prompt from each, Δ̂ = θ̂_alternative − θ̂_base, and a rejection when the one-sided test
    rejects at ``alpha``, its permutation null approximated as in ``_rejections`` (a normal whose SD
    comes from ``null_permutations`` within-prompt relabellings, judged against Student's t). The
    power's Monte-Carlo SE is sqrt(p (1 − p) / n_replicates). Candidates are tried in increasing order
    and the simulation stops at the first with power ≥ ``target``. Seeded.

    A claim of several tests: ``other_scores`` ({column: α}) are further scores of the same continuations
    whose tests must reject too, each at its own α, and ``models`` is the number of models (e.g. one per
    training seed) that must all be found lower on every score, each with the fall on every score. A
    replicate draws the pilot's rows (all scores of a continuation together, so the scorers' dependence is
    kept), one reference sample and one sample per model, compared each with that same reference sample
    (as a study compares every model with one audit of the base); it counts when every test rejects.
    ``tests`` holds each score's α, θ̂, spread and c; ``base_theta``, ``base_spread`` and ``shrink`` are
    ``score``'s.
    """
    given = list(candidates) if isinstance(candidates, (list, tuple, range, np.ndarray)) else [candidates]
    if not given or any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2 for n in given):
        raise FairpathInputError(f"candidates {candidates!r} must be whole numbers of samples per prompt of at least 2 (the "
                                 "within-prompt variance needs 2); pass e.g. (20, 40, 80)")
    candidates = sorted({int(n) for n in given})
    levels = _score_levels(score, alpha, other_scores)
    cells = {name: _Cells.from_frame(pilot, name, "pilot") for name in levels}  # the same rows in the same order for every score
    populations = {name: _Population.of(of, name, effect) for name, of in cells.items()}
    flat_counts, starts, shape = cells[score].counts.ravel(), cells[score].starts, cells[score].counts.shape
    rng = np.random.default_rng(seed)
    rows, chosen = [], None
    for n in candidates:
        chunk = max(1, 4_000_000 // (null_permutations * flat_counts.size * 2 * n))
        rejections = 0
        for start in range(0, n_replicates, chunk):
            size = min(chunk, n_replicates - start)
            picks = starts[:, None] + (rng.random((1 + models, size, flat_counts.size, n)) * flat_counts[:, None]).astype(np.int64)
            rejected = np.ones(size, dtype=bool)
            for name, population in populations.items():
                base = (population.deviations[picks[0]] + population.base_means).reshape(size, *shape, n)
                for model in range(1, models + 1):
                    other = (population.deviations[picks[model]] + population.other_means).reshape(size, *shape, n)
                    rejected &= _rejections(base, other, levels[name], null_permutations, rng)
            rejections += int(rejected.sum())
        power = rejections / n_replicates
        rows.append({"n": n, "power": power, "se": float(np.sqrt(power * (1 - power) / n_replicates)), "rejections": rejections})
        if power >= target:
            chosen = n
            break
    first = populations[score]
    tests = {name: {"alpha": levels[name], "base_theta": p.theta, "base_spread": _spread(p.theta), "shrink": p.shrink}
             for name, p in populations.items()}
    return SpreadPower(pd.DataFrame(rows), chosen, target, effect, alpha, n_replicates, null_permutations, first.theta,
                       _spread(first.theta), first.shrink, int(flat_counts.size), seed, models, tests)
