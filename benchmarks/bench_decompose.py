"""Speed and memory of the causal decomposition.

    python benchmarks/bench_decompose.py [--census ../shared/data/gov_census.csv] [--skip-census]

Prints, for COMPAS (Y and the Northpointe predictor together): wall and CPU seconds of the default
method against a single-thread run of the same code (the in-run baseline) and against faircause's
recorded times on this machine kind; medDML with nboot1 = 5; then time and peak memory of the
default method on gov_census subsets (each size in its own process, so peak RSS is its own).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from fairpath.causal import decompose
from fairpath.datasets import COMPAS_SFM, load_compas, load_gov_census

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def timed(function, repeats: int = 3) -> tuple[float, float]:
    """Best wall and CPU seconds over ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def faircause_seconds() -> dict:
    runs = json.loads((SHARED / "reference" / "faircause_compas.json").read_text())["runs"]
    return {(r["method"], r["outcome"]): r["cookbook_seconds"] for r in runs}


def compas_section() -> None:
    data = load_compas().data
    reference = faircause_seconds()
    run = lambda **kw: decompose(data, COMPAS_SFM, predictors=["northpointe"], seed=23, **kw)  # noqa: E731
    wall, cpu = timed(lambda: run())
    wall1, cpu1 = timed(lambda: run(n_jobs=1))
    fc = reference[("debiasing", "two_year_recid")] + reference[("debiasing", "northpointe")]
    print("COMPAS, debiasing (default), Y + northpointe, with CIs")
    print(f"  ours: {wall:.2f} s wall, {cpu:.2f} s CPU | single thread: {wall1:.2f} s wall "
          f"({wall1 / wall:.1f}x slower) | faircause (recorded, two calls): {fc:.1f} s -> {fc / wall:.1f}x faster")
    wall_m, cpu_m = timed(lambda: run(method="medDML", nboot1=5, nboot2=100), repeats=1)
    fc_m = reference[("medDML", "two_year_recid")] + reference[("medDML", "northpointe")]
    print("COMPAS, medDML, nboot1 = 5, nboot2 = 100, Y + northpointe")
    print(f"  ours: {wall_m:.2f} s wall, {cpu_m:.2f} s CPU | faircause (recorded): {fc_m:.1f} s -> {fc_m / wall_m:.1f}x faster")


def census_child(path: str, n: int) -> None:
    """Run in a subprocess: one decomposition of the first ``n`` rows; prints a JSON line."""
    dataset = load_gov_census(path)
    data = dataset.data.sample(n=n, random_state=0) if n < len(dataset.data) else dataset.data
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    wall, cpu = time.perf_counter(), time.process_time()
    result = decompose(data, dataset.sfm, seed=1)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"n": len(data), "wall": wall, "cpu": cpu, "peak_mb": peak / 1024, "base_mb": before / 1024,
                      "tv": result.estimate("tv").estimate, "ctfde": result.estimate("ctfde").estimate}))


def census_section(path: Path) -> None:
    print(f"gov_census ({path.name}), X = sex, Y = salary, 6 Z and 9 W columns, default method")
    print(f"  {'rows':>7} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'s per 10k':>9}   tv      ctfde")
    first = None
    for n in (25_000, 50_000, 100_000, 204_309):
        out = subprocess.run([sys.executable, __file__, "--child", str(path), str(n)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        first = first or r
        print(f"  {r['n']:>7} {r['wall']:>7.1f} {r['cpu']:>7.1f} {r['peak_mb']:>8.0f} {1e4 * r['wall'] / r['n']:>9.2f}   "
              f"{r['tv']:+.0f} {r['ctfde']:+.0f}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        census_child(sys.argv[2], int(sys.argv[3]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--census", type=Path, default=SHARED / "data" / "gov_census.csv")
    parser.add_argument("--skip-census", action="store_true")
    args = parser.parse_args()
    pd.set_option("display.width", 120)
    compas_section()
    if not args.skip_census:
        census_section(args.census)


if __name__ == "__main__":
    main()
