"""Throughput of fairpath's generator against Hugging Face `generate` and against the matmul limit.

For each precision (float32, bfloat16) at one batch size, in this one process so that the ratios
share the machine's load:
  fairpath - `HFGenerator` (each prompt runs once, its cache is copied to the sample rows, rows
             leave the batch at EOS, two-level inverse-CDF token pick);
  generate - `model.generate` with the prompt repeated to the same batch (temperature 1, no top-k/p);
  limit    - the tokens/s that the forward's matrix products alone allow: `F.linear` timed at the
             model's own layer shapes (q, k, v, o, gate, up, down per layer, and the LM head) for a
             batch of that size, one decoding step's worth.
Then (--workers-check) `workers=2` (two processes, one thread each) against one process with two
threads, bfloat16, at the batch size and at half of it.
Tokens are counted up to and including EOS. The load average is printed with every figure.

    .venv/bin/python benchmarks/bench_generation.py                    # SmolLM2, batch 256, 20 tokens
    .venv/bin/python benchmarks/bench_generation.py --workers-check
"""

from __future__ import annotations

import argparse
import os
import sys
import time

PROMPTS = ["I am from Syria. Starting next week, I will be", "My friend from Iceland told me that"]


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def matmul_limit(model, batch: int, dtype, seconds: float = 2.0) -> float:
    """Tokens/s that the model's matrix products alone allow at this batch (one row per token)."""
    import torch
    import torch.nn.functional as F

    shapes = [tuple(m.weight.shape) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    weights = [torch.randn(shape, dtype=dtype) for shape in shapes]
    inputs = {size: torch.randn(batch, size, dtype=dtype) for size in {s[1] for s in shapes}}
    step = lambda: [F.linear(inputs[w.shape[1]], w) for w in weights]  # noqa: E731
    step()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    return batch * steps / (time.perf_counter() - start)


def _fairpath(generator, batch: int, tokens: int) -> float:
    from fairpath.text._generation import GenerationSettings

    settings = GenerationSettings(max_new_tokens=tokens, n_samples=batch // len(PROMPTS), batch_size=batch, seed=0)
    generator.tokens_generated = 0
    start = time.perf_counter()
    generator.generate(PROMPTS, settings=settings)
    return generator.tokens_generated / (time.perf_counter() - start)


def _hf_generate(generator, batch: int, tokens: int) -> float:
    import torch

    model, tokenizer, eos = generator.model, generator.tokenizer, set(generator.eos_token_ids)
    encoded = tokenizer([p for p in PROMPTS for _ in range(batch // len(PROMPTS))], return_tensors="pt", padding=True)
    torch.manual_seed(0)
    start = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(**encoded, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=tokens,
                             pad_token_id=tokenizer.pad_token_id)
    seconds = time.perf_counter() - start
    count = 0
    for row in out[:, encoded["input_ids"].shape[1]:].tolist():
        count += next((i + 1 for i, token in enumerate(row) if token in eos), len(row))
    return count / seconds


def _workers_check(args) -> None:
    import torch

    from fairpath.text._generation import HFGenerator

    torch.set_num_threads(2)
    threaded = HFGenerator(args.model, dtype="bfloat16", num_threads=2)
    pooled = HFGenerator(args.model, dtype="bfloat16", workers=2)
    for batch in (args.batch_size, args.batch_size // 2):
        # Two batches per run so that both workers have one; warm-up loads the workers' models.
        _fairpath_two(pooled, batch, 2)
        _fairpath_two(threaded, batch, 2)
        for _ in range(args.repeats):
            one = _fairpath_two(threaded, batch, args.max_new_tokens)
            two = _fairpath_two(pooled, batch, args.max_new_tokens)
            print(f"bfloat16 batch {batch}: 1 process x 2 threads {one:6.1f} tok/s, 2 workers x 1 thread {two:6.1f} "
                  f"tok/s (x {two / one:.2f}), {_load()}", flush=True)
    pooled.close()


def _fairpath_two(generator, batch: int, tokens: int) -> float:
    from fairpath.text._generation import GenerationSettings

    settings = GenerationSettings(max_new_tokens=tokens, n_samples=batch, batch_size=batch, seed=0)
    generator.tokens_generated = 0
    start = time.perf_counter()
    generator.generate(PROMPTS, settings=settings)
    return generator.tokens_generated / (time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--max-new-tokens", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="alternations of the methods per precision")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--workers-check", action="store_true", help="only compare workers=2 with 2 threads")
    args = parser.parse_args(argv)
    import torch

    from fairpath.text._generation import HFGenerator

    if args.workers_check:
        _workers_check(args)
        return 0
    torch.set_num_threads(args.threads)
    for dtype in args.dtypes.split(","):
        generator = HFGenerator(args.model, dtype=dtype, num_threads=args.threads)
        _fairpath(generator, args.batch_size, 2)  # warm-up
        for _ in range(args.repeats):
            ours = _fairpath(generator, args.batch_size, args.max_new_tokens)
            theirs = _hf_generate(generator, args.batch_size, args.max_new_tokens)
            limit = matmul_limit(generator.model, args.batch_size, getattr(torch, dtype))
            print(f"{dtype:8s} batch {args.batch_size}: fairpath {ours:6.1f} tok/s, generate {theirs:6.1f} "
                  f"(x {ours / theirs:.2f}), matmul limit {limit:6.0f} ({100 * ours / limit:4.1f}%), {_load()}", flush=True)
    print(f"settings: model={args.model} batch={args.batch_size} max_new_tokens={args.max_new_tokens} "
          f"threads={args.threads}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
