"""Scoring decision prompts with the local model: bfloat16 against float32, in speed and in the scores (issue 38).

    python benchmarks/bench_llm_scoring.py [--rows 200] [--batch-size 64]

``--rows`` COMPAS rows (faircause's compas.csv, a fixed sample) are rendered with the built-in ``compas`` prompt, X
mentioned as White and as Non-White, and scored by SmolLM2 in each precision in the same process. Printed: the time
of each and their ratio, how far bfloat16's scores lie from float32's, and the exact check (the mean change of the
score from White to Non-White over the rows) with its SE in each.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath.causal import SFM
from fairpath.llm import DecisionPrompt
from fairpath.llm._scoring import _from_probabilities
from fairpath.text import HFGenerator

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "compas.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    prompt = DecisionPrompt.builtin("compas")
    roles = prompt.roles
    sfm = SFM(x=roles["x"], x0=roles["x0"], x1=roles["x1"], z=roles["z"], w=roles["w"], y=roles["y"])
    rows = pd.read_csv(DATA).sample(args.rows, random_state=1)
    texts = prompt.render(rows, sfm, x_values="White") + prompt.render(rows, sfm, x_values="Non-White")
    scores, seconds = {}, {}
    for dtype in ("bfloat16", "float32"):
        generator = HFGenerator("default", dtype=dtype)
        generator.answer_probabilities(texts[:8], prompt.spellings, batch_size=8)  # warm up
        started = time.perf_counter()
        probabilities = generator.answer_probabilities(texts, prompt.spellings, batch_size=args.batch_size)
        seconds[dtype] = time.perf_counter() - started
        scores[dtype] = _from_probabilities(probabilities, prompt.values)["score"].to_numpy()  # as score_prompts reads them
    gap = np.abs(scores["bfloat16"] - scores["float32"])
    print(f"{len(texts)} prompts, batch {args.batch_size}, load {os.getloadavg()[0]:.2f}: bfloat16 {seconds['bfloat16']:.1f} s "
          f"({len(texts) / seconds['bfloat16']:.1f} prompts/s), float32 {seconds['float32']:.1f} s; ratio {seconds['bfloat16'] / seconds['float32']:.2f}")
    print(f"|bfloat16 − float32| per score: median {np.median(gap):.4f}, 95th percentile {np.quantile(gap, 0.95):.4f}, largest {gap.max():.4f}")
    for dtype, score in scores.items():
        change = score[args.rows:] - score[: args.rows]
        print(f"{dtype}: exact check White → Non-White {change.mean():+.4f} ± {change.std(ddof=1) / np.sqrt(args.rows):.4f} (SE)")


if __name__ == "__main__":
    main()
