"""``fairpath text debias``: fine-tune a language model with a counterfactual fairness regularizer."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairpath._exceptions import FairpathInputError
from fairpath._validation import flag_type
from fairpath.cli._common import add_alias_argument, comma_list
from fairpath.text import DEBIAS_SETTINGS, GENERATION_SETTINGS, TEST_SETTINGS
from fairpath.text import DEFAULT_DTYPE, DTYPES, POOLINGS


def _lambdas(text: str) -> list[float]:
    values = []
    for item in comma_list(text):
        try:
            values.append(float(item))
        except ValueError:
            raise FairpathInputError(f"--lambdas must be comma-separated numbers such as 1,10,100; {item!r} is not a number") from None
    if not values:
        raise FairpathInputError("--lambdas is empty; give comma-separated numbers such as 1,10,100")
    return values


def _layers(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(item) for item in comma_list(text))
    except ValueError:
        raise FairpathInputError(f"--layers must be comma-separated integers such as -2,-1; got {text!r}") from None


def register(text_subparsers) -> None:
    parser = text_subparsers.add_parser(
        "debias", help="fine-tune a language model to reduce counterfactual sentiment bias and audit the result",
        description="Fine-tune with L_LM(x) + lambda * L_fair(x, x~) on counterfactual pairs (Huang et al., 2020), one "
                    "model per regularizer and lambda, then audit the base model and each debiased model. Rerunning with "
                    "the same --out resumes from checkpoints and skips finished stages.",
    )
    parser.add_argument("--attribute", required=True, help="country, occupation, name, or a specification YAML file")
    parser.add_argument("--regularizer", default="embedding",
                        help="embedding, sentiment, or both comma-separated (default embedding)")
    parser.add_argument("--lambdas", default="1,10,100", help="comma-separated weights of the fairness loss, each > 0; the "
                        "control (lambda 0, trained identically), which every model is compared with, is always trained")
    parser.add_argument("--model", default="default", help="'default' (SmolLM2-135M-Instruct) or a Hugging Face causal-LM folder")
    parser.add_argument("--corpus", type=Path, default=None,
                        help="training text (.txt one per line, or CSV/Parquet with a 'text' column); by default text "
                             "sampled from the base model with generic prompts that mention the attribute's values")
    parser.add_argument("--steps", type=flag_type("--steps", DEBIAS_SETTINGS["steps"]), default=100, help="optimisation steps per model (default 100)")
    parser.add_argument("--batch-size", type=flag_type("--batch-size", DEBIAS_SETTINGS["batch_size"]), default=8, help="training sentences per step")
    parser.add_argument("--learning-rate", type=flag_type("--learning-rate", DEBIAS_SETTINGS["learning_rate"]), default=5e-4, help="optimiser learning rate")
    parser.add_argument("--max-length", type=flag_type("--max-length", DEBIAS_SETTINGS["max_length"]), default=48, help="tokens per training sentence at most")
    parser.add_argument("--method", choices=("lora", "full"), default="lora", help="LoRA adapters (default) or full fine-tuning")
    parser.add_argument("--lora-rank", type=flag_type("--lora-rank", DEBIAS_SETTINGS["lora_rank"]), default=8, help="rank of the LoRA adapters")
    parser.add_argument("--pooling", choices=POOLINGS, default="sensitive",
                        help="compare the states at the sensitive token (default, as Huang et al.), mean-pooled sentences, "
                             "or aligned positions (values must tokenize alike)")
    parser.add_argument("--layers", default="-2,-1", help="hidden-state layers averaged into h̄ (default -2,-1)")
    parser.add_argument("--normalisation", choices=("final_norm", "l2", "none"), default="final_norm",
                        help="normalise each layer before averaging: the model's final norm (default), per-token L2, or none")
    parser.add_argument("--keep-first-token", action="store_true",
                        help="pool position 0 too (by default left out: its activation is an outlier)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when available), cpu or cuda")
    parser.add_argument("--dtype", choices=DTYPES, default=DEFAULT_DTYPE,
                        help="precision of training, sampling and perplexity; auto: bfloat16 where the device computes it "
                        "natively (AMX, AVX512-BF16, CUDA), else float32 (default: %(default)s)")
    parser.add_argument("--checkpoint-every", type=flag_type("--checkpoint-every", DEBIAS_SETTINGS["checkpoint_every"]),
                        default=20, help="steps between checkpoints (a rerun resumes from the last)")
    parser.add_argument("--corpus-samples", type=flag_type("--corpus-samples", GENERATION_SETTINGS["n_samples"]), default=2, help="continuations per prompt of the default corpus")
    parser.add_argument("--corpus-max-new-tokens", type=flag_type("--corpus-max-new-tokens", GENERATION_SETTINGS["max_new_tokens"]),
                        default=40, help="tokens per continuation of the default corpus")
    parser.add_argument("--samples", type=flag_type("--samples", GENERATION_SETTINGS["n_samples"]), default=20, help="audit continuations per prompt (default 20)")
    parser.add_argument("--max-new-tokens", type=flag_type("--max-new-tokens", GENERATION_SETTINGS["max_new_tokens"]),
                        default=30, help="audit tokens per continuation (default 30)")
    parser.add_argument("--scorers", default="vader", help="audit scorers, comma-separated (default vader)")
    add_alias_argument(parser, "--permutations", "--bootstrap", type=flag_type("--permutations", TEST_SETTINGS["n_permutations"]), default=999,
                       help="permutations of the value labels per test in each model's audit (default 999)")
    parser.add_argument("--no-quality", action="store_true", help="skip S.S. and S.S.c (no MiniLM load)")
    parser.add_argument("--seed", type=flag_type("--seed", DEBIAS_SETTINGS["seed"]), default=0, help="seed of corpus sampling, training and audits")
    parser.add_argument("--out", type=Path, required=True, help="folder for models, checkpoints, audits and report.html")
    parser.set_defaults(func=run_debias)


def run_debias(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.text.debias import DebiasConfig, DebiasStudy

    check_output_dir(args.out, "--out folder")

    training = DebiasConfig(steps=args.steps, batch_size=args.batch_size, learning_rate=args.learning_rate,
                            max_length=args.max_length, method=args.method, lora_rank=args.lora_rank,
                            lora_alpha=2 * args.lora_rank, pooling=args.pooling, layers=_layers(args.layers),
                            normalisation=args.normalisation, skip_first_token=not args.keep_first_token,
                            checkpoint_every=args.checkpoint_every, seed=args.seed)
    study = DebiasStudy(args.out, attribute=args.attribute, model=args.model,
                        regularizers=comma_list(args.regularizer), lambdas=_lambdas(args.lambdas), training=training,
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
    print(f"report: {args.out / 'report.html'}\nresults: {args.out / 'study.json'}\nmodels: {args.out / 'models'}")
    return 0
