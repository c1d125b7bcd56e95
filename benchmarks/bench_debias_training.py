"""Training throughput of debiasing (LoRA, embedding regularizer) on SmolLM2-135M-Instruct, fp32 and bf16,
against the machine's matmul limit measured in the same process.

One step: 8 counterfactual pairs (16 rows) × max_length 32, LoRA rank 8 on every linear layer. The
limit: torch matmuls at the model's shapes ([16·32, in] × [in, out] for every linear layer and the
vocabulary projection) timed in each dtype; a training token costs 3 × its forward FLOPs (forward,
and a backward of twice the forward). The machine may be shared: the load average is printed.

    PYTHONPATH=src python benchmarks/bench_debias_training.py [--steps 3] [--profile]
"""

from __future__ import annotations

import argparse
import copy
import os
import time

import torch

from fairpath.text._models import load_causal_lm
from fairpath.text.debias import DebiasConfig, DebiasTrainer, make_pairs
from fairpath.text._spec import FairnessSpec

PAIRS, MAX_LENGTH = 8, 32
TEXT = ("The {v} said that the meeting would start later than planned, because the train from the north was "
        "delayed again by the snow and nobody knew when it would arrive.")


def linear_shapes(model) -> list[tuple[int, int]]:
    return [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]


def matmul_flops_per_second(shapes, rows: int, dtype: torch.dtype, repeats: int = 5) -> float:
    """Achieved FLOP/s of the forward matmuls of one batch in ``dtype`` (best of ``repeats``)."""
    pairs = [(torch.randn(rows, i, dtype=dtype), torch.randn(i, o, dtype=dtype)) for i, o in shapes]
    flops = sum(2 * rows * i * o for i, o in shapes)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        for a, b in pairs:
            a @ b
        best = min(best, time.perf_counter() - started)
    return flops / best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="print the top operators of one bf16 step")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads(),
                        help="torch threads (on a loaded machine every parallel operator can wait a time slice for its "
                             "second thread: compare 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    base, tokenizer = load_causal_lm("default")
    spec = FairnessSpec.load("occupation")
    pairs, _ = make_pairs([TEXT.format(v=v) for v in spec.value_names], spec, seed=0)
    shapes = linear_shapes(base)
    rows = 2 * PAIRS * MAX_LENGTH
    forward_flops_per_token = sum(2 * i * o for i, o in shapes)
    print(f"SmolLM2-135M-Instruct, {2 * PAIRS} rows × {MAX_LENGTH} tokens per step, LoRA rank 8; "
          f"{torch.get_num_threads()} threads; load average {os.getloadavg()[0]:.2f}")
    for dtype_name, dtype in (("float32", torch.float32), ("bfloat16", torch.bfloat16)):
        limit = matmul_flops_per_second(shapes, rows, dtype) / (3 * forward_flops_per_token)
        config = DebiasConfig(batch_size=PAIRS, max_length=MAX_LENGTH, lora_rank=8, lam=1.0, dtype=dtype_name,
                              steps=args.steps + 1)
        trainer = DebiasTrainer(copy.deepcopy(base), tokenizer, pairs, config, progress=False)
        batches = [trainer.batch_pairs(step) for step in range(1, args.steps + 1)]
        tokens = sum(int(tokenizer([p.text for p in b] + [p.counterfactual for p in b], truncation=True,
                                   max_length=MAX_LENGTH, return_tensors="pt", padding=True)["attention_mask"].sum())
                     for b in batches)
        trainer.train_step()  # warm-up
        started = time.perf_counter()
        for _ in range(args.steps):
            trainer.train_step()
        rate = tokens / (time.perf_counter() - started)
        print(f"{dtype_name:>9}: {rate:8.0f} training tokens/s; limit {limit:8.0f} tokens/s "
              f"({matmul_flops_per_second(shapes, rows, dtype) / 1e9:.0f} GFLOP/s); {rate / limit:.0%} of it; "
              f"load average {os.getloadavg()[0]:.2f}")
        if args.profile and dtype is torch.bfloat16:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as prof:
                trainer.train_step()
            print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


if __name__ == "__main__":
    main()
