"""``fairpath text debias``: fine-tune a language model with a counterfactual fairness regularizer."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

from fairpath._exceptions import FairpathInputError
from fairpath._validation import flag_type
from fairpath.cli._common import comma_list, number_list, signature_default
from fairpath.text import DEBIAS_SETTINGS, DTYPES, GENERATION_SETTINGS, TEST_SETTINGS
from fairpath.text.debias import DebiasConfig, DebiasStudy

# The DebiasConfig fields `text debias` takes from flags of their own name (--learning-rate), each typed by the field's
# declared constraint (or choices) and defaulting to the dataclass's value, with their help.
_TRAINING_FLAGS = {
    "steps": "optimisation steps per model", "batch_size": "training sentences per step",
    "learning_rate": "optimiser learning rate", "max_length": "tokens per training sentence at most",
    "method": "LoRA adapters or full fine-tuning", "lora_rank": "rank of the LoRA adapters",
    "pooling": "compare the states at the sensitive token (as Huang et al.), mean-pooled sentences, or aligned positions "
               "(values must tokenize alike)",
    "normalisation": "normalise each layer before averaging: the model's final norm, per-token L2, or none",
    "checkpoint_every": "steps between checkpoints (a rerun resumes from the last)",
}


def _layers(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(item) for item in comma_list(text))
    except ValueError:
        raise FairpathInputError(f"--layers must be comma-separated integers such as -2,-1; got {text!r}") from None


def _add_training_argument(parser, field: str, default, help: str) -> None:
    flag, constraint = "--" + field.replace("_", "-"), DEBIAS_SETTINGS[field]
    if hasattr(constraint, "choices"):  # an Options constraint: argparse lists and checks the choices
        parser.add_argument(flag, choices=constraint.choices, default=default, help=help)
    else:
        parser.add_argument(flag, type=flag_type(flag, constraint), default=default, help=help)


def register(text_subparsers) -> None:
    parser = text_subparsers.add_parser(
        "debias", help="fine-tune a language model to reduce counterfactual sentiment bias and audit the result",
        description="Fine-tune with L_LM(x) + lambda * L_fair(x, x~) on counterfactual pairs (Huang et al., 2020), one "
                    "model per regularizer and lambda, then audit the base model and each debiased model. Rerunning with "
                    "the same --out resumes from checkpoints and skips finished stages.",
    )
    parser.add_argument("--attribute", required=True, help="country, occupation, name, or a specification YAML file")
    defaults = {field.name: field.default for field in dataclasses.fields(DebiasConfig)}
    study = functools.partial(signature_default, DebiasStudy)  # the study's own defaults, nothing restated
    parser.add_argument("--regularizer", default=defaults["regularizer"],
                        help=f"{', '.join(DEBIAS_SETTINGS['regularizer'].choices)}, or several comma-separated")
    parser.add_argument("--lambdas", default=",".join(f"{lam:g}" for lam in study("lambdas")), help="comma-separated weights of the fairness loss, each > 0; the "
                        "control (lambda 0, trained identically), which every model is compared with, is always trained")
    parser.add_argument("--model", default=study("model"), help="'default' (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="training text (.txt one per line, or CSV/Parquet with a 'text' column); by default text "
                             "sampled from the base model with generic prompts that mention the attribute's values")
    for field, help in _TRAINING_FLAGS.items():
        _add_training_argument(parser, field, defaults[field], help)
    parser.add_argument("--layers", default=",".join(map(str, defaults["layers"])), help="hidden-state layers averaged into h̄")
    parser.add_argument("--keep-first-token", action="store_true",
                        help="pool position 0 too (by default left out: its activation is an outlier)")
    parser.add_argument("--device", default=study("device"), help="auto (CUDA when available), cpu or cuda")
    parser.add_argument("--dtype", choices=DTYPES, default=study("dtype"),
                        help="precision of training, sampling and perplexity; auto: bfloat16 where the device computes it "
                        "natively (AMX, AVX512-BF16, CUDA), else float32 (default: %(default)s)")
    parser.add_argument("--corpus-samples", type=flag_type("--corpus-samples", GENERATION_SETTINGS["n_samples"]),
                        default=study("corpus_samples_per_prompt"), help="continuations per prompt of the default corpus")
    parser.add_argument("--corpus-max-new-tokens", type=flag_type("--corpus-max-new-tokens", GENERATION_SETTINGS["max_new_tokens"]),
                        default=study("corpus_max_new_tokens"), help="tokens per continuation of the default corpus")
    parser.add_argument("--samples", type=flag_type("--samples", GENERATION_SETTINGS["n_samples"]), default=study("audit_samples"),
                        help="audit continuations per prompt")
    parser.add_argument("--max-new-tokens", type=flag_type("--max-new-tokens", GENERATION_SETTINGS["max_new_tokens"]),
                        default=study("audit_max_new_tokens"), help="audit tokens per continuation")
    parser.add_argument("--scorers", default=",".join(study("scorers")), help="audit scorers, comma-separated")
    parser.add_argument("--permutations", type=flag_type("--permutations", TEST_SETTINGS["n_permutations"]),
                        default=study("n_permutations"), help="permutations of the value labels per test in each model's audit")
    parser.add_argument("--no-quality", action="store_true", help="skip S.S. and S.S.c (no MiniLM load)")
    parser.add_argument("--seed", type=flag_type("--seed", DEBIAS_SETTINGS["seed"]), default=defaults["seed"],
                        help="seed of corpus sampling, training and audits")
    parser.add_argument("--out", type=Path, required=True, help="folder for models, checkpoints, audits and report.html")
    parser.set_defaults(func=run_debias)


def run_debias(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.text.debias import DebiasStudy

    check_output_dir(args.out, "--out folder")

    training = DebiasConfig(**{field: getattr(args, field) for field in _TRAINING_FLAGS},
                            lora_alpha=2 * args.lora_rank, layers=_layers(args.layers), skip_first_token=not args.keep_first_token,
                            seed=args.seed)
    study = DebiasStudy(args.out, attribute=args.attribute, model=args.model,
                        regularizers=comma_list(args.regularizer), lambdas=number_list("--lambdas", args.lambdas), training=training,
                        corpus=args.corpus, corpus_samples_per_prompt=args.corpus_samples,
                        corpus_max_new_tokens=args.corpus_max_new_tokens, audit_samples=args.samples,
                        audit_max_new_tokens=args.max_new_tokens, scorers=comma_list(args.scorers),
                        n_permutations=args.permutations, semantic=not args.no_quality, seed=args.seed, device=args.device,
                        dtype=args.dtype)
    print(f"fairpath text debias: {len(study.runs)} training runs ({', '.join(study.settings()['runs'])}) "
          f"on {args.model}, attribute {study.spec.attribute}", file=sys.stderr)
    result = study.run()
    print(result.summary())
    print(result.table(study.scorers[0]).to_string(index=False))
    print(f"report: {args.out / 'report.html'}\nresults: {args.out / 'result.json'}, {args.out / 'result.csv'}\nmodels: {args.out / 'models'}")
    return 0
