"""Robustness of the paper's two real-data analyses to a hidden confounder (issue 39's acceptance): COMPAS (Northpointe's
decision audited with BN = {SE}) and Census 2018 (the salary decomposition by sex), each with the confounders as strong
as every observed Z and W column.

    python benchmarks/sensitivity_real_data.py [--cf-y 0.03] [--cf-d 0.03] [--census ../shared/data/gov_census.csv]
        [--only compas|census] [--out benchmarks/results/sensitivity_real]

Writes OUT/compas/ (the audit's report, with the verdicts' robustness) and OUT/compas/sensitivity/, OUT/census/ likewise,
and prints each summary with its wall time and the load average.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from fairpath.causal import confounder_benchmarks, decompose
from fairpath.datasets import load_compas, load_gov_census
from fairpath.parity import audit


def _bounds(name: str, result, data, out: Path, strengths: dict, started: float) -> None:
    """The bounds of ``result`` (a decomposition or an audit) with every observed column benchmarked, saved and printed."""
    fitted = time.perf_counter() - started
    marks = confounder_benchmarks(getattr(result, "decomposition", result), data)
    bounds = result.sensitivity(**strengths, benchmarks=marks)
    result.save(out / name)
    bounds.save(out / name / "sensitivity")
    print(bounds.summary())
    print(f"{name}: fit {fitted:.1f} s, benchmarks and bounds {time.perf_counter() - started - fitted:.1f} s; "
          f"load {os.getloadavg()[0]:.2f}")


def _compas(out: Path, strengths: dict) -> None:
    compas = load_compas()
    started = time.perf_counter()
    _bounds("compas", audit(compas.data, compas.sfm, ["northpointe"], "SE", seed=23, progress=False), compas.data, out,
            strengths, started)


def _census(out: Path, strengths: dict, path: Path) -> None:
    census = load_gov_census(path)
    started = time.perf_counter()
    _bounds("census", decompose(census.data, census.sfm, seed=23, progress=False), census.data, out, strengths, started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cf-y", type=float, default=0.03)
    parser.add_argument("--cf-d", type=float, default=0.03)
    parser.add_argument("--census", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "gov_census.csv")
    parser.add_argument("--only", choices=("compas", "census"), default=None)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "sensitivity_real")
    args = parser.parse_args()
    strengths = {"cf_y": args.cf_y, "cf_d": args.cf_d}
    if args.only in (None, "compas"):
        _compas(args.out, strengths)
    if args.only in (None, "census"):
        _census(args.out, strengths, args.census)


if __name__ == "__main__":
    main()
