"""fairpath text: counterfactual sentiment-bias audits of language models."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import sys
from pathlib import Path

from fairpath._validation import flag_type
from fairpath.cli._common import add_fail_on_argument, comma_list, exit_status, save_and_print, signature_default
from fairpath.text import ENDPOINT_SETTINGS, GENERATION_SETTINGS, HF_GENERATOR_SETTINGS, QUALITY_SETTINGS, TEST_SETTINGS
from fairpath.text import DEFAULT_DTYPE, GenerationSettings, audit_text

_DEBIAS_MODULE = "fairpath.cli._text_debias"
_ATTRIBUTE_HELP = ("country, occupation, name, gender; an intersection of two, country,gender or occupation,gender (its values are "
                   "the cells, e.g. Syria/woman; the report adds each attribute's margin and the pairs by what they change); or a "
                   "specification YAML file (one attribute, or 'attributes: [A, B]' with templates using both placeholders)")
# The GenerationSettings fields `text audit` takes from flags, with their help (the seed comes from --seed, shared with the
# permutations). Each flag is named after its field (n_samples: --samples), typed by the field's declared constraint and
# defaults to the dataclass's own value.
_GENERATION_FLAGS = {
    "n_samples": "continuations per prompt (the paper used 1000)", "max_new_tokens": "tokens per continuation at most",
    "temperature": "sampling temperature", "top_k": "sample among the k likeliest tokens (default: all)", "top_p": "nucleus sampling mass",
    "batch_size": "rows each worker decodes together (with --backend openai: samples per stored part)",
}


def _add_generation_arguments(parser) -> None:
    defaults = {field.name: field.default for field in dataclasses.fields(GenerationSettings)}
    for field, help in _GENERATION_FLAGS.items():
        flag = "--samples" if field == "n_samples" else "--" + field.replace("_", "-")
        parser.add_argument(flag, dest=field, metavar=flag[2:].upper().replace("-", "_"), type=flag_type(flag, GENERATION_SETTINGS[field]),
                            default=defaults[field], help=help)


def register(subparsers) -> None:
    parser = subparsers.add_parser("text", description=__doc__.splitlines()[0])
    text_subparsers = parser.add_subparsers(dest="text_command", metavar="TEXT_COMMAND")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    _register_audit(text_subparsers)
    _register_score(text_subparsers)
    if importlib.util.find_spec(_DEBIAS_MODULE) is not None:
        importlib.import_module(_DEBIAS_MODULE).register(text_subparsers)


def _register_audit(text_subparsers) -> None:
    audit = text_subparsers.add_parser(
        "audit", help="sample continuations of counterfactual prompts and measure sentiment fairness",
        description="Sample continuations of every template filled with every value, score their sentiment "
                    "and report individual and group fairness (Huang et al., 2020) with permutation tests and noise floors.",
    )
    audit.add_argument("--model", default="default",
                       help="'default' (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder; with --backend openai, "
                            "the model name the server serves")
    _add_endpoint_arguments(audit)
    audit.add_argument("--attribute", required=True, help=_ATTRIBUTE_HELP)
    _add_generation_arguments(audit)
    audit.add_argument("--dtype", default=DEFAULT_DTYPE, choices=HF_GENERATOR_SETTINGS["dtype"].choices,
                       help="model precision; auto: bfloat16 on CUDA and CPUs with AMX or AVX512-BF16, else float32")
    audit.add_argument("--workers", type=flag_type("--workers", HF_GENERATOR_SETTINGS["workers"]), default="auto",
                       help="processes sampling a local model, one torch thread each (default auto: one per core on a "
                            "CPU, several times faster than one process on every core; 1 on CUDA)")
    _add_measure_arguments(audit)
    audit.add_argument("--corpus", type=Path, default=None, help="text file (one passage a line) for perplexity")
    audit.add_argument("--out", type=Path, required=True, help="folder for report.html, result.json, result.csv and samples/ (Parquet parts; a rerun resumes from them)")
    audit.set_defaults(func=run_audit)


def _add_measure_arguments(parser) -> None:
    """Scoring and inference flags shared by `text audit` and `text score`."""
    parser.add_argument("--scorers", default=",".join(signature_default(audit_text, "scorers")),
                        help="comma-separated: vader, textblob, opinion, minilm, or classifier folder paths")
    parser.add_argument("--permutations", type=flag_type("--permutations", TEST_SETTINGS["n_permutations"]),
                        default=signature_default(audit_text, "n_permutations"), help="permutations of the value labels within templates per test")
    parser.add_argument("--alpha", type=flag_type("--alpha", TEST_SETTINGS["alpha"]), default=signature_default(audit_text, "alpha"),
                        help="level of the verdict: significant when the Holm-adjusted p over every scorer x metric is below it")
    parser.add_argument("--seed", type=flag_type("--seed", TEST_SETTINGS["seed"]), default=signature_default(audit_text, "seed"),
                        help="seed of generation and permutations")
    parser.add_argument("--no-quality", action="store_true", help="skip semantic similarity (no MiniLM load)")
    parser.add_argument("--quality-per-prompt", type=flag_type("--quality-per-prompt", QUALITY_SETTINGS["quality_per_prompt"]),
                        default=signature_default(audit_text, "quality_per_prompt"),
                        help="continuations per prompt (lowest sample indices) for S.S. and S.S.c")
    parser.add_argument("--similarity-threshold", type=flag_type("--similarity-threshold", QUALITY_SETTINGS["similarity_threshold"]),
                        default=None, help="cosine τ of S.S. (default: calibrated on the continuations at a 5%% false-match "
                                           "rate; pass the base model's when comparing models)")
    parser.add_argument("--context-threshold", type=flag_type("--context-threshold", QUALITY_SETTINGS["context_threshold"]),
                        default=None, help="cosine τ_c of S.S.c (default: calibrated, as --similarity-threshold)")
    add_fail_on_argument(parser, "a scorer/metric test is significant after Holm's adjustment")


def _register_score(text_subparsers) -> None:
    score = text_subparsers.add_parser(
        "score", help="score stored generations (logged outputs, another tool's, a past audit) without a model",
        description="The audit's scoring, fairness metrics, permutation tests and report for continuations generated elsewhere. "
                    "SAMPLES is a CSV, JSONL or Parquet file with the columns template (text or id such as t00), value, "
                    "continuation and optionally prompt, sample_index, model; or a fairpath samples folder.",
    )
    score.add_argument("samples", type=Path, metavar="SAMPLES", help="generations file or fairpath samples folder")
    score.add_argument("--attribute", required=True, help=_ATTRIBUTE_HELP)
    score.add_argument("--model", default=None, help="keep only this model's samples (the file's model column; needed where it "
                       "names several models, which are never pooled)")
    score.add_argument("--settings-hash", default=None, help="in a samples folder holding several runs, the run to score; in a file, "
                       "keep the rows of its settings_hash column")
    _add_measure_arguments(score)
    score.add_argument("--out", type=Path, required=True, help="folder for report.html, result.json and result.csv")
    score.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.text import FairnessSpec, audit_samples, get_scorer, read_generations

    check_output_dir(args.out, "--out folder")  # before any scoring
    spec = FairnessSpec.load(args.attribute)
    scorers = [get_scorer(name) for name in comma_list(args.scorers)]
    generations = read_generations(args.samples, model=args.model, settings_hash=args.settings_hash)
    print(f"fairpath text score: {len(generations)} continuations from {args.samples}", file=sys.stderr)
    result = audit_samples(generations, spec, scorers=scorers, n_permutations=args.permutations, alpha=args.alpha,
                           seed=args.seed, quality=not args.no_quality, source=repr(str(args.samples)), **_quality_arguments(args))
    save_and_print(result, args.out)
    return exit_status(args.fail_on, result.violations)


def _quality_arguments(args: argparse.Namespace) -> dict:
    return {"quality_per_prompt": args.quality_per_prompt, "similarity_threshold": args.similarity_threshold,
            "context_threshold": args.context_threshold}


def _add_endpoint_arguments(audit) -> None:
    endpoint = audit.add_argument_group("OpenAI-compatible endpoint (--backend openai)")
    endpoint.add_argument("--backend", default="hf", choices=["hf", "openai"],
                          help="hf: a local Hugging Face model in this process (default); openai: an OpenAI-compatible "
                               "server (vLLM, llama.cpp, TGI, transformers serve, a hosted API)")
    endpoint.add_argument("--base-url", default=None, help="the server's API root, e.g. http://127.0.0.1:8000/v1")
    endpoint.add_argument("--endpoint", default="completions", choices=ENDPOINT_SETTINGS["endpoint"].choices,
                          help="completions: the prompt as raw text to continue (base models, default); chat: the prompt "
                               "as the one user message (chat models)")
    endpoint.add_argument("--concurrency", type=flag_type("--concurrency", ENDPOINT_SETTINGS["concurrency"]), default=8, help="requests in flight at most (default 8)")
    endpoint.add_argument("--max-n", type=flag_type("--max-n", ENDPOINT_SETTINGS["max_n"]), default=16,
                          help="samples per request at most where the server honours n (default 16)")
    endpoint.add_argument("--api-key-env", default=None,
                          help="environment variable holding the API key (default OPENAI_API_KEY, optional for local "
                               "servers); the key is never written anywhere")
    endpoint.add_argument("--timeout", type=flag_type("--timeout", ENDPOINT_SETTINGS["timeout"]), default=120.0, help="seconds per request attempt, the whole answer (default 120)")
    endpoint.add_argument("--retries", type=flag_type("--retries", ENDPOINT_SETTINGS["max_retries"]), default=5,
                          help="retries on 5xx, 429 (after Retry-After), timeouts and connection errors (default 5)")


def _backend(args):
    from fairpath._exceptions import FairpathInputError

    if args.backend == "hf":
        from fairpath.text import HFGenerator

        return HFGenerator(args.model, dtype=args.dtype, workers=args.workers)
    from fairpath.text import OpenAICompatibleBackend

    if args.base_url is None:
        raise FairpathInputError("--backend openai needs --base-url (the server's API root, e.g. http://127.0.0.1:8000/v1)")
    if args.model == "default":
        raise FairpathInputError("--backend openai needs --model NAME, the model name the server serves")
    return OpenAICompatibleBackend(args.base_url, args.model, endpoint=args.endpoint, api_key_env=args.api_key_env,
                                   concurrency=args.concurrency, max_n=args.max_n, timeout=args.timeout,
                                   max_retries=args.retries)


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
    from fairpath.text import FairnessSpec, get_scorer

    check_output_dir(args.out, "--out folder")
    spec = FairnessSpec.load(args.attribute)
    scorers = [get_scorer(name) for name in comma_list(args.scorers)]
    corpus = _read_corpus(args.corpus)
    settings = GenerationSettings(seed=args.seed, **{field: getattr(args, field) for field in _GENERATION_FLAGS})
    backend = _backend(args)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"fairpath text audit: {len(spec.values)} {'cells' if spec.components else 'values'} x {len(spec.templates)} templates x {settings.n_samples} samples "
          f"with {backend.model_id}", file=sys.stderr)
    result = audit_text(spec, backend, scorers=scorers, settings=settings, store=args.out / "samples",
                        n_permutations=args.permutations, alpha=args.alpha, seed=args.seed, quality=not args.no_quality,
                        corpus=corpus, **_quality_arguments(args))
    save_and_print(result, args.out)
    print(f"samples: {args.out / 'samples'}")
    return exit_status(args.fail_on, result.violations)
