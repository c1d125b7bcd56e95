"""The LLM decision audit's error rates, with a scripted decision-maker of known effects (issue 38).

    python benchmarks/study_llm_audit.py [--reps 200] [--n 2000] [--exact-reps 2000] [--out DIR]

Each replication draws n rows of the synthetic binary SFM (``make_binary_sfm``), lets a scripted decider answer the
built-in ``synthetic`` prompt (``tests/scripted_decider.py``: P(yes) a known function of the rendered X, Z, W), and runs
``fairpath.llm.llm_audit`` as a user would (default learner, X mentioned and withheld). Two deciders:

* ``interaction``: P(yes) = 0.3 + 0.06x + 0.1x·w2 + 0.1w2 + 0.15 tanh(z1): the direct effect differs from row to
  row, so the exact check's interval (the rows' sampling) has something to cover. Recorded: coverage of the true
  Ctf-DE/IE/SE of the decider's score by the audit's 95% intervals, and of the true Ctf-DE by the exact check's.
* ``faithful``: the decider reproduces the world, P(yes) = E[Y | x, z, w] of the SFM: every Ctf(ŷ) − Ctf(y) is 0, so
  any pathway read as amplified, dampened, reversed or added is a false claim. Recorded: how often any of the three
  pathways of ``llm_mentioned`` is read as changed (the family-wise error rate of the readings; Holm at α = 0.05).

The exact check needs no audit, so it is also simulated alone over ``--exact-reps`` fresh samples.

The truths come from the SFM's own Monte Carlo over 1,000,000 units with the decider's function as the outcome's
mean. Replications are saved one file each under DIR (default benchmarks/results/llm_audit_n{N}) and resume.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from scripted_decider import ScriptedDecider  # noqa: E402

from fairpath._stats import z_value  # noqa: E402
from fairpath.datasets import make_binary_sfm  # noqa: E402
from fairpath.datasets._synthetic import BinarySFM  # noqa: E402
from fairpath.llm import DecisionPrompt, llm_audit  # noqa: E402

WORLD = BinarySFM()
DECIDERS = {
    "interaction": lambda x, z, w: 0.3 + 0.06 * x + 0.1 * x * w[:, 1] + 0.1 * w[:, 1] + 0.15 * np.tanh(z[:, 0]),
    "faithful": WORLD.outcome_mean,
}
MEASURES = ("ctfde", "ctfie", "ctfse")


class Planted(BinarySFM):
    def __init__(self, probability):
        self.probability = probability

    def outcome_mean(self, x, z, w):
        return self.probability(x, z, w)


def replication(decider: str, seed: int, n: int) -> dict:
    sample = make_binary_sfm(n, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=ScriptedDecider(DECIDERS[decider]), n_bins=2, seed=seed,
                           progress=False)
    decomposition = result.audit.decomposition
    row = {"decider": decider, "seed": seed}
    for measure in MEASURES:
        estimate = decomposition.estimate(measure, "llm_mentioned")
        row.update({f"{measure}_estimate": estimate.estimate, f"{measure}_low": estimate.ci_low, f"{measure}_high": estimate.ci_high})
    exact = result.exact.iloc[0]
    row.update({"exact_estimate": exact["estimate"], "exact_low": exact["ci_low"], "exact_high": exact["ci_high"],
                "exact_gap_in_se": exact["gap_in_se"]})
    mentioned = result.pathways[(result.pathways["predictor"] == "llm_mentioned") & (result.pathways["measure"] != "tv")]
    row["any_change_read"] = bool((mentioned["reading"] != "no change shown").any())
    row["readings"] = ";".join(mentioned["reading"])
    return row


def exact_only(reps: int, n: int, truth: float) -> str:
    """The exact check alone, many times (it needs no audit): the interaction decider's score asked with x = 1 and with
    x = 0 on the rows of x = 0, as ``llm_audit`` asks it, and the coverage of the true Ctf-DE by its interval."""
    decider = ScriptedDecider(DECIDERS["interaction"])
    prompt = DecisionPrompt.builtin("synthetic")
    hits = 0
    for rep in range(reps):
        sample = make_binary_sfm(n, seed=100_000 + rep)
        rows = sample.data[sample.data["x"] == 0]
        change = np.array([decider.yes(text) for text in prompt.render(rows, sample.sfm, x_values=1)]) - \
            np.array([decider.yes(text) for text in prompt.render(rows, sample.sfm, x_values=0)])
        half = z_value(0.95) * change.std(ddof=1) / np.sqrt(len(change))
        hits += abs(change.mean() - truth) <= half
    interval = binomtest(int(hits), reps).proportion_ci(0.95, method="exact")
    return (f"interaction exact check alone ({reps} samples, seeds 100,000 + rep): coverage of the true Ctf-DE {hits / reps:.3f} "
            f"[{interval.low:.3f}, {interval.high:.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--exact-reps", type=int, default=2000, help="samples for the exact check alone (default 2000)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(__file__).parent / "results" / f"llm_audit_n{args.n}"
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    for decider in DECIDERS:
        for seed in range(args.reps):
            path = out / f"{decider}_{seed:04d}.json"
            if not path.exists():
                path.write_text(json.dumps(replication(decider, seed, args.n)))
            if seed % 20 == 19:
                print(f"{decider}: {seed + 1}/{args.reps} ({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
    rows = pd.DataFrame([json.loads(p.read_text()) for p in sorted(out.glob("*.json"))])
    lines = [f"n = {args.n}, {args.reps} replications per decider, {time.time() - started:.0f} s, load {os.getloadavg()[0]:.2f}"]
    interaction = rows[rows["decider"] == "interaction"]
    truth = Planted(DECIDERS["interaction"]).truth_for(0, 1)
    for measure in MEASURES:
        hit = ((interaction[f"{measure}_low"] <= truth[measure]) & (truth[measure] <= interaction[f"{measure}_high"])).sum()
        interval = binomtest(int(hit), len(interaction)).proportion_ci(0.95, method="exact")
        bias = interaction[f"{measure}_estimate"].mean() - truth[measure]
        lines.append(f"interaction {measure}: truth {truth[measure]:+.4f}, mean bias {bias:+.5f}, coverage {hit / len(interaction):.3f} "
                     f"[{interval.low:.3f}, {interval.high:.3f}]")
    hit = ((interaction["exact_low"] <= truth["ctfde"]) & (truth["ctfde"] <= interaction["exact_high"])).sum()
    interval = binomtest(int(hit), len(interaction)).proportion_ci(0.95, method="exact")
    lines.append(f"interaction exact check: coverage of the true Ctf-DE {hit / len(interaction):.3f} [{interval.low:.3f}, {interval.high:.3f}], "
                 f"SD of the estimated-minus-exact gap in SEs {interaction['exact_gap_in_se'].std():.2f}")
    lines.append(exact_only(args.exact_reps, args.n, truth["ctfde"]))
    faithful = rows[rows["decider"] == "faithful"]
    false = int(faithful["any_change_read"].sum())
    interval = binomtest(false, len(faithful)).proportion_ci(0.95, method="exact")
    lines.append(f"faithful: a pathway read as changed in {false}/{len(faithful)} = {false / len(faithful):.3f} [{interval.low:.3f}, "
                 f"{interval.high:.3f}] of replications (family-wise, Holm at 0.05)")
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
