"""``fairpath reproduce theorem1``: the paper's verification of the predictive parity decomposition."""

from __future__ import annotations

import argparse
import sys

from fairpath.cli._common import seed_type


def register(subparsers) -> None:
    parser = subparsers.add_parser("reproduce", help="reproduce a study of the paper")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    theorem1 = studies.add_parser(
        "theorem1",
        help="Theorem 1 (predictive parity decomposition): Appendix A.2, Figures 7-8, Corollary 1",
        description="Run or resume the Appendix A.2 study: per (n, repetition) task files are saved under "
        "OUT/tasks and skipped when present; figures, CSV tables and summary.json go to OUT.",
    )
    theorem1.add_argument("--out", default="fairpath-theorem1", help="output folder (default: %(default)s)")
    theorem1.add_argument("--quick", action="store_true", help="reduced study for a smoke test (under a minute)")
    theorem1.add_argument("--jobs", type=int, default=2, help="parallel processes (default: %(default)s; -1 = all cores)")
    theorem1.add_argument("--seed", type=seed_type, default=0, help="seed of the whole study (default: %(default)s)")
    theorem1.set_defaults(func=_run_theorem1)


def _run_theorem1(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.reproduce import reproduce_theorem1

    check_output_dir(args.out, "--out folder")

    study = reproduce_theorem1(args.out, quick=args.quick, n_jobs=args.jobs, seed=args.seed)
    print(study)
    for name in ("figure7.png", "figure8.png", "linear_check.png", "summary.json"):
        print(f"wrote {study.out_ / name}")
    if not study.passed:
        print("some acceptance checks failed (see above)", file=sys.stderr)
    return 0
