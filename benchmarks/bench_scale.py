"""A million rows in a minute: ratios of `fairpath decompose` at scale against one LightGBM fit.

    python benchmarks/bench_scale.py [--sizes 100000,200000,500000,1000000] [--census PATH] [--skip-census]
        [--dask-rows 5000000 [--dask-workers 2] [--skip-local-dask]]

Writes a synthetic SFM table (``make_mixed_sfm``: continuous Y, Z = {z1, region (4 named levels)},
W = {w1, w2}, seed 7) per size into ``benchmarks/results/scale/`` as CSV, then, in this process,
times one default LightGBM fit of Y on the same columns (``lightgbm.LGBMRegressor()``, region as a
category; the baseline) and, each in its own child process (so that peak memory is its own),
``fairpath decompose`` on the file with default settings (as a user runs it, report and all:
``--out``). Prints per size: wall and CPU seconds, peak RSS, seconds per 100k rows, the ratio to the
baseline fit at 1M rows, and the estimates against the truth in SEs. Then the Census 2018
decomposition (204,309 rows) against its target of 10 s. Targets (issue 30): 1M rows ≤ 25× the
baseline fit and ≤ 1 GB peak; Census ≤ 10 s; time per row flat or falling from 100k to 1M.
``--dask-rows N`` then decomposes an N-row table with ``--workers`` (a LocalCluster of
``--dask-workers`` processes: the file read as partitions, the folds as tasks) and, unless
``--skip-local-dask``, in this machine's one process, and says whether the numbers are equal;
the peak is the largest process's (client or worker).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lightgbm as lgb
import pandas as pd

from fairpath.datasets import GOV_CENSUS_SFM, make_mixed_sfm

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "benchmarks" / "results" / "scale"
SEED = 7
FLAGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,region", "--w", "w1,w2", "--y", "y"]


def table(n: int) -> Path:
    """The synthetic table of ``n`` rows (written once, then reused)."""
    path = RESULTS / f"mixed_{n}.csv"
    if not path.exists():
        RESULTS.mkdir(parents=True, exist_ok=True)
        make_mixed_sfm(n, seed=SEED).data.to_csv(path.with_suffix(".tmp"), index=False)
        path.with_suffix(".tmp").replace(path)
    return path


def baseline_fit(path: Path) -> float:
    """Seconds of one default LightGBM fit of Y on the SFM's columns (best of two)."""
    data = pd.read_csv(path).astype({"region": "category"})
    features, y = data[["x", "z1", "region", "w1", "w2"]], data["y"]
    times = []
    for _ in range(2):
        start = time.perf_counter()
        lgb.LGBMRegressor(verbose=-1).fit(features, y)
        times.append(time.perf_counter() - start)
    return min(times)


def dask_section(n: int, workers: int, local: bool) -> None:
    path = table(n)
    print(f"{n:,} rows ({path.stat().st_size / 1e6:.0f} MB CSV) on a LocalCluster of {workers} worker processes", flush=True)
    runs = {"dask": cli_run(path, [*FLAGS, "--workers", str(workers)], RESULTS / f"out_{n}_dask")}
    if local:
        runs["local"] = cli_run(path, FLAGS, RESULTS / f"out_{n}_local")
    for name, run in runs.items():
        tv = estimates(run["results"])["tv"]
        print(f"  {name:>5}: {run['wall']:.1f} s wall, {run['cpu']:.1f} s CPU, largest process {run['peak_mb']:.0f} MB, "
              f"{run['wall'] / n * 1e5:.2f} s per 100k rows; tv {tv[0]:.5f} (SE {tv[1]:.5f})", flush=True)
    if local:
        same = runs["dask"]["results"]["estimates"] == runs["local"]["results"]["estimates"]
        print(f"  numbers equal to the local run's: {same}")


def child_run(command: list[str]) -> dict:
    """``command`` as a child process: its wall and CPU seconds, peak RSS (os.wait4: the child's own) and stdout. Its output
    goes to files, not pipes, so a chatty child never blocks on a full pipe while this process waits."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        stdout.seek(0), stderr.seek(0)
        if status:
            raise RuntimeError(f"{' '.join(command)} failed: {stderr.read().decode()[-2000:]}")
        out = stdout.read().decode()
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "out": out}


def cli_run(path: Path, flags: list[str], out: Path) -> dict:
    """One `fairpath decompose` in a child process (:func:`child_run`), with its results."""
    run = child_run([sys.executable, "-m", "fairpath.cli", "decompose", str(path), *flags, "--seed", "1", "--quiet", "--out", str(out)])
    return {**run, "results": json.loads((out / "result.json").read_text())}


def estimates(results: dict) -> dict[str, tuple[float, float]]:
    """Estimate and SE per measure of Y for the (one) contrast x1 against x0."""
    (contrast,) = results["contrasts"].values()
    return {measure: (row["estimate"], row["se"]) for measure, row in contrast["estimates"]["y"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,200000,500000,1000000")
    parser.add_argument("--census", type=Path, default=SHARED / "data" / "gov_census.csv")
    parser.add_argument("--skip-census", action="store_true")
    parser.add_argument("--dask-rows", type=int, default=0, help="also decompose a table of this many rows with --workers")
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--skip-local-dask", action="store_true", help="with --dask-rows: no local run to compare with")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    truth = make_mixed_sfm(10, seed=SEED).truth
    paths = {n: table(n) for n in sizes}
    base = baseline_fit(paths[max(sizes)])
    print(f"baseline: one default LGBMRegressor fit of y on x, z1, region, w1, w2 at {max(sizes):,} rows: {base:.2f} s", flush=True)
    print(f"{'rows':>9} {'wall s':>7} {'CPU s':>7} {'peak MB':>8} {'s/100k':>7} {'x fit':>6}   (estimate − truth)/SE: tv ctfde ctfie ctfse")
    per_row = []
    for n in sizes:
        run = cli_run(paths[n], FLAGS, RESULTS / f"out_{n}")
        found = estimates(run["results"])
        z = "  ".join(f"{(found[m][0] - truth[m]) / found[m][1]:+.2f}" for m in ("tv", "ctfde", "ctfie", "ctfse"))
        per_row.append(run["wall"] / n * 1e5)
        ratio = run["wall"] / base if n == max(sizes) else float("nan")
        print(f"{n:>9,} {run['wall']:>7.1f} {run['cpu']:>7.1f} {run['peak_mb']:>8.0f} {per_row[-1]:>7.2f} {ratio:>6.1f}   {z}", flush=True)
    print(f"time per 100k rows, {sizes[0]:,} -> {sizes[-1]:,}: {per_row[0]:.2f} -> {per_row[-1]:.2f} s "
          f"({'flat or falling' if per_row[-1] <= 1.1 * per_row[0] else 'RISING'})")
    if not args.skip_census:
        sfm = GOV_CENSUS_SFM
        flags = ["--x", sfm.x, "--x0", sfm.x0, "--x1", sfm.x1, "--z", ",".join(sfm.z), "--w", ",".join(sfm.w),
                 "--y", sfm.y, "--empty-category", "industry"]
        census = cli_run(args.census, flags, RESULTS / "out_census")
        print(f"Census 2018 (204,309 rows): {census['wall']:.1f} s wall, {census['cpu']:.1f} s CPU, {census['peak_mb']:.0f} MB "
              f"(target ≤ 10 s: {'met' if census['wall'] <= 10 else 'MISSED'})")
    if args.dask_rows:
        dask_section(args.dask_rows, args.dask_workers, not args.skip_local_dask)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
