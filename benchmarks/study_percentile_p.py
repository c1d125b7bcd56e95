"""Size of the p-values of percentile-basis estimates (``Estimate.p_value``, which tests by the bootstrap draws) by simulation.

``predictive_parity`` on a synthetic SFM, the oracle score E[Y | x, z, w] as the predictor, each replicate a fresh
sample of ``--n`` rows; each measure tested at its true value (from one sample of 2,000,000 rows). Reported per measure
(SPM, the AUC, and the skewed iPPM of a coarse predictor; a sample where one group lacks a bin is refused by
``predictive_parity`` and counted as skipped): the rejection rate at 0.05 and 0.01 of the test by the draws
(p < α exactly when the percentile interval at 1 − α excludes the truth, so its size is one minus that interval's
coverage) beside the normal test from the draws' SD that the same estimates gave before.

    python benchmarks/study_percentile_p.py [--replicates 1000] [--n 500] [--n-boot 200]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import norm

from fairpath._exceptions import FairpathInputError
from fairpath.datasets import make_binary_sfm
from fairpath.parity import predictive_parity

MEASURES = ("spm", "auc", "ippm")
ALPHAS = (0.05, 0.01)


def with_predictor(sample):
    """The data with ``score``: the oracle E[Y | x, z, w] rounded to tenths (a coarse score: few bins, skewed gaps)."""
    return sample.data.assign(score=np.round(sample.outcome_mean(sample.data), 1))


def truths(n_bins: int) -> dict[str, float]:
    """Each measure on 2,000,000 rows: its sampling error is negligible beside the replicates' (SE ∝ 1/√n)."""
    sample = make_binary_sfm(2_000_000, seed=12345)
    result = predictive_parity(with_predictor(sample), sample.sfm, "score", n_bins=n_bins, n_boot=2)  # the point estimates only
    return {measure: getattr(result, measure).estimate for measure in MEASURES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--n-boot", type=int, default=200)
    parser.add_argument("--bins", type=int, default=4)
    args = parser.parse_args()
    started = time.perf_counter()
    truth = truths(args.bins)
    p = {measure: {"draws": [], "normal": []} for measure in MEASURES}
    skipped = 0
    for seed in range(args.replicates):
        sample = make_binary_sfm(args.n, seed=seed)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a draw that leaves a bin's group empty: counted by the result, not here
                result = predictive_parity(with_predictor(sample), sample.sfm, "score", n_bins=args.bins, n_boot=args.n_boot, seed=seed)
        except FairpathInputError:  # a sample with a bin that one group lacks: predictive_parity refuses it (counted)
            skipped += 1
            continue
        for measure in MEASURES:
            estimate = getattr(result, measure)
            p[measure]["draws"].append(estimate.p_value(null=truth[measure]))
            p[measure]["normal"].append(2 * norm.sf(abs(estimate.estimate - truth[measure]) / estimate.se))
        if (seed + 1) % 100 == 0:
            print(f"{seed + 1}/{args.replicates} replicates ({time.perf_counter() - started:.0f} s)", flush=True)
    results = {"replicates": args.replicates, "skipped": skipped, "n": args.n, "n_boot": args.n_boot, "bins": args.bins, "truth": truth,
               "mc_se_at_0.05": float(np.sqrt(0.05 * 0.95 / (args.replicates - skipped))), "seconds": time.perf_counter() - started}
    for measure in MEASURES:
        results[measure] = {test: {f"size_at_{alpha}": float(np.mean(np.array(values) < alpha)) for alpha in ALPHAS} | {"tests": len(values)}
                            for test, values in p[measure].items()}
        print(measure, json.dumps(results[measure]))
    out = Path(__file__).parent / "results" / "percentile-p.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
