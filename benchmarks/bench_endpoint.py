"""Throughput of an endpoint audit against in-process generation of the same model (issue 13).

Two ways to draw the same samples (temperature 1) from the same model folder, in one run:
  in-process - `HFGenerator` (shared prompt cache, batched decoding);
  endpoint   - `OpenAICompatibleBackend` against `transformers serve` of that folder on 127.0.0.1,
               once with one request in flight and once with `--concurrency` requests.
Both sides get `--threads` torch threads. Tokens are those each side reports (HFGenerator counts EOS,
the server counts completion tokens). Prints tok/s, the ratios to in-process, and /proc/loadavg.

    .venv/bin/python benchmarks/bench_endpoint.py                     # SmolLM2-135M, 2 prompts x 16 x 32 tokens
    .venv/bin/python benchmarks/bench_endpoint.py --model PATH --samples 8 --concurrency 8

`transformers serve` decodes one request at a time without continuous batching; a serving engine
(vLLM, llama.cpp server) batches concurrent requests, so the endpoint figure here is a floor.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tiny_models: the tests' model and server helpers

PROMPTS = ["I am from Syria. Starting next week, I will be", "People from Chile are",
           "I got a new job as a baker. Starting next week, I will be", "My friend from Iceland told me that"]


def _served_copy(model: str, folder: Path) -> Path:
    """The model folder with a sampling generation config (weights linked, not copied)."""
    from fairpath.text._models import default_model_dir
    from tiny_models import sampling_generation_config

    source = default_model_dir() if model == "default" else Path(model)
    folder.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file():
            (folder / path.name).symlink_to(path.resolve()) if path.suffix == ".safetensors" else shutil.copy(path, folder / path.name)
    return sampling_generation_config(folder)


def _timed(backend, requests, settings) -> dict:
    before = backend.tokens_generated
    started = time.perf_counter()
    backend.generate_requests(requests, settings)
    seconds = time.perf_counter() - started
    tokens = backend.tokens_generated - before
    return {"seconds": seconds, "tokens": tokens, "tokens_per_s": tokens / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="'default' (SmolLM2-135M-Instruct) or a causal-LM folder")
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="torch threads on each side")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "endpoint.json")
    args = parser.parse_args()

    from fairpath.text import (
        GenerationSettings,
        HFGenerator,
        OpenAICompatibleBackend,
        SampleRequest,
    )
    from tiny_models import TransformersServer

    settings = GenerationSettings(max_new_tokens=args.max_new_tokens, n_samples=args.samples,
                                  batch_size=args.batch_size, seed=0)
    requests = [SampleRequest(p, i) for p in PROMPTS[: args.prompts] for i in range(args.samples)]
    load = {"before": Path("/proc/loadavg").read_text().split()[:3]}
    with tempfile.TemporaryDirectory(prefix="fairpath-bench-endpoint-") as tmp:
        folder = _served_copy(args.model, Path(tmp) / "model")
        results = {"in-process": _timed(HFGenerator(folder, num_threads=args.threads), requests, settings)}
        with TransformersServer(folder, Path(tmp) / "serve.log", threads=args.threads) as server:
            for concurrency in (1, args.concurrency):
                backend = OpenAICompatibleBackend(server.base_url, server.model, concurrency=concurrency)
                results[f"endpoint, concurrency {concurrency}"] = _timed(backend, requests, settings)
    load["after"] = Path("/proc/loadavg").read_text().split()[:3]
    base = results["in-process"]["tokens_per_s"]
    print(f"{len(requests)} samples x {args.max_new_tokens} tokens, model {args.model}, {args.threads} thread(s)")
    for name, row in results.items():
        row["ratio_to_in_process"] = row["tokens_per_s"] / base
        print(f"  {name:<26} {row['tokens_per_s']:8.1f} tok/s  ({row['tokens']} tokens in {row['seconds']:.1f} s)  "
              f"x{row['ratio_to_in_process']:.2f}")
    print(f"loadavg before {' '.join(load['before'])}, after {' '.join(load['after'])}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"settings": vars(args) | {"out": str(args.out)}, "results": results, "loadavg": load}, indent=2))


if __name__ == "__main__":
    main()
