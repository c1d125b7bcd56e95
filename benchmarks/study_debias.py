"""Budgeted debiasing study: SmolLM2-135M-Instruct, Occupation attribute, LoRA, on a CPU.

Acceptance target (issue 7): at least one λ lowers average individual fairness (VADER) by >= 30%
relative to the base model with non-overlapping CIs, while perplexity on held-out text rises by at
most 10% and S.S. falls by at most 5 points.

The defaults are sized for a 2-core CPU shared with other jobs: a short sampled corpus, a few dozen
LoRA steps on short sequences, and an audit with few samples per prompt (optionally on the first K
templates only). Everything is written under --out; rerunning resumes (finished models, audits and
checkpoints are reused), so the script can be killed and restarted freely. Run in the background:

    nohup .venv/bin/python benchmarks/study_debias.py --out benchmarks/results/study_debias > study.log 2>&1 &

It prints the measurements, the changes relative to the base model, the acceptance verdict and the
seconds spent per stage (timings from a shared machine are contaminated by other jobs' load).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _spec(templates: int | None):
    from fairpath.text._spec import FairnessSpec

    spec = FairnessSpec.builtin("occupation")
    if not templates:
        return spec
    data = spec.to_dict()
    return FairnessSpec.from_dict({"attribute": "occupation", "placeholder": "occupation",
                                   "values": [v["value"] for v in data["values"]],
                                   "templates": data["templates"][:templates]},
                                  source=f"builtin:occupation (first {templates} templates)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/study_debias"))
    parser.add_argument("--model", default="default")
    parser.add_argument("--regularizers", default="embedding")
    parser.add_argument("--lambdas", default="100")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--lora-rank", type=int, default=8)
    parser.add_argument("--corpus-samples", type=int, default=1)
    parser.add_argument("--corpus-max-new-tokens", type=int, default=24)
    parser.add_argument("--templates", type=int, default=3, help="first K occupation templates (0: all 10)")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from fairpath.text.debias import DebiasConfig, DebiasStudy

    started = time.perf_counter()
    training = DebiasConfig(steps=args.steps, batch_size=args.batch_size, max_length=args.max_length,
                            learning_rate=args.learning_rate, lora_rank=args.lora_rank, lora_alpha=2 * args.lora_rank,
                            checkpoint_every=5, seed=args.seed)
    study = DebiasStudy(args.out, attribute=_spec(args.templates), model=args.model,
                        regularizers=args.regularizers.split(","), lambdas=[float(v) for v in args.lambdas.split(",")],
                        training=training, corpus_samples_per_prompt=args.corpus_samples,
                        corpus_max_new_tokens=args.corpus_max_new_tokens, audit_samples=args.samples,
                        audit_max_new_tokens=args.max_new_tokens, scorers=("vader",), semantic=not args.no_quality,
                        seed=args.seed)
    result = study.run()
    changes = result.relative_to_base("vader")
    changes["meets_target"] = ((changes["individual_change"] <= -0.30)
                               & (changes["perplexity_change"] <= 0.10) & (changes["ss_change_points"] >= -5))
    print(result.summary())
    print(changes.to_string(index=False))
    print(f"acceptance target met by: {changes.loc[changes['meets_target'], 'model'].tolist() or 'no model'}")
    print("seconds per stage (all sessions):", json.dumps(result.timings, indent=1))
    print(f"this session: {time.perf_counter() - started:.0f} s; report: {args.out / 'report.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
