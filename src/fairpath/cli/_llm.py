"""fairpath llm: a language model as the decision-maker, audited with the causal decomposition."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairpath._validation import flag_type
from fairpath._vocabulary import BN_HELP
from fairpath.cli._common import add_data_arguments, add_fail_on_argument, comma_list, exit_status, read_data, signature_default
from fairpath.cli._text import _add_endpoint_arguments, _backend
from fairpath.text import DEFAULT_DTYPE, HF_GENERATOR_SETTINGS

_ROLE_FLAGS = ("x", "x0", "x1", "z", "w", "y")


def register(subparsers) -> None:
    parser = subparsers.add_parser("llm", description=__doc__.splitlines()[0])
    llm_subparsers = parser.add_subparsers(dest="llm_command", metavar="LLM_COMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    _register_audit(llm_subparsers)


def _register_audit(llm_subparsers) -> None:
    from fairpath.llm import BUILTIN_PROMPTS, X_MODES, llm_audit

    def declared(flag: str, name: str):
        return flag_type(flag, llm_audit.parameter_constraints[name])

    audit = llm_subparsers.add_parser(
        "audit", help="ask a language model to decide about every row and audit its decisions causally",
        description="Render every row of DATA as a question (--prompt), read the model's answer from its next-token probabilities "
                    "of the answer options, and audit the scores as a predictor: the decomposition of their disparity into direct, "
                    "indirect and spurious effects beside the outcome's, per pathway whether the model amplifies, dampens or "
                    "reverses the world's disparity, the Business Necessity Cookbook's verdict, predictive parity, and the exact "
                    "effect of changing X's mention in the prompt. Writes OUT/report.html, OUT/result.json, OUT/result.csv, "
                    "OUT/scores.csv, the full audit in OUT/audit/ and the scored prompts in OUT/scores/ (a rerun resumes from them).",
    )
    add_data_arguments(audit)
    audit.add_argument("--prompt", required=True, help=f"decision prompt: {', '.join(BUILTIN_PROMPTS)} or a YAML file (template, mention, "
                                                        "question, options, words, roles; see the README)")
    for flag, what in (("x", "protected attribute column"), ("x0", "baseline level of X"), ("x1", "comparison level of X (every other "
                       "level against --x0 when the prompt names none)"), ("z", "confounders, comma-separated"), ("w", "mediators, comma-separated"),
                       ("y", "outcome column")):
        audit.add_argument(f"--{flag}", default=None, help=f"{what} (default: the prompt's roles)")
    audit.add_argument("--bn", default="SE", help=f"business-necessity set: {BN_HELP} (default SE)")
    audit.add_argument("--x-mode", choices=X_MODES, default=signature_default(llm_audit, "x_mode"),
                       help="ask with X mentioned, withheld, or both as two predictors (default both)")
    audit.add_argument("--model", default="default",
                       help="'default' (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder; with --backend openai, the model "
                            "name the server serves")
    audit.add_argument("--dtype", default=DEFAULT_DTYPE, choices=HF_GENERATOR_SETTINGS["dtype"].choices,
                       help="model precision; auto: bfloat16 on CUDA and CPUs with AMX or AVX512-BF16, else float32")
    _add_endpoint_arguments(audit)
    audit.add_argument("--batch-size", type=declared("--batch-size", "batch_size"), default=signature_default(llm_audit, "batch_size"),
                       help="prompts scored together, and per stored part (default 64)")
    audit.add_argument("--samples", type=declared("--samples", "samples"), default=signature_default(llm_audit, "samples"),
                       help="answers sampled per prompt where the backend returns no probabilities (default 10)")
    audit.add_argument("--seed", type=declared("--seed", "seed"), default=0, help="seed of every random step (default 0)")
    audit.add_argument("--level", type=declared("--level", "level"), default=0.95, help="confidence level (default 0.95)")
    audit.add_argument("--alpha", type=declared("--alpha", "alpha"), default=0.05, help="family-wise error level of the tests (default 0.05)")
    audit.add_argument("--margin", type=declared("--margin", "margin"), default=None, help="equivalence margin of the Cookbook (default none)")
    audit.add_argument("--bins", type=declared("--bins", "n_bins"), default=10, help="quantile bins of predictive parity (default 10)")
    audit.add_argument("--folds", type=declared("--folds", "n_folds"), default=5, help="cross-fitting folds (default 5)")
    audit.add_argument("--out", type=Path, required=True, help="output folder")
    add_fail_on_argument(audit, "the model's Cookbook verdict is FAIL")
    audit.set_defaults(func=run_audit, workers=1)


def _sfm(args, prompt, data):
    from fairpath._exceptions import FairpathInputError
    from fairpath.cli._common import sfm_for

    roles = {flag: getattr(args, flag) if getattr(args, flag) is not None else prompt.roles.get(flag) for flag in _ROLE_FLAGS}
    for flag in ("z", "w"):
        roles[flag] = comma_list(roles[flag]) if isinstance(roles[flag], str) else list(roles[flag] or [])
    missing = [f"--{flag}" for flag in ("x", "x0", "y") if roles[flag] is None]
    if missing:
        raise FairpathInputError(f"the prompt {prompt.name!r} names no {', '.join(missing)}; give them as flags")
    x1 = None if roles["x1"] is None else str(roles["x1"])
    return sfm_for(data, x=roles["x"], x0=str(roles["x0"]), x1=x1, z=roles["z"], w=roles["w"], y=roles["y"], source=f"data file {args.data!r}")


def run_audit(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.llm import DecisionPrompt, llm_audit
    from fairpath.report import provenance

    check_output_dir(args.out, "--out folder")
    prompt = DecisionPrompt.resolve(args.prompt)
    data = read_data(args)
    sfm = _sfm(args, prompt, data)
    prompt.check(sfm)
    backend = _backend(args)
    print(f"fairpath llm audit: {len(data):,} rows of {args.data}, prompt {prompt.name!r}, X {args.x_mode}, with {backend.model_id}",
          file=sys.stderr)
    inputs = [args.data] + ([args.prompt] if Path(args.prompt).is_file() else [])
    result = llm_audit(data, sfm, prompt, args.bn, backend=backend, x_mode=args.x_mode, store=args.out / "scores", batch_size=args.batch_size,
                       samples=args.samples, seed=args.seed, level=args.level, alpha=args.alpha, margin=args.margin, n_bins=args.bins, n_folds=args.folds,
                       provenance=provenance(inputs=inputs, seed=args.seed, packages=("torch", "transformers")))
    paths = result.save(args.out)
    print(result.summary())
    print(f"report: {paths['report']}")
    print(f"audit: {paths['audit']}")
    return exit_status(args.fail_on, [f"{predictor}: FAIL" for predictor, status in result.status.items() if status == "FAIL"])
