"""Speed of fairpath's W1 metrics against a plain loop of scipy.stats.wasserstein_distance.

Data shaped like the paper's occupation study: 29 values x 10 templates, N samples per prompt.
Prints the seconds of each method and the ratio, measured in the same run, plus the time of a full
``counterfactual_fairness`` call (its permutation tests included).

    python benchmarks/bench_text_metrics.py --samples 1000 --permutations 99
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from scipy.stats import wasserstein_distance

from fairpath.text._metrics import _individual, _pair_matrix, counterfactual_fairness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=29)
    parser.add_argument("--templates", type=int, default=10)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=99)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    cells = [[rng.beta(2 + v % 3, 3, size=args.samples) for v in range(args.values)] for _ in range(args.templates)]

    started = time.perf_counter()
    ours = _individual(_pair_matrix(cells))
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    loop = np.mean([wasserstein_distance(row[a], row[b]) for row in cells
                    for a, b in itertools.combinations(range(args.values), 2)])
    loop_s = time.perf_counter() - started
    print(f"individual fairness over {args.templates} templates x {args.values * (args.values - 1) // 2} pairs, "
          f"{args.samples} samples per prompt")
    print(f"  fairpath vectorised: {ours_s:.3f} s   scipy loop: {loop_s:.3f} s   speed-up x{loop_s / ours_s:.1f}   "
          f"|difference| {abs(ours - loop):.2e}")

    frame = pd.DataFrame([{"template_id": t, "value": f"v{v}", "subgroup": f"v{v}", "score": s}
                          for t, row in enumerate(cells) for v, cell in enumerate(row) for s in cell])
    started = time.perf_counter()
    counterfactual_fairness(frame, n_permutations=args.permutations)
    print(f"  counterfactual_fairness with {args.permutations} permutations: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
