"""Size of the text audit's tests once untestable ones leave the Holm family, and whether the smallest
detectable excess it prints is right.

Scores are VADER scores of the controlled generator's twelve sentences (six positive, six negative) on
a 4-value, 2-subgroup, 5-template specification: under the null every continuation is one of them,
uniformly. Two parts, both at alpha = 0.05:

1. **Size.** For 1 and 8 continuations per prompt, the share of null replicates where each metric is
   significant after Holm over the *testable* family, the share where any is (the family-wise error
   rate), and the share where each metric is not testable. With one continuation individual fairness
   is never testable, so the group test makes the family alone.
2. **Smallest detectable excess.** At 8 continuations per prompt, the mean ``detectable_excess`` of
   each metric over null replicates (the excess over the noise floor that Holm p < alpha needs when
   no other test rejects). Value A's scores are then raised by a shift delta (clipped to [0, 1]); on a
   grid of delta the mean excess (estimate minus its own null mean) is measured, delta* is where it
   equals that detectable excess (linear interpolation), and fresh replicates at delta* give the
   detection rate, which should be about 50%: an effect the size of the printed detectable excess is
   detected half the time. One secant step on the measured mean excess corrects the grid's
   interpolation. Rates come with exact 95% (Clopper-Pearson) Monte Carlo intervals.

    python benchmarks/study_text_detectable.py            # about 10 minutes on one core beside other work
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.stats import beta

from fairpath.text import FairnessSpec, PoolGenerator, VaderScorer, counterfactual_fairness

ALPHA = 0.05
METRICS = ("individual", "group")
SPEC = FairnessSpec.from_dict({
    "attribute": "country",
    "values": {"north": ["A", "B"], "south": ["C", "D"]},
    "templates": ["I am from {country}.", "People from {country} are", "{country} is", "I saw {country} today",
                  "In {country}, people"],
})


def score_pool() -> np.ndarray:
    generator = PoolGenerator(SPEC)
    return np.asarray(VaderScorer().score(list(generator.positive + generator.negative)))


def replicate(pool: np.ndarray, n_samples: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """One score table: every continuation drawn from ``pool``; value A's scores raised by ``shift``."""
    prompts = SPEC.prompts()[["template_id", "value", "subgroup"]]
    frame = prompts.loc[prompts.index.repeat(n_samples)].reset_index(drop=True)
    scores = np.random.default_rng(seed).choice(pool, size=len(frame))
    return frame.assign(score=np.where(frame["value"] == "A", np.clip(scores + shift, 0, 1), scores))


def interval(count: int, n: int) -> str:
    low = beta.ppf(0.025, count, n - count + 1) if count else 0.0
    high = beta.ppf(0.975, count + 1, n - count) if count < n else 1.0
    return f"{count / n:.3f} [{low:.3f}, {high:.3f}]"


def size(pool, n_samples: int, replicates: int, permutations: int) -> dict:
    significant, untestable, any_rejection = np.zeros(2, int), np.zeros(2, int), 0
    for r in range(replicates):
        result = counterfactual_fairness(replicate(pool, n_samples, 10_000 + r), n_permutations=permutations, seed=r)
        tests = [getattr(result, m) for m in METRICS]
        significant += [t.significant for t in tests]
        untestable += [not t.testable for t in tests]
        any_rejection += any(t.significant for t in tests)
    row = {"continuations per prompt": n_samples, "replicates": replicates}
    for m, metric in enumerate(METRICS):
        row[f"{metric}: significant"] = interval(significant[m], replicates)
        row[f"{metric}: not testable"] = f"{untestable[m] / replicates:.3f}"
    row["any significant (FWER)"] = interval(any_rejection, replicates)
    return row


def excess_and_detection(pool, n_samples, shift, replicates, permutations, first_seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per metric: mean excess, mean detectable excess, and the counts of replicates whose excess exceeds their
    detectable excess (p < alpha / family: Holm's lone rejection) and that are significant after Holm."""
    excess, detectable, detected = np.zeros(2), np.zeros(2), np.zeros((2, 2), int)
    for r in range(replicates):
        result = counterfactual_fairness(replicate(pool, n_samples, first_seed + r, shift), n_permutations=permutations, seed=r)
        tests = [getattr(result, m) for m in METRICS]
        excess += [t.excess for t in tests]
        detectable += [t.detectable_excess for t in tests]
        detected += [[t.excess > t.detectable_excess, t.significant] for t in tests]
    return excess / replicates, detectable / replicates, detected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=400, help="null replicates per size cell and replicates at delta*")
    parser.add_argument("--grid-replicates", type=int, default=40, help="replicates per shift of the grid")
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--samples", type=int, default=8, help="continuations per prompt of part 2")
    args = parser.parse_args()
    started = time.perf_counter()
    pool = score_pool()
    print(f"VADER scores of the 12 pool sentences: {np.round(np.sort(pool), 3).tolist()}")
    print(f"\n1. size at alpha = {ALPHA} (Holm over the testable tests only; {args.permutations} permutations)")
    print(pd.DataFrame([size(pool, n, args.replicates, args.permutations) for n in (1, args.samples)]).T.to_string(header=False))

    print(f"\n2. smallest detectable excess at {args.samples} continuations per prompt")
    _, null_detectable, _ = excess_and_detection(pool, args.samples, 0.0, args.replicates, args.permutations, 20_000)
    grid = np.linspace(0, 0.8, 17)
    curve = np.array([excess_and_detection(pool, args.samples, shift, args.grid_replicates, args.permutations, 30_000 + 1000 * k)[0]
                      for k, shift in enumerate(grid)])
    for m, metric in enumerate(METRICS):
        target = null_detectable[m]
        shift = float(np.interp(target, curve[:, m], grid))  # the mean excess grows with the shift
        slope = np.gradient(curve[:, m], grid)[np.searchsorted(grid, shift)]
        print(f"  {metric}: detectable excess under the null {target:.4f}")
        for step in ("grid", "secant"):  # the grid's delta*, then one secant step on fresh replicates' mean excess
            excess, detectable, detected = excess_and_detection(pool, args.samples, shift, args.replicates, args.permutations,
                                                                40_000 if step == "grid" else 50_000)
            print(f"    {step:<6} delta* = {shift:.3f}: mean excess {excess[m]:.4f}, mean detectable excess {detectable[m]:.4f}; "
                  f"excess > its detectable excess {interval(int(detected[m, 0]), args.replicates)}, "
                  f"Holm p < {ALPHA} {interval(int(detected[m, 1]), args.replicates)}", flush=True)
            shift += (target - excess[m]) / slope
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
