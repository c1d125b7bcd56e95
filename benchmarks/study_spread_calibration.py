"""Error rates of the between-value spread (fairpath.text.value_spread, compare_spread, spread_power) by simulation.

Prints (and writes to benchmarks/results/spread-calibration.json):
- the coverage of the 95% bootstrap interval of θ (individual and group) on an audit-sized design
  (10 templates x 6 values x 40 scores, SD 0.16, a spread of 0.03 between values);
- the size at 0.05 of the paired one-sided permutation test when both models draw from one distribution
  (individual and group);
- the size of the power simulation's test (effect 0) at 0.05 and 0.01;
- the power of a claim of several tests as ``spread_power`` simulates it (two scorers of the same
  continuations, two models, each with a 30% fall, at 0.01 and 0.05) against the rate at which the real
  paired permutation tests meet that claim on pools drawn from the same population.

    python benchmarks/study_spread_calibration.py [--replicates 300]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath.text import compare_spread, spread_power, value_spread


def frame(effects: np.ndarray, counts, sd: float, seed: int) -> pd.DataFrame:
    """Normal scores around 0.5 + effects[t, v], counts[t, v] per prompt."""
    rng = np.random.default_rng(seed)
    counts = np.broadcast_to(counts, effects.shape)
    cells = [(t, v, 0.5 + effects[t, v] + rng.normal(0, sd, int(counts[t, v])))
             for t in range(effects.shape[0]) for v in range(effects.shape[1])]
    return pd.DataFrame({"template_id": np.concatenate([[f"t{t}"] * len(s) for t, _, s in cells]),
                         "value": np.concatenate([[f"v{v}"] * len(s) for _, v, s in cells]),
                         "score": np.concatenate([s for _, _, s in cells])})


def truth(effects: np.ndarray) -> dict:
    """θ of both measures: the mean within-template variance of the value effects; the variance of their value means."""
    return {"individual": float(np.var(effects, axis=1, ddof=1).mean()), "group": float(np.var(effects.mean(axis=0), ddof=1))}


def coverage(replicates: int) -> dict:
    rng = np.random.default_rng(5)
    effects = rng.normal(0, 1, (10, 6))
    effects = 0.03 * (effects - effects.mean(axis=1, keepdims=True)) / np.sqrt(np.var(effects, axis=1, ddof=1).mean())
    theta = truth(effects)
    hits = {m: [] for m in theta}
    for seed in range(replicates):
        result = value_spread(frame(effects, 40, 0.16, seed), n_bootstrap=499, seed=seed)
        for m in theta:
            estimate = getattr(result, m).theta
            hits[m].append(estimate.ci_low <= theta[m] <= estimate.ci_high)
    return {m: {"coverage": float(np.mean(h)), "mc_se": float(np.sqrt(0.95 * 0.05 / replicates))} for m, h in hits.items()}


def test_size(replicates: int) -> dict:
    rng = np.random.default_rng(8)
    effects = rng.normal(0, 0.05, (4, 4))
    counts_a, counts_b = rng.integers(6, 14, (4, 4)), rng.integers(6, 14, (4, 4))
    p = {"individual": [], "group": []}
    for s in range(replicates):
        result = compare_spread(frame(effects, counts_a, 0.16, 2 * s), frame(effects, counts_b, 0.16, 2 * s + 1),
                                n_permutations=199, seed=s)
        for m in p:
            p[m].append(getattr(result, m).p_value)
    return {m: {"size_at_0.05": float(np.mean(np.array(v) <= 0.05)), "mc_se": float(np.sqrt(0.05 * 0.95 / replicates))}
            for m, v in p.items()}


def power_size(replicates: int) -> dict:
    rng = np.random.default_rng(4)
    pilot = frame(rng.normal(0, 0.08, (6, 5)), 20, 0.16, 4)
    return {f"size_at_{alpha}": float(spread_power(pilot, candidates=(10,), effect=0.0, alpha=alpha, n_replicates=replicates,
                                                   seed=1).table["power"].iloc[0]) for alpha in (0.05, 0.01)}


def claim_power_agreement(replicates: int) -> dict:
    rng = np.random.default_rng(9)
    effects = rng.normal(0, 1, (10, 6))
    effects = 0.06 * (effects - effects.mean(axis=1, keepdims=True)) / np.sqrt(np.var(effects, axis=1, ddof=1).mean())
    n, levels, fall = 40, {"score": 0.01, "second": 0.05}, 0.3

    def scored(scale: float, per_prompt: int, seed: int) -> pd.DataFrame:
        """Both scorers of one pool: the second reads the first at half its scale with noise of its own."""
        first = frame(effects * scale, per_prompt, 0.16, seed)
        return first.assign(second=0.5 * first["score"] + np.random.default_rng(seed + 10**6).normal(0, 0.08, len(first)))

    met = []
    for r in range(replicates):
        base, models = scored(1.0, n, 3 * r), [scored(1 - fall, n, 3 * r + k) for k in (1, 2)]
        met.append(all(compare_spread(base, model, score=score, n_permutations=999, seed=r).individual.p_value < alpha
                       for model in models for score, alpha in levels.items()))
    simulated = spread_power(scored(1.0, 2000, 10**7), score="score", candidates=(n,), effect=fall, alpha=levels["score"],
                             other_scores={"second": levels["second"]}, models=2, n_replicates=replicates, seed=2).table.iloc[0]
    rate = float(np.mean(met))
    return {"simulated": float(simulated["power"]), "simulated_se": float(simulated["se"]), "permutation_tests": rate,
            "permutation_tests_se": float(np.sqrt(rate * (1 - rate) / replicates))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=300)
    args = parser.parse_args()
    started = time.perf_counter()
    results = {"replicates": args.replicates}
    for name, study in (("interval_coverage", coverage), ("paired_test_size", test_size), ("power_simulation_size", power_size),
                        ("claim_power_agreement", claim_power_agreement)):
        results[name] = study(args.replicates)
        print(name, json.dumps(results[name]), f"({time.perf_counter() - started:.0f} s)", flush=True)
    out = Path(__file__).parent / "results" / "spread-calibration.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
