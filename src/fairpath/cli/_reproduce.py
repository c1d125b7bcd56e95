"""``fairpath reproduce theorem1``: the paper's verification of the predictive parity decomposition."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, Jobs
from fairpath.cli._common import flag_type, number_list, seed_type

CHECK_FAILED = 3  # exit status of a run whose graded check failed, as a failed verdict under --fail-on (1: a bug, 2: bad input)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        description="Rerun a published study end to end and check its claims; each STUDY has its own --help.",
    )
    studies = parser.add_subparsers(dest="study", metavar="STUDY")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])  # no STUDY: show the studies
    theorem1 = studies.add_parser(
        "theorem1",
        help="Theorem 1 (predictive parity decomposition): Appendix A.2, Figures 7-8, Corollary 1",
        description="Run or resume the Appendix A.2 study: per (n, repetition) task files are saved under "
        "OUT/tasks and skipped when present; report.html, figures, CSV tables and result.json go to OUT. A check is graded "
        "only where its interval can decide it at the study's size; exit status 3 when a graded check fails.",
    )
    theorem1.add_argument("--out", default="fairpath-theorem1", help="output folder (default: %(default)s)")
    theorem1.add_argument("--quick", action="store_true", help="reduced study for a smoke test (under a minute)")
    theorem1.add_argument("--n-jobs", type=flag_type("--n-jobs", Jobs()), default=2,
                          help="parallel threads (default: %(default)s; -1 = all cores)")
    theorem1.add_argument("--seed", type=seed_type, default=0, help="seed of the whole study (default: %(default)s)")
    theorem1.set_defaults(func=_run_theorem1)
    _register_huang(studies)
    _register_paper_studies(studies)


def _register_paper_studies(studies) -> None:
    """``reproduce compas`` (Figures 5 and 6) and ``reproduce census`` (Appendix F)."""
    for name, help_text, default_out in (
        ("compas", "COMPAS: Figure 5 (Y, Northpointe, the fair predictor, SP/PP baselines) and Figure 6 (the frontier, 10 seeds)",
         "fairpath-compas"),
        ("census", "Census 2018 (gov_census): Appendix F / Figure 9 (boosted predictor and fair predictor, X = sex)",
         "fairpath-census"),
    ):
        study = studies.add_parser(
            name, help=help_text,
            description=f"{help_text}. Each step is saved under OUT/steps as it finishes and reused by a rerun with the same "
            "settings; writes the figures, report.html, comparison.csv (fairpath beside the paper), result.json and result.csv.",
        )
        study.add_argument("--data", default=None, help="input file (compas: the paper's preparation or ProPublica's raw file, "
                           "default the installed copy; census: gov_census.csv, required)")
        study.add_argument("--out", default=default_out, help="output folder (default: %(default)s)")
        study.add_argument("--quick", action="store_true", help="reduced study for a smoke test (seconds to a minute)")
        study.add_argument("--seed", type=seed_type, default=0, help="seed of the whole study (default: %(default)s)")
        study.add_argument("--quiet", action="store_true", help="no progress messages")
        study.set_defaults(func=_run_paper_study)


def _run_paper_study(args: argparse.Namespace) -> int:
    from fairpath.reproduce import reproduce_census, reproduce_compas

    run = reproduce_compas if args.study == "compas" else reproduce_census
    # its provenance records the command as typed (fairpath.report._provenance.running_command)
    study = run(args.out, data=args.data, quick=args.quick, seed=args.seed, progress=not args.quiet)
    print(study.summary())
    print(f"wrote {study.out / 'report.html'}, {study.out / 'comparison.csv'}, {study.out / 'result.json'} and the figures")
    return 0


def _run_theorem1(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.reproduce import reproduce_theorem1

    check_output_dir(args.out, "--out folder")

    study = reproduce_theorem1(args.out, quick=args.quick, n_jobs=args.n_jobs, seed=args.seed)
    print(study.summary())
    for name in ("report.html", "figure7.png", "figure8.png", "linear_check.png", "result.json"):
        print(f"wrote {study.out / name}")
    if not study.passed:
        print(f"fairpath: a graded acceptance check failed (see above); exit status {CHECK_FAILED}", file=sys.stderr)
        return CHECK_FAILED
    return 0


def _register_huang(studies) -> None:
    from fairpath.text import DEFAULT_DTYPE, DTYPES

    huang = studies.add_parser(
        "huang",
        help="Huang et al. (2020): debiasing by embedding and sentiment regularization on Country and Occupation",
        description="Choose each attribute's values and samples per prompt on a pilot of the base, train LoRA models with "
        "embedding and sentiment regularization at several lambdas and two training seeds (and the controls, lambda 0) on "
        "Country and Occupation, audit the base and every model on the same prompts with VADER and TextBlob, compare each "
        "with the untouched base by a paired permutation test of the between-value spread, and check the paper's claim. "
        "Every stage is saved under OUT and skipped when present.",
    )
    huang.add_argument("--out", default="fairpath-huang", help="output folder (default: %(default)s)")
    huang.add_argument("--model", default="default", help="'default' (SmolLM2-135M-Instruct) or a causal-LM folder")
    huang.add_argument("--quick", action="store_true", help="one lambda, a few steps and samples (a smoke test)")
    huang.add_argument("--lambdas", default=None, help="comma-separated lambdas > 0 per regularizer; the control (lambda 0) "
                       "is always trained (default 30; --quick 100)")
    huang.add_argument("--samples", type=flag_type("--samples", Integer(2)), default=None,
                       help="audit samples per prompt (default: chosen by the power calculation; --quick 4)")
    huang.add_argument("--pilot-samples", type=flag_type("--pilot-samples", Integer(2)), default=None,
                       help="samples per prompt of the base model's pilot audit: the first half chooses the values, the second "
                       "sizes the study; a choice below --max-samples is checked, and raised where needed, on a sizing audit "
                       "of the base (default 24)")
    huang.add_argument("--max-samples", type=flag_type("--max-samples", Integer(2)), default=None,
                       help="the most samples per prompt the power calculation may choose (default 384)")
    huang.add_argument("--values-per-side", type=flag_type("--values-per-side", Integer(0)), default=None,
                       help="evaluate the K most negative and K most positive values of each attribute on the pilot "
                       "(default 3; 0: every value, no pilot when --samples is given)")
    huang.add_argument("--steps", type=flag_type("--steps", Integer(1)), default=None, help="training steps per model (default 40; --quick 3)")
    huang.add_argument("--templates", type=flag_type("--templates", Integer(1)), default=None,
                       help="audit the first K templates of each attribute (default: all 10; --quick 2)")
    huang.add_argument("--corpus", default=None, help="training text for every attribute (default: sampled from the model)")
    huang.add_argument("--no-quality", action="store_true", help="skip S.S. and S.S.c (no sentence-encoder load)")
    huang.add_argument("--device", default="auto", help="auto (CUDA when available), cpu or cuda (default: %(default)s)")
    huang.add_argument("--dtype", choices=DTYPES, default=DEFAULT_DTYPE,
                       help="precision of sampling, perplexity and training; auto: bfloat16 where the device computes it "
                       "natively (AMX, AVX512-BF16, CUDA), else float32 (default: %(default)s)")
    huang.add_argument("--record", default=None, help="also write the record (result.json, result.csv, table.csv, scores.parquet, "
                       "figures, report.html) into this folder, e.g. reproductions/huang; a folder holding another run's "
                       "record is refused before the study starts, unless --force")
    huang.add_argument("--force", action="store_true", help="let --record replace the record of another run (e.g. a full "
                       "run's, by a --quick one)")
    huang.add_argument("--seed", type=seed_type, default=0, help="seed of the whole study (default: %(default)s)")
    huang.set_defaults(func=_run_huang)


def _run_huang(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from fairpath.reproduce import HuangSettings, reproduce_huang
    from fairpath.reproduce import check_record_folder

    given = {"audit_samples": args.samples, "pilot_samples": args.pilot_samples, "max_audit_samples": args.max_samples,
             "steps": args.steps, "templates": args.templates,
             "lambdas": tuple(number_list("--lambdas", args.lambdas)) if args.lambdas is not None else None}
    overrides = {"seed": args.seed, "semantic": not args.no_quality, "dtype": args.dtype}
    overrides |= {name: value for name, value in given.items() if value is not None}  # unset: the settings' defaults
    if args.values_per_side is not None:
        overrides["values_per_side"] = args.values_per_side or None  # 0: every value
    settings = HuangSettings.quick(**overrides) if args.quick else HuangSettings(**overrides)
    if args.record and Path(args.record).resolve() == Path(args.out).resolve():
        raise FairpathInputError(f"--record and --out name the same folder {str(args.out)!r}: the record is the study's summary, kept apart "
                                 "from its run folder (which a rerun resumes); give --record another folder")
    if args.record:  # before the study: an hour's work must not end on a refused folder
        check_record_folder(args.record, {**asdict(settings), "model": args.model}, force=args.force)
    result = reproduce_huang(args.out, model=args.model, corpus=args.corpus, device=args.device, settings=settings)
    if args.record:
        result.save(args.record, force=args.force)
    print(result.summary())
    for folder in [result.out, *([args.record] if args.record else [])]:
        print(f"wrote the record to {folder}: report.html, result.json, result.csv, table.csv, scores.parquet and the figures")
    return 0
