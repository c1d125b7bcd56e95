"""Is the K = 2 grid cells' low TV coverage the interval's fault or the seeds'? (issue 43)

    python benchmarks/check_tv_coverage.py [--reps 2000] [--n 10000]

TV is a difference of group means: its interval needs no model. Fresh samples of ``multilevel_k2`` (continuous and
binary Y; seeds 50,000 + rep, none of the grid's) give the coverage of the naive two-sample interval of the true TV, and
six of the grid's own samples check that fairpath's TV and its SE are that difference and that SE.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy.stats import binomtest

from fairpath._stats import z_value
from fairpath.causal import decompose
from fairpath.datasets import make_multilevel_sfm


def naive(data) -> tuple[float, float]:
    a, b = data.y[data.x == 1], data.y[data.x == 0]
    return a.mean() - b.mean(), float(np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    for binary in (False, True):
        truth = make_multilevel_sfm(10, seed=0, levels=2, binary_outcome=binary).truth["tv"]
        z = np.array([(est - truth) / se for est, se in (naive(make_multilevel_sfm(args.n, seed=50_000 + rep, levels=2,
                                                                                     binary_outcome=binary).data)
                                                         for rep in range(args.reps))])
        hits = int((np.abs(z) < z_value(0.95)).sum())
        interval = binomtest(hits, args.reps).proportion_ci(0.95, method="exact")
        checks = []
        for rep in range(6):  # the grid's own seeds
            sample = make_multilevel_sfm(args.n, seed=10_000 + rep, levels=2, binary_outcome=binary)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                estimate = decompose(sample.data, sample.sfm, progress=False).estimate("tv")
            difference, se = naive(sample.data)
            checks.append((abs(estimate.estimate - difference), estimate.se / se))
        print(f"{'binary' if binary else 'continuous'} Y, n = {args.n}: naive TV interval covers {hits / args.reps:.4f} "
              f"[{interval.low:.3f}, {interval.high:.3f}] of {args.reps} fresh samples (mean z {z.mean():+.3f}, SD z {z.std():.3f}); "
              f"fairpath's TV minus the difference of means at most {max(c[0] for c in checks):.1e}, its SE over the naive SE "
              f"{min(c[1] for c in checks):.4f}–{max(c[1] for c in checks):.4f}")


if __name__ == "__main__":
    main()
