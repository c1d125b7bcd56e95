"""Throughput of a debiasing LoRA step (issue 12): the counterfactual pair in one forward pass vs two.

Both run in this one process on the same model and batches, alternating, so their ratio shares the
machine's load:
  two-pass - the former step: a forward of the sentences (with the LM loss), a forward of their
             counterfactuals, then one backward through both;
  fairpath - ``DebiasTrainer.train_step``: sentences and counterfactuals as one batch of 2n rows.
Tokens per second count the non-padding tokens of both sides. The compute limit is the measured
float32 matmul FLOP/s of this CPU with torch against 6 x parameters FLOP per token (forward and
backward; with LoRA the frozen weights get no weight gradient, so the true cost is nearer 4 x and
the share printed is a lower bound).

    .venv/bin/python benchmarks/bench_training.py                   # SmolLM2, 6 steps of batch 8
    .venv/bin/python benchmarks/bench_training.py --model PATH --steps 2
"""

from __future__ import annotations

import argparse
import sys
import time

from bench_generation import matmul_flops

TEXTS = [
    "The baker said that the bread was ready early this morning.",
    "I met an accountant at the station yesterday and we talked.",
    "Yesterday, the nurse walked home through the park after work.",
    "Everyone in town knows the lawyer, who lives on the hill.",
    "Our neighbour works as a farmer, so we get fresh eggs every week.",
    "When the teacher arrived at the office, the phone rang twice.",
    "The story of a mechanic begins when a car breaks down at night.",
    "The driver said that the road was closed because of the snow.",
    "I read an article about the physician who moved abroad last year.",
    "After a long day at work, the cook sat down and read the paper.",
]


def _two_pass_step(trainer, pairs):
    """The former implementation of one step, kept here as the baseline; returns the real tokens."""
    from fairpath.text.debias._representations import forward_with_representation

    config, representation = trainer.config, trainer.config.representation
    trainer.optimizer.zero_grad(set_to_none=True)
    x, positions = trainer._encode([p.text for p in pairs], [p.end for p in pairs])
    labels = x["input_ids"].masked_fill(x["attention_mask"] == 0, -100)
    outputs, pooled_x = forward_with_representation(trainer.model_, x["input_ids"], x["attention_mask"], labels,
                                                    representation=representation, positions=positions)
    cf, cf_positions = trainer._encode([p.counterfactual for p in pairs], [p.counterfactual_end for p in pairs])
    _, pooled_cf = forward_with_representation(trainer.model_, cf["input_ids"], cf["attention_mask"],
                                               representation=representation, positions=cf_positions)
    loss = outputs.loss + config.lam * trainer._fairness_loss(pooled_x, pooled_cf, x["attention_mask"])
    loss.backward()
    trainer.optimizer.step()
    return int(x["attention_mask"].sum() + cf["attention_mask"].sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--steps", type=int, default=6, help="timed steps per method")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    import torch

    from fairpath.text._models import load_causal_lm
    from fairpath.text._spec import FairnessSpec
    from fairpath.text.debias import DebiasConfig, DebiasTrainer, make_pairs

    torch.set_num_threads(args.threads)
    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}", flush=True)
    limit = matmul_flops(args.threads)
    model, tokenizer = load_causal_lm(args.model)
    n_params = sum(p.numel() for p in model.parameters())
    pairs, _ = make_pairs(TEXTS * 4, FairnessSpec.builtin("occupation"), seed=0)
    trainer = DebiasTrainer(model, tokenizer, pairs, DebiasConfig(lam=10.0, batch_size=args.batch_size, max_length=32,
                                                                  steps=10**6), progress=False)
    trainer.train_step()  # warm-up (allocations, LoRA B leaves zero)
    totals = {"two-pass": [0, 0.0], "fairpath": [0, 0.0]}
    for step in range(args.steps):
        batch = trainer.batch_pairs(step)
        start = time.perf_counter()
        tokens = _two_pass_step(trainer, batch)
        totals["two-pass"][0] += tokens
        totals["two-pass"][1] += time.perf_counter() - start
        start = time.perf_counter()
        trainer.train_step()
        totals["fairpath"][1] += time.perf_counter() - start
        totals["fairpath"][0] += tokens  # the same batch shape: the same real tokens
    rates = {}
    for name, (tokens, seconds) in totals.items():
        rates[name] = tokens / seconds
        print(f"{name:9s} {tokens:6d} tokens in {seconds:6.1f} s = {rates[name]:7.1f} tok/s, "
              f"{100 * rates[name] * 6 * n_params / limit:5.1f}% of the compute limit", flush=True)
    print(f"fairpath / two-pass: {rates['fairpath'] / rates['two-pass']:.2f}x")
    print(f"compute limit: {limit / 1e9:.1f} GFLOP/s (float32 matmul, {args.threads} threads) / "
          f"{6 * n_params / 1e9:.3f} GFLOP per token (6 x {n_params / 1e6:.1f}M parameters) = "
          f"{limit / (6 * n_params):.0f} tok/s")
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
