"""Coverage of the 95% confidence intervals of the default decomposition on the synthetic SCMs.

    python benchmarks/study_coverage.py [--reps 200] [--n 2000] [--out benchmarks/results/coverage]

Each replication draws a fresh sample, decomposes it and records whether each interval covers the
true value. Results are saved one file per (model, replication), so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd
from joblib import Parallel, delayed
from tqdm import tqdm

from fairpath.causal import decompose
from fairpath.datasets import make_appendix_a2, make_binary_sfm, make_confounded_sfm

MODELS = {"appendix_a2": make_appendix_a2, "binary_sfm": make_binary_sfm, "confounded_sfm": make_confounded_sfm}
MEASURES = ("tv", "ctfde", "ctfie", "ctfse")


def replicate(model: str, rep: int, n: int, out: Path, learner: str) -> None:
    path = out / f"{model}_{rep:04d}.json"
    if path.exists():
        return
    sample = MODELS[model](n, seed=10_000 + rep)
    result = decompose(sample.data, sample.sfm, seed=rep, learner=learner, n_jobs=1)
    record = {"model": model, "rep": rep}
    for measure in MEASURES:
        e = result.estimate(measure)
        truth = sample.truth[measure]
        record[measure] = {"estimate": e.estimate, "se": e.se, "truth": truth, "covered": bool(e.ci_low <= truth <= e.ci_high)}
    path.write_text(json.dumps(record))


def summarise(out: Path) -> pd.DataFrame:
    rows = []
    for path in sorted(out.glob("*.json")):
        record = json.loads(path.read_text())
        for measure in MEASURES:
            rows.append({"model": record["model"], "measure": measure, **record[measure]})
    frame = pd.DataFrame(rows)
    frame["error"] = frame["estimate"] - frame["truth"]
    return frame.groupby(["model", "measure"], sort=False).agg(
        reps=("covered", "size"), coverage=("covered", "mean"), bias=("error", "mean"),
        sd_estimate=("estimate", "std"), mean_se=("se", "mean"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--learner", default="gbm")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "coverage")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tasks = [(m, r) for m in args.models.split(",") for r in range(args.reps)]
    started = time.perf_counter()
    Parallel(n_jobs=args.jobs)(
        delayed(replicate)(m, r, args.n, args.out, args.learner) for m, r in tqdm(tasks, desc="replications")
    )
    table = summarise(args.out)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"wall time {time.perf_counter() - started:.0f} s")
    (args.out.parent / "coverage_summary.csv").write_text(table.to_csv())


if __name__ == "__main__":
    main()
