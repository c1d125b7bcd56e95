"""The sensitivity bounds against a confounder that is really there (issue 39, item 5).

    python benchmarks/study_sensitivity.py [--reps 100] [--n 3000] [--jobs 2] [--population 2000000] [--out DIR]

Two structural models with an unobserved confounder U of known strength, which the decomposition does not see:

* ``xw``: U (a fair coin) confounds X and W: P(X = 1 | z, u) = expit(−0.3 + 0.8z + 0.5(2u − 1)),
  W = 0.8X + 0.5Z + 0.5(2U − 1) + ε_W, Y = 0.5X + 0.7W + 0.4Z + ε_Y. It biases the terms E[μ(x, Z) | x'] (Ctf-SE,
  ETT, TE, Ctf-IE's second term); the direct kind is not biased (Y ⊥ U given X, Z, W).
* ``wy``: U ~ N(0, 1) confounds W and Y: P(X = 1 | z) = expit(−0.3 + 0.8z), W = 0.8X + 0.5Z + 0.5U + 0.8ε_W,
  Y = 0.5X + 0.7W + 0.4Z + 0.5U + ε_Y. Conditioning on W opens X → W ← U → Y: it biases E[μ(x, Z, W) | x'] (Ctf-DE,
  Ctf-IE's first term); the total kind is not biased (U ⊥ X given Z).

Z ~ N(0, 1), ε ~ N(0, 1). For each model the true value of every measure, the estimand the decomposition converges to
without U, and the true sensitivity parameters of each regression's part (cf_y, cf_d, ρ: long story short's
definitions, from the exact long and short regressions and representers of the model) come from a population of
``--population`` units. Each replication draws n rows, decomposes them as a user would (default learner and splits),
and records whether the usual 95% interval holds the truth, and whether the sensitivity confidence bounds do, at the
true parameters (the largest cf_y, cf_d and |ρ| over the measure's biased parts) and at ρ = 1, with the robustness
values. A third model, ``wy_null``, is ``wy`` with no direct effect (Y = 0.7W + 0.4Z + 0.5U + ε_Y): its true Ctf-DE
is 0 and the confounder alone makes the estimate positive, so the robustness value must not exceed the true strength
max(cf_y, cf_d) of the confounder that produces it. Replications are saved one file each under DIR (default
benchmarks/results/sensitivity_n{N}) and resume.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import binomtest, norm
from tqdm import tqdm

from fairpath._parallel import run_tasks
from fairpath.causal import SFM, decompose
from fairpath.causal._sensitivity import kind_groups

MEASURES = ("ctfde", "ctfie", "ctfse", "ett", "te")
SFM_OF = SFM(x="x", x0=0, x1=1, z=["z"], w=["w"], y="y")


@dataclass(frozen=True)
class Model:
    """Coefficients of one model: X's propensity, W's and Y's linear equations, and U's effects."""

    name: str
    u_binary: bool  # U a fair coin coded ±1 (else N(0, 1))
    x_u: float  # U's effect on X's log-odds
    w_u: float  # on W
    y_u: float  # on Y
    w_sd: float  # SD of W's own noise
    y_x: float = 0.5  # X's direct effect on Y
    x_0: float = -0.3
    x_z: float = 0.8
    w_x: float = 0.8
    w_z: float = 0.5
    y_w: float = 0.7
    y_z: float = 0.4

    def draw(self, n: int, rng: np.random.Generator) -> dict:
        z = rng.standard_normal(n)
        u = 2.0 * rng.integers(0, 2, n) - 1 if self.u_binary else rng.standard_normal(n)
        x = (rng.random(n) < expit(self.x_0 + self.x_z * z + self.x_u * u)).astype(int)
        w = self.w_x * x + self.w_z * z + self.w_u * u + self.w_sd * rng.standard_normal(n)
        y = self.y_x * x + self.y_w * w + self.y_z * z + self.y_u * u + rng.standard_normal(n)
        return {"z": z, "u": u, "x": x, "w": w, "y": y}

    # -- the exact conditional quantities (long: with U; short: without) -----------------------------
    def _u_values(self):
        return ((-1.0, 0.5), (1.0, 0.5)) if self.u_binary else None

    def p1_long(self, kind: str, o: dict) -> np.ndarray:
        """P(X = 1 | z, u) (total kind) or P(X = 1 | z, w, u) (direct kind)."""
        p = expit(self.x_0 + self.x_z * o["z"] + self.x_u * o["u"])
        if kind == "total":
            return p
        one, zero = (norm.pdf(o["w"], self.w_x * x + self.w_z * o["z"] + self.w_u * o["u"], self.w_sd) for x in (1, 0))
        return p * one / (p * one + (1 - p) * zero)

    def _joint(self, x: int, o: dict, with_w: bool) -> np.ndarray:
        """Σ_u P(u)·P(x | z, u)·[p(w | x, z, u)]: the density of (x, [w]) given z, U integrated out."""
        if self.u_binary:
            total = 0.0
            for u, weight in self._u_values():
                p = expit(self.x_0 + self.x_z * o["z"] + self.x_u * u)
                px = p if x else 1 - p
                density = norm.pdf(o["w"], self.w_x * x + self.w_z * o["z"] + self.w_u * u, self.w_sd) if with_w else 1.0
                total = total + weight * px * density
            return total
        # U ⊥ X given Z here (x_u = 0): W given x, z is normal with U's variance added
        p = expit(self.x_0 + self.x_z * o["z"])
        px = p if x else 1 - p
        spread = np.hypot(self.w_u, self.w_sd)
        return px * (norm.pdf(o["w"], self.w_x * x + self.w_z * o["z"], spread) if with_w else 1.0)

    def p1_short(self, kind: str, o: dict) -> np.ndarray:
        one, zero = (self._joint(x, o, kind == "direct") for x in (1, 0))
        return one / (one + zero)

    def mean_u(self, x: np.ndarray, o: dict, with_w: bool) -> np.ndarray:
        """E[U | x, z] or E[U | x, z, w]."""
        if self.u_binary:
            parts = []
            for u, weight in self._u_values():
                p = expit(self.x_0 + self.x_z * o["z"] + self.x_u * u)
                px = np.where(x == 1, p, 1 - p)
                density = norm.pdf(o["w"], self.w_x * x + self.w_z * o["z"] + self.w_u * u, self.w_sd) if with_w else 1.0
                parts.append((u, weight * px * density))
            return sum(u * d for u, d in parts) / sum(d for _, d in parts)
        if not with_w:
            return np.zeros(len(x))
        return self.w_u * (o["w"] - self.w_x * x - self.w_z * o["z"]) / (self.w_u ** 2 + self.w_sd ** 2)

    def g_long(self, kind: str, x, o: dict) -> np.ndarray:
        """E[Y | x, z, u] (total) or E[Y | x, z, w, u] (direct)."""
        x = np.broadcast_to(x, o["z"].shape)
        if kind == "total":
            mean_w = self.w_x * x + self.w_z * o["z"] + self.w_u * o["u"]
            return self.y_x * x + self.y_w * mean_w + self.y_z * o["z"] + self.y_u * o["u"]
        return self.y_x * x + self.y_w * o["w"] + self.y_z * o["z"] + self.y_u * o["u"]

    def g_short(self, kind: str, x, o: dict) -> np.ndarray:
        x = np.broadcast_to(x, o["z"].shape)
        u = self.mean_u(x, o, kind == "direct")
        if kind == "total":
            mean_w = self.w_x * x + self.w_z * o["z"] + self.w_u * u
            return self.y_x * x + self.y_w * mean_w + self.y_z * o["z"] + self.y_u * u
        return self.y_x * x + self.y_w * o["w"] + self.y_z * o["z"] + self.y_u * u


MODELS = {
    "xw": Model("xw", u_binary=True, x_u=0.5, w_u=0.5, y_u=0.0, w_sd=1.0),
    "wy": Model("wy", u_binary=False, x_u=0.0, w_u=0.5, y_u=0.5, w_sd=0.8),
    "wy_null": Model("wy_null", u_binary=False, x_u=0.0, w_u=0.5, y_u=0.5, w_sd=0.8, y_x=0.0),
}


def _psi(model: Model, o: dict, key: tuple, long: bool) -> float:
    """ψ(xz, xw, xy) of the long model (the truth) or of the short one (what the decomposition estimates)."""
    x_z, x_w, x_y = key
    rows = o["x"] == x_z
    kind = "total" if x_w == x_y and x_z != x_w else "direct"
    # an observed term E[Y | x] is the mean of E[Y | x, z, w, u] over its rows: the same value without Y's own noise
    g = model.g_long if long or x_z == x_w == x_y else model.g_short
    part = {name: value[rows] for name, value in o.items()}
    return float(g(kind, x_y, part).mean())


def population(model: Model, n: int, seed: int = 12345) -> dict:
    """Per measure: the truth, the short estimand, and per biased regression part its true cf_y, cf_d, ρ and bias."""
    from fairpath._measures import MEASURE_TERMS

    o = model.draw(n, np.random.default_rng(seed))
    share = {0: float(np.mean(o["x"] == 0)), 1: float(np.mean(o["x"] == 1))}
    out = {}
    for measure in MEASURES:
        value = {long: sum(sign * (_psi(model, o, key, long) if key[0] is not None else
                                   sum(share[v] * _psi(model, o, (v, *key[1:]), long) for v in (0, 1)))
                           for sign, key in MEASURE_TERMS[measure]) for long in (True, False)}
        parts = {}
        for kind, terms in kind_groups(measure, share, has_w=True).items():
            gap = np.where(o["x"] == 1, model.g_long(kind, 1, o) - model.g_short(kind, 1, o),
                           model.g_long(kind, 0, o) - model.g_short(kind, 0, o))
            sigma2 = float(np.mean((o["y"] - np.where(o["x"] == 1, model.g_short(kind, 1, o), model.g_short(kind, 0, o))) ** 2))
            alphas = {}
            for long in (True, False):
                p1 = model.p1_long(kind, o) if long else model.p1_short(kind, o)
                p = {1: p1, 0: 1 - p1}
                alphas[long] = sum(weight * (o["x"] == x_y) / share[x_z] * p[x_z] / p[x_y] for (x_z, _, x_y), weight in terms.items())
            delta = alphas[True] - alphas[False]
            product = float(np.mean(gap * delta))
            spread = float(np.sqrt(np.mean(gap ** 2) * np.mean(delta ** 2)))
            parts[kind] = {"cf_y": float(np.mean(gap ** 2)) / sigma2, "cf_d": float(np.mean(delta ** 2) / np.mean(alphas[True] ** 2)),
                           "rho": product / spread if spread > 0 else 0.0, "bias": -product}
        out[measure] = {"truth": value[True], "estimand": value[False], "parts": parts}
    return out


def strengths(parts: dict) -> dict:
    """One (cf_y, cf_d, |ρ|) for the measure: the largest over its biased parts (a part without bias adds none)."""
    biased = [p for p in parts.values() if abs(p["bias"]) > 1e-6]
    if not biased:
        return {"cf_y": 0.0, "cf_d": 0.0, "rho": 0.0}
    return {"cf_y": max(p["cf_y"] for p in biased), "cf_d": min(max(p["cf_d"] for p in biased), 0.999),
            "rho": min(max(abs(p["rho"]) for p in biased), 1.0)}


def replicate(task: tuple[str, int], *, n: int, truths: dict) -> dict:
    name, rep = task
    model = MODELS[name]
    o = model.draw(n, np.random.default_rng(1000 + rep))
    data = pd.DataFrame({k: o[k] for k in ("x", "z", "w", "y")})
    started = time.perf_counter()
    with warnings.catch_warnings():  # a few rows with an extreme propensity, clipped: counted by the decomposition
        warnings.simplefilter("ignore")
        result = decompose(data, SFM_OF, seed=rep, n_jobs=1, progress=False, measures=MEASURES)
    record = {"model": name, "rep": rep, "n_rep": result.settings["n_rep"], "seconds": time.perf_counter() - started,
              "loadavg": os.getloadavg()[0]}
    for measure in MEASURES:
        truth = truths[name][measure]
        given = strengths(truth["parts"])
        at_truth = result.sensitivity(**given).row(measure)
        worst = result.sensitivity(cf_y=given["cf_y"], cf_d=given["cf_d"]).row(measure)
        record[measure] = {
            "truth": truth["truth"], "estimate": at_truth.estimate, "se": at_truth.se,
            "usual_covers": bool(at_truth.usual_ci_low <= truth["truth"] <= at_truth.usual_ci_high),
            "bounds_cover": bool(at_truth.ci_low <= truth["truth"] <= at_truth.ci_high),
            "bounds_cover_rho1": bool(worst.ci_low <= truth["truth"] <= worst.ci_high),
            "bias_bound": at_truth.bias_bound, "true_bias": truth["estimand"] - truth["truth"],
            "robustness_value": at_truth.robustness_value, "robustness_value_ci": at_truth.robustness_value_ci,
        }
    return record


def summarise(records: list[dict], truths: dict) -> pd.DataFrame:
    rows = []
    for record in records:
        for measure in MEASURES:
            rows.append({"model": record["model"], "measure": measure, "seconds": record["seconds"], "loadavg": record["loadavg"],
                         **record[measure]})
    frame = pd.DataFrame(rows)
    table = frame.groupby(["model", "measure"], sort=False).agg(
        reps=("truth", "size"), truth=("truth", "first"), mean_estimate=("estimate", "mean"), true_bias=("true_bias", "first"),
        mean_bias_bound=("bias_bound", "mean"), usual=("usual_covers", "mean"), bounds=("bounds_cover", "mean"),
        bounds_rho1=("bounds_cover_rho1", "mean"), rv=("robustness_value", "median"), rv_ci=("robustness_value_ci", "median"),
        seconds=("seconds", "mean"), loadavg=("loadavg", "mean"))
    for (model, measure), row in table.iterrows():
        given = strengths(truths[model][measure]["parts"])
        table.loc[(model, measure), ["cf_y", "cf_d", "rho"]] = given["cf_y"], given["cf_d"], given["rho"]
        # the robustness value may not exceed the strength of a confounder that really moves the estimate by its bias
        rvs = frame[(frame["model"] == model) & (frame["measure"] == measure)]["robustness_value"]
        table.loc[(model, measure), "rv_at_most_strength"] = float((rvs <= max(given["cf_y"], given["cf_d"])).mean())
        interval = binomtest(round(row["bounds"] * row["reps"]), int(row["reps"])).proportion_ci(0.95, method="exact")
        table.loc[(model, measure), ["bounds_mc_low", "bounds_mc_high"]] = interval.low, interval.high
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--population", type=int, default=2_000_000)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    out = args.out or Path(__file__).parent / "results" / f"sensitivity_n{args.n}"
    out.mkdir(parents=True, exist_ok=True)
    models = args.models.split(",")
    truths_path = out / f"population_{args.population}.json"
    if truths_path.exists():
        truths = json.loads(truths_path.read_text())
    else:
        truths = {name: population(MODELS[name], args.population) for name in MODELS}
        truths_path.write_text(json.dumps(truths, indent=1))
    for name in models:
        for measure in MEASURES:
            t = truths[name][measure]
            parts = "; ".join(f"{kind}: cf_y {p['cf_y']:.4f}, cf_d {p['cf_d']:.4f}, rho {p['rho']:+.3f}, bias {p['bias']:+.4f}"
                              for kind, p in t["parts"].items())
            print(f"{name} {measure}: truth {t['truth']:+.4f}, estimand without U {t['estimand']:+.4f} "
                  f"(bias {t['estimand'] - t['truth']:+.4f}); {parts}")
    path = lambda name, rep: out / f"{name}_{rep:04d}.json"  # noqa: E731
    tasks = [(name, rep) for name in models for rep in range(args.reps) if not path(name, rep).exists()]
    for _, record in tqdm(run_tasks(replicate, tasks, shared={"n": args.n, "truths": truths}, n_jobs=args.jobs),
                       total=len(tasks), desc=f"replications {out.name}"):
        target = path(record["model"], record["rep"])
        target.with_suffix(".tmp").write_text(json.dumps(record))
        target.with_suffix(".tmp").replace(target)
    records = [json.loads(path(name, rep).read_text()) for name in models for rep in range(args.reps)]
    table = summarise(records, truths)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    table.to_csv(out / "summary.csv")
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
