"""Calibration of the text audit's permutation tests: size under the null and power, per metric.

For 8, 20 and 100 samples per prompt, and two score pools:

- ``controlled``: the unbiased :class:`PoolGenerator` on a 4-value, 2-subgroup, 5-template
  specification writes every continuation and VADER scores it; for power, value A draws the
  positive pool with probability 0.5 + ``--controlled-shift``.
- ``smollm2``: VADER scores of a stored SmolLM2 audit (the ``samples/`` folder that
  ``fairpath text audit --out`` writes). Under the null every prompt of a template draws its samples
  with replacement from that template's pooled scores, so the value labels are exchangeable; for
  power, the first value's scores are raised by ``--smollm2-shift`` (clipped to [0, 1]).

Each cell reports the rejection rate at alpha = 0.05 of the raw permutation p of individual and of
group fairness, and of "either, after Holm over the two", for :func:`counterfactual_fairness`
(one model) and :func:`compare_models` (two models on the same prompts: both null for size, one
shifted for power). Size targets lie in [0.03, 0.07]. No interval is shipped for any text metric,
so there is no coverage to measure. Results go to ``benchmarks/results/text_calibration.json``
(written atomically after every cell; a rerun skips finished cells).

    python benchmarks/study_text_calibration.py --store /tmp/text15-country/samples
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._parallel import run_tasks
from fairpath.text import FairnessSpec, GenerationSettings, PoolGenerator, SampleStore, VaderScorer, compare_models
from fairpath.text import counterfactual_fairness

ALPHA = 0.05
RESULTS = Path(__file__).parent / "results" / "text_calibration.json"
TOY = FairnessSpec.from_dict({
    "attribute": "country",
    "values": {"north": ["A", "B"], "south": ["C", "D"]},
    "templates": ["I am from {country}.", "People from {country} are", "{country} is", "I saw {country} today",
                  "In {country}, people"],
})


class ControlledPool:
    """Score tables written by the PoolGenerator and scored by VADER (each distinct sentence scored once)."""

    name = "controlled"

    def __init__(self, shift: float):
        self.shift = shift
        self.prompts = TOY.prompts()
        sentences = list(PoolGenerator(TOY).positive + PoolGenerator(TOY).negative)
        self.score_of = dict(zip(sentences, VaderScorer().score(sentences)))

    def frame(self, n_samples: int, seed: int, shifted: bool) -> pd.DataFrame:
        generator = PoolGenerator(TOY, mixing={"A": 0.5 + self.shift} if shifted else None)
        texts = generator.generate(self.prompts["prompt"].tolist(), settings=GenerationSettings(n_samples=n_samples, seed=seed))
        frame = self.prompts.loc[self.prompts.index.repeat(n_samples), ["template_id", "value", "subgroup"]].reset_index(drop=True)
        return frame.assign(score=[self.score_of[text] for continuations in texts for text in continuations])


class StoredPool:
    """Exchangeable draws from the per-template VADER score pools of a stored audit."""

    name = "smollm2"

    def __init__(self, store: Path, shift: float):
        samples = SampleStore(store).load()
        samples["score"] = VaderScorer().score(samples["text"].tolist())
        self.source = {"store": str(store), "model": str(samples["model"].iloc[0]), "n_samples": len(samples),
                       "samples_per_prompt": int(samples.groupby("prompt").size().max())}
        subgroup_of = FairnessSpec.load(str(samples["attribute"].iloc[0])).prompts().drop_duplicates("value").set_index("value")["subgroup"]
        self.prompts = samples.drop_duplicates("prompt")[["template_id", "value"]].reset_index(drop=True)
        self.prompts["subgroup"] = self.prompts["value"].map(subgroup_of)
        self.pools = {t: group["score"].to_numpy() for t, group in samples.groupby("template_id")}
        self.shifted_value = self.prompts["value"].iloc[0]
        self.shift = shift

    def frame(self, n_samples: int, seed: int, shifted: bool) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        frame = self.prompts.loc[self.prompts.index.repeat(n_samples)].reset_index(drop=True)
        scores = np.concatenate([rng.choice(self.pools[t], size=n_samples) for t in self.prompts["template_id"]])
        if shifted:
            scores = np.where(frame["value"] == self.shifted_value, np.clip(scores + self.shift, 0, 1), scores)
        return frame.assign(score=scores)


def _rejections(test) -> list[bool]:
    return [test.individual.p_value <= ALPHA, test.group.p_value <= ALPHA,
            min(test.individual.p_holm, test.group.p_holm) < ALPHA]


BLOCK = 50  # replicates per task; a cell is saved whenever its finished blocks extend the prefix


def run_block(block: tuple[int, int], *, pool, n_samples: int, kind: str, scenario: str, permutations: int) -> np.ndarray:
    """Rejection counts of the replicates ``range(*block)``; each replicate's data and test have fixed seeds."""
    counts = np.zeros(3, dtype=int)
    for r in range(*block):
        seed = 1_000_003 * n_samples + 2 * r  # fixed per replicate, so a resumed cell draws the same data
        a = pool.frame(n_samples, seed, scenario == "power")
        if kind == "single":
            test = counterfactual_fairness(a, n_permutations=permutations, seed=r)
        else:
            test = compare_models(a, pool.frame(n_samples, seed + 1, False), n_permutations=permutations, seed=r)
        counts += _rejections(test)
    return counts


def run_cell(pool, n_samples: int, kind: str, scenario: str, replicates: int, permutations: int, done: dict | None,
             save, where: dict) -> dict:
    """Rejection counts over ``replicates``, continuing from a partial cell ``done``; blocks of ``BLOCK``
    replicates run as tasks (``where``: run_tasks options) and ``save`` records the finished prefix."""
    started = time.perf_counter()
    counts = np.array(done["counts"] if done else [0, 0, 0])
    first = done["replicates"] if done else 0
    seconds = done["seconds"] if done else 0.0
    blocks = [(start, min(start + BLOCK, replicates)) for start in range(first, replicates, BLOCK)]
    shared = {"pool": pool, "n_samples": n_samples, "kind": kind, "scenario": scenario, "permutations": permutations}
    finished, saved, cell = {}, 0, {}
    for position, block_counts in run_tasks(run_block, blocks, shared=shared, **where):
        finished[position] = block_counts
        while saved in finished:  # only a prefix of replicates is recorded, so a resume never skips one
            counts += finished.pop(saved)
            replicates_done = blocks[saved][1]
            saved += 1
            rates = counts / replicates_done
            cell = {"pool": pool.name, "samples_per_prompt": n_samples, "test": kind, "scenario": scenario,
                    "replicates": replicates_done, "permutations": permutations, "shift": pool.shift, "counts": counts.tolist(),
                    "rate_individual": rates[0], "rate_group": rates[1], "rate_either_holm": rates[2],
                    "seconds": round(seconds + time.perf_counter() - started, 1),
                    "loadavg": Path("/proc/loadavg").read_text().split()[:3]}
            save(cell)
            print(f"    {replicates_done}/{replicates} replicates, {cell['seconds']:.0f} s", flush=True)
    return cell


def _save(results: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(results, indent=1))
    os.replace(temporary, path)  # atomic: an interrupted run never leaves half a file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="samples/ folder of a stored SmolLM2 audit (skip the smollm2 pool without it)")
    parser.add_argument("--samples", default="8,20,100", help="samples per prompt, comma-separated")
    parser.add_argument("--replicates", type=int, default=500, help="replicates per size cell")
    parser.add_argument("--power-replicates", type=int, default=100)
    parser.add_argument("--permutations", type=int, default=199,
                        help="permutations per test (the test is exact at any number; 199 makes p <= 0.05 exactly 10/200)")
    parser.add_argument("--controlled-shift", type=float, default=0.15)
    parser.add_argument("--smollm2-shift", type=float, default=0.05)
    parser.add_argument("--tests", default="single,compare")
    parser.add_argument("--pools", default="controlled,smollm2")
    parser.add_argument("--results", type=Path, default=RESULTS, help=f"results JSON (default {RESULTS})")
    parser.add_argument("--jobs", type=int, default=1, help="threads for the blocks of replicates (default 1)")
    parser.add_argument("--scheduler", default=None, help="run the blocks on this Dask scheduler")
    parser.add_argument("--workers", type=int, default=None, help="run the blocks on a local Dask cluster of N processes")
    args = parser.parse_args()
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    pools = [ControlledPool(args.controlled_shift)] if "controlled" in args.pools else []
    if args.store is not None and "smollm2" in args.pools:
        pools.append(StoredPool(args.store, args.smollm2_shift))
        results["smollm2_source"] = pools[-1].source
    elif "smollm2" in args.pools:
        print("no --store given: the smollm2 pool is skipped")
    # Sizes first (the acceptance figures), cheap cells before expensive ones.
    cells = [(scenario, replicates, kind, n_samples, pool)
             for scenario, replicates in (("size", args.replicates), ("power", args.power_replicates))
             for kind in args.tests.split(",") for n_samples in (int(n) for n in args.samples.split(",")) for pool in pools]
    for scenario, replicates, kind, n_samples, pool in cells:
        key = f"{pool.name}/n={n_samples}/{kind}/{scenario}"
        done = results.get(key) if results.get(key, {}).get("permutations") == args.permutations else None
        if done and done["replicates"] >= replicates:
            continue
        print(f"{key}: {replicates} replicates", flush=True)

        def save(cell, key=key):
            results[key] = cell
            _save(results, args.results)

        run_cell(pool, n_samples, kind, scenario, replicates, args.permutations, done, save,
                 {"n_jobs": args.jobs, "scheduler": args.scheduler, "workers": args.workers})
    rows = pd.DataFrame([v for k, v in results.items() if "/" in k])
    print(rows.drop(columns=["loadavg"]).to_string(index=False))
    size = rows[rows["scenario"] == "size"]
    inside = size[["rate_individual", "rate_group", "rate_either_holm"]].apply(lambda c: c.between(0.03, 0.07))
    print(f"size cells with every rate in [0.03, 0.07]: {int(inside.all(axis=1).sum())} of {len(size)}")


if __name__ == "__main__":
    main()
