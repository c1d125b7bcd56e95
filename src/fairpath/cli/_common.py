"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import read_table

__all__ = ["add_sfm_arguments", "comma_list", "read_table", "sfm_from_args"]


def comma_list(text: str | None) -> list[str]:
    """Parse ``a,b,c`` into a list; an empty string or None gives an empty list."""
    if not text:
        return []
    return [item.strip() for item in text.split(",") if item.strip()]


def add_sfm_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """The Standard Fairness Model flags shared by the tabular subcommands."""
    parser.add_argument("--x", required=required, help="protected attribute column")
    parser.add_argument("--x0", required=required, help="baseline level of X")
    parser.add_argument("--x1", required=required, help="comparison level of X")
    parser.add_argument("--z", default="", help="confounders, comma-separated (may be empty)")
    parser.add_argument("--w", default="", help="mediators, comma-separated (may be empty)")
    parser.add_argument("--y", required=required, help="outcome column")


def sfm_from_args(args, data: pd.DataFrame):
    """The SFM of the flags; X's levels are matched to the column ("1" names a numeric level 1)."""
    from fairpath.causal import SFM, resolve_level

    if args.x not in data.columns:
        raise FairpathInputError(f"protected attribute column {args.x!r} not found; available columns: {list(data.columns)}")
    column = data[args.x]
    return SFM(x=args.x, x0=resolve_level(column, args.x0), x1=resolve_level(column, args.x1),
               z=comma_list(args.z), w=comma_list(args.w), y=args.y)


def add_parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """``--n-jobs``, ``--scheduler``, ``--workers``: where repetitions run (see fairpath._parallel.run_tasks)."""
    group = parser.add_argument_group("running repetitions in parallel (the same seed gives the same numbers)")
    group.add_argument("--n-jobs", type=int, default=1, help="threads for the repetitions (default 1; -1: one per core)")
    group.add_argument("--scheduler", default=None,
                       help="run the repetitions as tasks on this Dask scheduler, e.g. tcp://10.0.0.5:8786 (needs fairpath[dask])")
    group.add_argument("--workers", type=int, default=None,
                       help="run the repetitions on a local Dask cluster of N worker processes (needs fairpath[dask])")


def parallel_options(args: argparse.Namespace) -> dict:
    return {"n_jobs": args.n_jobs, "scheduler": args.scheduler, "workers": args.workers}
