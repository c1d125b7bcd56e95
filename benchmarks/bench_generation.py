"""Throughput of fairpath's generator against plain Hugging Face `generate` (issue 6, acceptance 4).

Three ways to draw the same kind of samples (temperature 1, no top-k/top-p) from the same model:
  loop     - `model.generate` called for one sample at a time (the naive baseline);
  batched  - `model.generate` with every prompt repeated `--samples` times in one batch;
  fairpath - `HFGenerator` (each prompt runs once, its cache is copied to the sample rows, rows
             leave the batch at EOS).
By default all methods run in this one process, one after the other on the same loaded model, so
their ratios share the machine's load; --subprocess runs each in its own process instead, so that
its peak resident memory is its own. Tokens are counted up to and including EOS (what the model
actually computed). Prints tok/s, ratios, peak memory and the share of the compute limit: the
measured float32 (or bfloat16) matmul FLOP/s of this CPU with torch, against 2 x parameters FLOP per
generated token (the forward's matrix products; attention over the short context is left out).
Tokens per CPU-second are printed too: on a machine shared with other jobs they move far less than
wall-clock rates (with --threads 1 they measure the work done; with more threads, idle spinning counts).

    .venv/bin/python benchmarks/bench_generation.py                 # SmolLM2, 2 prompts x 64 x 50 tokens
    .venv/bin/python benchmarks/bench_generation.py --model PATH --prompts 1 --samples 16

Numbers depend on the machine's load: run it on an idle machine for the record.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

PROMPTS = [
    "I am from Syria. Starting next week, I will be",
    "My friend from Iceland told me that",
    "I got a new job as a baker. Starting next week, I will be",
    "People from Chile are",
]


def _count_tokens(rows, eos_ids) -> int:
    """Generated tokens per row up to the first EOS (inclusive)."""
    total = 0
    for row in rows:
        n = 0
        for token in row:
            n += 1
            if token in eos_ids:
                break
        total += n
    return total


def matmul_flops(threads: int, dtype: str = "float32", size: int = 1024, seconds: float = 2.0) -> float:
    """FLOP/s of square matrix products with torch on this CPU (the compute limit of a forward pass)."""
    import torch

    torch.set_num_threads(threads)
    kind = getattr(torch, dtype)
    a, b = torch.randn(size, size, dtype=kind), torch.randn(size, size, dtype=kind)
    torch.mm(a, b)  # warm-up
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        torch.mm(a, b)
        count += 1
    return 2 * size**3 * count / (time.perf_counter() - start)


_GENERATORS = {}


def _generator(args):
    from fairpath.text._generation import HFGenerator

    key = (args.model, args.threads, args.dtype)
    if key not in _GENERATORS:
        _GENERATORS[key] = HFGenerator(args.model, num_threads=args.threads, dtype=args.dtype)
    return _GENERATORS[key]


def _run_method(method: str, args) -> dict:
    import torch

    from fairpath.text._generation import GenerationSettings

    torch.set_num_threads(args.threads)
    generator = _generator(args)
    generator.tokens_generated = 0
    model, tokenizer = generator.model, generator.tokenizer
    eos = set(generator.eos_token_ids)
    prompts = PROMPTS[: args.prompts]
    settings = GenerationSettings(
        max_new_tokens=args.max_new_tokens, n_samples=args.samples, batch_size=args.batch_size, seed=0
    )
    hf_kwargs = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=args.max_new_tokens,
                     pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    start, start_cpu = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        if method == "fairpath":
            generator.generate(prompts, settings=settings)
            tokens = generator.tokens_generated
        elif method == "batched":
            tokens = 0
            for prompt in prompts:
                encoded = tokenizer([prompt] * args.samples, return_tensors="pt")
                out = model.generate(**encoded, **hf_kwargs)
                tokens += _count_tokens(out[:, encoded["input_ids"].shape[1]:].tolist(), eos)
        else:
            tokens = 0
            for prompt in prompts:
                encoded = tokenizer(prompt, return_tensors="pt")
                for _ in range(args.loop_samples):
                    out = model.generate(**encoded, **hf_kwargs)
                    tokens += _count_tokens(out[:, encoded["input_ids"].shape[1]:].tolist(), eos)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    flop_per_token = 2 * sum(p.numel() for p in model.parameters())
    return {"method": method, "tokens": tokens, "seconds": seconds, "tok_per_s": tokens / seconds,
            "tok_per_cpu_s": tokens / cpu_seconds, "peak_mib": peak_mib, "flop_per_token": flop_per_token}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--samples", type=int, default=64, help="samples per prompt (fairpath and batched)")
    parser.add_argument("--loop-samples", type=int, default=4, help="samples per prompt for the one-at-a-time loop")
    parser.add_argument("--max-new-tokens", type=int, default=50)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"], help="precision of every method")
    parser.add_argument("--methods", default="batched,fairpath")
    parser.add_argument("--subprocess", action="store_true", help="one process per method (own peak memory)")
    parser.add_argument("--only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.only:
        print(json.dumps(_run_method(args.only, args)))
        return 0

    print(f"load average before: {open('/proc/loadavg').read().split()[:3]}", flush=True)
    limit = matmul_flops(args.threads, args.dtype)
    results = {}
    for method in args.methods.split(","):
        if args.subprocess:
            child = [sys.executable, __file__, "--only", method] + [a for a in (argv or sys.argv[1:]) if a != "--only"]
            done = subprocess.run(child, capture_output=True, text=True)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                return done.returncode
            results[method] = json.loads(done.stdout.strip().splitlines()[-1])
        else:
            results[method] = _run_method(method, args)
        r = results[method]
        print(f"{method:9s} {r['tokens']:6d} tokens in {r['seconds']:7.1f} s = {r['tok_per_s']:7.1f} tok/s "
              f"({r['tok_per_cpu_s']:6.1f} per CPU-second), peak RSS {r['peak_mib']:6.0f} MiB, "
              f"{100 * r['tok_per_s'] * r['flop_per_token'] / limit:5.1f}% of the compute limit", flush=True)
    if "fairpath" in results:
        for base in ("loop", "batched"):
            if base in results:
                ratio = results["fairpath"]["tok_per_s"] / results[base]["tok_per_s"]
                cpu_ratio = results["fairpath"]["tok_per_cpu_s"] / results[base]["tok_per_cpu_s"]
                print(f"fairpath / {base}: {ratio:.1f}x wall-clock, {cpu_ratio:.1f}x per CPU-second")
    r = next(iter(results.values()))
    print(f"compute limit: {limit / 1e9:.1f} GFLOP/s ({args.dtype} matmul, {args.threads} threads) / "
          f"{r['flop_per_token'] / 1e9:.3f} GFLOP per token = {limit / r['flop_per_token']:.0f} tok/s")
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")
    print(f"settings: model={args.model} prompts={args.prompts} samples={args.samples} "
          f"max_new_tokens={args.max_new_tokens} batch_size={args.batch_size} threads={args.threads} dtype={args.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
