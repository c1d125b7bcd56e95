"""fairpath text: counterfactual sentiment-bias audits of language models."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path

from fairpath.cli._common import comma_list, seed_type

_DEBIAS_MODULE = "fairpath.cli._text_debias"


def register(subparsers) -> None:
    parser = subparsers.add_parser("text", help="counterfactual sentiment bias of language models",
                                   description=__doc__.splitlines()[0])
    text_subparsers = parser.add_subparsers(dest="text_command", metavar="TEXT_COMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    _register_audit(text_subparsers)
    if importlib.util.find_spec(_DEBIAS_MODULE) is not None:
        importlib.import_module(_DEBIAS_MODULE).register(text_subparsers)


def _register_audit(text_subparsers) -> None:
    audit = text_subparsers.add_parser(
        "audit", help="sample continuations of counterfactual prompts and measure sentiment fairness",
        description="Sample continuations of every template filled with every value, score their sentiment "
                    "and report individual and group fairness (Huang et al., 2020) with intervals and noise floors.",
    )
    audit.add_argument("--model", default="default", help="'default' (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder")
    audit.add_argument("--attribute", required=True, help="country, occupation, name, or a specification YAML file")
    audit.add_argument("--samples", type=int, default=20, help="continuations per prompt (default 20; the paper used 1000)")
    audit.add_argument("--max-new-tokens", type=int, default=50, help="tokens per continuation at most (default 50)")
    audit.add_argument("--temperature", type=float, default=1.0)
    audit.add_argument("--top-k", type=int, default=None)
    audit.add_argument("--top-p", type=float, default=1.0)
    audit.add_argument("--batch-size", type=int, default=64, help="rows generated together")
    audit.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                       help="model precision; bfloat16 is about twice as fast on CPUs with AVX512-BF16/AMX")
    audit.add_argument("--scorers", default="vader,textblob,opinion",
                       help="comma-separated: vader, textblob, opinion, minilm, or classifier folder paths")
    audit.add_argument("--permutations", type=int, default=999,
                       help="permutations of the value labels within templates per test (default 999)")
    audit.add_argument("--alpha", type=float, default=0.05,
                       help="level of the verdict: significant when the Holm-adjusted p over every scorer x metric is below it")
    audit.add_argument("--seed", type=seed_type, default=0)
    audit.add_argument("--corpus", type=Path, default=None, help="text file (one passage a line) for perplexity")
    audit.add_argument("--no-quality", action="store_true", help="skip semantic similarity (no MiniLM load)")
    audit.add_argument("--out", type=Path, required=True, help="folder for report.html, results.json and samples/ (Parquet parts; a rerun resumes from them)")
    audit.set_defaults(func=run_audit)


def _read_corpus(path: Path | None) -> list[str] | None:
    from fairpath._exceptions import FairpathInputError

    if path is None:
        return None
    if not path.is_file():
        raise FairpathInputError(f"corpus file {str(path)!r} does not exist; give a text file with one passage per line")
    from fairpath._io import read_text

    return [line for line in read_text(path, "corpus file").splitlines() if line.strip()]


def run_audit(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.text import FairnessSpec, GenerationSettings, HFGenerator, audit_text, get_scorer

    check_output_dir(args.out, "--out folder")
    spec = FairnessSpec.load(args.attribute)
    scorers = [get_scorer(name) for name in comma_list(args.scorers)]
    corpus = _read_corpus(args.corpus)
    settings = GenerationSettings(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                                  max_new_tokens=args.max_new_tokens, n_samples=args.samples,
                                  batch_size=args.batch_size, seed=args.seed)
    backend = HFGenerator(args.model, dtype=args.dtype)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"fairpath text audit: {len(spec.values)} values x {len(spec.templates)} templates x {args.samples} samples "
          f"with {backend.model_id}", file=sys.stderr)
    result = audit_text(spec, backend, scorers=scorers, settings=settings, store=args.out / "samples",
                        n_permutations=args.permutations, alpha=args.alpha, seed=args.seed, quality=not args.no_quality, corpus=corpus)
    result.to_json(args.out / "results.json")
    report = result.write_report(args.out / "report.html")
    print(result)
    print(f"report: {report}\nresults: {args.out / 'results.json'}\nsamples: {args.out / 'samples'}")
    return 0
