"""Is fine-tuning without the regularizer a no-op? The pre-check of issue 37, before the hour of the Huang study.

Trains only the control (λ = 0: the study's corpus, steps, batches and learning rate without the fairness loss) on
one attribute and compares it with the untouched base: the paired one-sided test of the between-value spread
(``fairpath.text.compare_spread``, VADER and TextBlob) and the perplexity on held-out base samples. The control
passes when no spread test rejects at 0.05 (either direction) and its perplexity is within ±2% of the base's.

    python benchmarks/huang_control_check.py --out benchmarks/results/huang-control [--attribute country]
        [--steps 40 --learning-rate 1e-3 --samples 24 --seeds 0 1]

Resumable (every stage is a step of the run folder). Prints one line per seed and writes ``check.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from fairpath.reproduce._huang import HuangSettings, two_sided_p
from fairpath.text.debias import DebiasConfig, DebiasStudy
from fairpath.text.debias._study import BASE, SCORES_NAME

PERMUTATIONS = HuangSettings().comparison_permutations  # the study's own test against the base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--attribute", default="country")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--stages-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    started = time.perf_counter()
    training = DebiasConfig(steps=args.steps, batch_size=8, max_length=32, learning_rate=args.learning_rate, lora_rank=8,
                            lora_alpha=16, checkpoint_every=20)
    study = DebiasStudy(Path(args.out), attribute=args.attribute, regularizers=("embedding",), lambdas=(10.0,),
                        training=training, corpus_samples_per_prompt=4, corpus_max_new_tokens=30, audit_samples=args.samples,
                        audit_max_new_tokens=15, scorers=("vader", "textblob"), semantic=False, seed=0)
    corpus = study.prepare_corpus()
    base = study.evaluate(BASE, study.model, corpus)
    if args.stages_only:  # sampling, training and audits; the tests when the spread module is there
        for seed in args.seeds:
            config = replace(study.runs[0], seed=seed)
            if not study.model_folder(config).exists():
                study.train(config, corpus, None)
            study.evaluate(study.name(config), str(study.model_folder(config)), corpus)
        return
    rows = []
    for seed in args.seeds:
        config = replace(study.runs[0], seed=seed)  # the control
        name, folder = study.name(config), study.model_folder(config)
        if not folder.exists():
            study.train(config, corpus, None)
        control = study.evaluate(name, str(folder), corpus)
        from fairpath.text import compare_spread

        scores = {model: pd.read_parquet(study.out_dir / "audits" / model / SCORES_NAME) for model in (BASE, name)}
        row = {"seed": seed, "perplexity_base": base["perplexity"], "perplexity_control": control["perplexity"],
               "perplexity_change": control["perplexity"] / base["perplexity"] - 1}
        for scorer in study.scorers:
            comparison = compare_spread(scores[BASE], scores[name], score=f"score_{scorer}", n_permutations=PERMUTATIONS, seed=0)
            for metric in ("individual", "group"):
                test = getattr(comparison, metric)
                row[f"{scorer}_{metric}_change"] = test.change
                row[f"{scorer}_{metric}_p_lower"] = test.p_value
                row[f"{scorer}_{metric}_p_two_sided"] = two_sided_p(test.p_value, PERMUTATIONS)
        row["passes"] = (abs(row["perplexity_change"]) <= 0.02
                         and all(row[k] > 0.05 for k in row if k.endswith("_p_two_sided")))
        rows.append(row)
        print(json.dumps(row))
    record = {"attribute": args.attribute, "steps": args.steps, "learning_rate": args.learning_rate,
              "samples_per_prompt": args.samples, "rows": rows, "seconds": round(time.perf_counter() - started, 1)}
    (Path(args.out) / "check.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
