"""How many samples per prompt a comparison of two models needs: power of the paired test by simulation.

The question a debiasing study asks is whether the debiased model's individual-fairness *excess*
(individual W1 minus its noise floor, :class:`PermutationTest`) is lower than the base's. Its test is
:func:`compare_models`: the model labels are permuted within every prompt. This module gives the
power of that test against a stated fall of the excess, for candidate numbers of samples per prompt,
from one scored audit of the base model, so that a study samples enough before it spends hours.

The alternative model (why this construction)
    Only the base is observed, so the alternative is built from it with the one property that
    matters and nothing else changed. For each template t, let Q_v be the empirical quantile
    function of value v's scores and Q̄_t the mean of the Q_v over the template's values (their
    Wasserstein barycenter: the template's common sentiment). The alternative's distribution for
    prompt (t, v) has quantile function

        Q'_v = Q̄_t + (1 - λ) (Q_v - Q̄_t),

    a convex combination of non-decreasing functions with values in [0, 1], hence a distribution of
    scores. Since Q'_a - Q'_b = (1 - λ)(Q_a - Q_b) and W1 between two distributions is the integral
    of the absolute difference of their quantile functions, every pairwise W1 and so the population
    individual fairness is exactly (1 - λ) times the base's; each prompt keeps its template's mean
    sentiment and the spread of its scores changes little, so what falls is the counterfactual gap,
    not the sentiment. The base's empirical distributions are taken as its population, and their W1
    is the base's *estimate*, which includes the base's own noise floor; shrinking by ``effect``
    itself would therefore overstate the absolute fall by ``effect`` x noise floor. λ = effect x
    excess / estimate removes exactly ``effect`` of the measured excess (the base's estimate minus its
    permutation null mean).

The simulation
    For each candidate n and replicate: n scores per prompt from the base (inverse-CDF draws from
    its empirical quantiles) and n from the alternative (fresh uniforms through Q'_v), the paired
    permutation test with ``n_permutations`` relabellings, and a rejection when its two-sided
    p-value is below ``alpha``. The power is the share of rejections, with its binomial Monte-Carlo
    SE. The statistic is :func:`_individual_equal` (proved equal to ``compare_models``'s individual
    difference by a test), which with n scores per cell needs two sorts instead of every pair's W1:
    for one template and rank k, the sum over value pairs of |a_i - a_j| is Σ_r (2r - V + 1) a_(r)
    over the V values' k-th scores sorted (a_(r) exceeds r of them and falls short of V - 1 - r).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Draws, Frame, Integer, Probability, Real, Seed, Text, validate_params
from fairpath.text._metrics import _Design, _Layout, _null_draws, _observed, _quantile_grid, permutation_p_value

TARGET_POWER = 0.8


@dataclass(frozen=True)
class PowerResult:
    """Power of the paired comparison against a fall of the individual-fairness excess by ``effect``.

    ``table`` has one row per candidate n (samples per prompt and model): ``power`` and its Monte-Carlo
    ``se``. ``chosen_n`` is the smallest candidate with power at least ``target`` (None when none
    reaches it: try larger n). ``base_estimate``, ``base_null_mean`` and ``base_excess`` describe the
    base model's individual fairness; ``shrink`` is λ of the construction (fairpath.text._power).
    """

    table: pd.DataFrame
    chosen_n: int | None
    target: float
    effect: float
    alpha: float
    n_replicates: int
    n_permutations: int
    base_estimate: float
    base_null_mean: float
    base_excess: float
    shrink: float
    n_prompts: int
    seed: int
    seconds: float

    def to_dict(self) -> dict:
        return {**{k: v for k, v in self.__dict__.items() if k != "table"}, "table": self.table.to_dict(orient="records")}


def _individual_equal(sorted_cells: np.ndarray) -> np.ndarray:
    """Individual fairness of designs with n scores in every cell: ``sorted_cells`` is (..., T, V, n), each
    cell sorted; the mean over templates and value pairs of W1 = mean over ranks of |a_k - b_k|."""
    n_values = sorted_cells.shape[-2]
    by_rank = np.sort(sorted_cells, axis=-2)
    weights = (2 * np.arange(n_values) - n_values + 1)[:, None]
    pair_sums = (by_rank * weights).sum(axis=-2).mean(axis=-1)  # (..., T): Σ over pairs of W1
    return pair_sums.mean(axis=-1) / (n_values * (n_values - 1) / 2)


def _paired_p_values(first: np.ndarray, second: np.ndarray, n_permutations: int, rng: np.random.Generator,
                     chunk: int) -> float:
    """Two-sided permutation p of individual(first) - individual(second), model labels permuted within each
    prompt: the test of :func:`compare_models` on (T, V, n) score arrays."""
    n = first.shape[-1]
    # float32: half the memory traffic of the sorts; observed and null in the same precision, so sums differ
    # from float64 by about 1e-7, far below any W1 difference that decides a rejection
    pooled = np.concatenate([first, second], axis=-1).astype(np.float32)
    observed = float(_individual_equal(np.sort(pooled[..., :n], axis=-1)) - _individual_equal(np.sort(pooled[..., n:], axis=-1)))
    null = []
    for start in range(0, n_permutations, chunk):
        draws = rng.permuted(np.broadcast_to(pooled, (min(chunk, n_permutations - start), *pooled.shape)), axis=-1)
        null.append(_individual_equal(np.sort(draws[..., :n], axis=-1)) - _individual_equal(np.sort(draws[..., n:], axis=-1)))
    return permutation_p_value(observed, np.concatenate(null).astype(float), two_sided=True)


@validate_params({"samples": Frame(), "score": Text(), "effect": Real(0.0, 1.0), "alpha": Probability(),
                  "n_replicates": Integer(1), "n_permutations": Integer(1), "target": Probability(), "seed": Seed(),
                  "floor_permutations": Draws()})
def individual_fairness_power(samples: pd.DataFrame, score: str = "score", *, candidates=(5, 10, 20, 40, 80),
                              effect: float = 0.30, alpha: float = 0.01, n_replicates: int = 100,
                              n_permutations: int = 199, target: float = TARGET_POWER, seed: int = 0,
                              floor_permutations: int = 199) -> PowerResult:
    """Power of :func:`compare_models` (individual fairness, two-sided, p < ``alpha``) against a fall of the
    base's individual-fairness excess by the fraction ``effect``, for every ``candidates`` n.

    ``samples`` is a base model's scored audit (``template_id``, ``value`` and the ``score`` column, one
    row per continuation; the counts per prompt may differ). ``n_replicates`` simulated studies per n
    (the Monte-Carlo SE of a power p is sqrt(p (1 - p) / n_replicates): 0.04 at 0.8 with 100), each
    tested with ``n_permutations`` relabellings; ``floor_permutations`` for the base's noise floor.
    Candidates are tried in increasing order and the simulation stops at the first with power at least
    ``target``. Seeded: the same arguments give the same table. See the module docstring for the
    alternative it simulates.

    ``n_permutations`` must let the test reject: p = (1 + #)/(1 + B) < alpha needs B >= 1/alpha;
    fewer permutations make the test conservative (199 at alpha 0.01 rejects only when the observed
    difference beats every draw, a size of 0.005).
    """
    started = time.perf_counter()
    candidates = sorted({int(n) for n in candidates})
    if not candidates or candidates[0] < 2:
        raise FairpathInputError(f"candidates {list(candidates)} must be whole numbers of samples per prompt of at least 2 "
                                 "(with one, W1 of a pair is a single difference); pass e.g. (5, 10, 20, 40)")
    if (1 + 0) / (1 + n_permutations) >= alpha:
        raise FairpathInputError(f"with n_permutations={n_permutations} no p-value falls below alpha={alpha:g}; use at least "
                                 f"{int(np.ceil(1 / alpha))} permutations")
    frame = samples if "subgroup" in samples.columns else samples.assign(subgroup=samples.get("value"))
    design = _Design.from_frame(frame, score)
    layout = _Layout.from_designs([design])
    pair_w1, _ = _observed(layout)
    pair_null, _ = _null_draws(layout, "values", floor_permutations, np.random.default_rng(seed))
    estimate, null_mean = float(pair_w1[0, 0].mean()), float(pair_null[:, 0].mean(axis=1).mean())
    excess = estimate - null_mean
    if effect > 0 and excess <= 0:
        raise FairpathInputError(f"the base's individual-fairness excess is {excess:.4g} (estimate {estimate:.4g}, noise floor "
                                 f"{null_mean:.4g}): no bias above the noise floor to reduce; audit with more samples per prompt")
    shrink = effect * excess / estimate if effect > 0 else 0.0
    # per template: every value's quantile function on the union of its steps, the barycenter, the alternative
    tables = []
    for row in design.cells:
        quantiles, widths = _quantile_grid(row)
        alternative = quantiles.mean(axis=0) + (1 - shrink) * (quantiles - quantiles.mean(axis=0))
        tables.append((np.cumsum(widths), quantiles, alternative))
    n_templates, n_values = len(design.templates), len(design.values)
    rng = np.random.default_rng(seed)
    rows, chosen = [], None
    for n in candidates:
        chunk = max(1, 4_000_000 // (n_templates * n_values * 2 * n))
        rejections = 0
        for _ in range(n_replicates):
            base, other = np.empty((n_templates, n_values, n)), np.empty((n_templates, n_values, n))
            for t, (edges, quantiles, alternative) in enumerate(tables):
                steps = np.minimum(np.searchsorted(edges, rng.random((2, n_values, n)), side="right"), len(edges) - 1)
                base[t] = np.take_along_axis(quantiles, steps[0], axis=1)
                other[t] = np.take_along_axis(alternative, steps[1], axis=1)
            rejections += _paired_p_values(base, other, n_permutations, rng, chunk) < alpha
        power = rejections / n_replicates
        rows.append({"n": n, "power": power, "se": float(np.sqrt(power * (1 - power) / n_replicates)), "rejections": int(rejections)})
        if power >= target:
            chosen = n
            break
    return PowerResult(pd.DataFrame(rows), chosen, target, effect, alpha, n_replicates, n_permutations, estimate, null_mean,
                       excess, shrink, n_templates * n_values, seed, time.perf_counter() - started)
