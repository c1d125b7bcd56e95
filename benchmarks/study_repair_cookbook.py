"""Does the repaired predictor pass the Business Necessity Cookbook for the BN set it was built for?
(issue 4, acceptance 1)

    python benchmarks/study_repair_cookbook.py [--n 5000] [--seed 0] [--learner forest|gbm] [--out benchmarks/results]

For the synthetic binary SFM (known effects) and COMPAS (paper preparation), for each BN set in
{∅, {SE}, {IE}, {IE, SE}} and each route:
- adaptation: FairPredictor (twins follow x1's mechanisms); its out-of-fold scores are decomposed in
  the twin world (observed X and Y, adapted Z and W), where the predictor's pathways run;
- constrained: ConstrainedLearner with λ chosen on held-out rows, and with λ = ∞ (the effects
  imposed exactly on the training rows); decomposed on the original data.
The Cookbook (fairpath.parity, Holm over the three pathways, equivalence margin 0.02) judges each
predictor. The acceptance criteria are checked against the outcome's effects on the original data
(and the truth for the synthetic model): a pathway outside the BN set must be not significantly
different from 0 (Holm-adjusted p >= 0.05) and within 0.02 of 0; a pathway in the set within 0.02 of
the outcome's effect. (For the adaptation route with BN = {IE}, Z is adapted but W kept, so the
outcome's IE in the twin world is not the original one: the Cookbook's paired test there compares
with a distorted outcome, and only the comparison with the original effect is meaningful.)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath.causal import EarlyStoppingGBM, decompose
from fairpath.datasets import COMPAS_SFM, make_binary_sfm
from fairpath.parity import business_necessity_cookbook
from fairpath.repair import ConstrainedLearner, FairPredictor

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
BN_SETS = [(), ("SE",), ("IE",), ("IE", "SE")]
MEASURE = {"DE": "ctfde", "IE": "ctfie", "SE": "ctfse"}
TOLERANCE, ALPHA = 0.02, 0.05


def datasets(n: int, seed: int):
    synthetic = make_binary_sfm(n, seed=seed)
    yield "synthetic binary SFM", synthetic.data, synthetic.sfm, synthetic.truth
    compas = SHARED / "data" / "compas_sp2pp.csv"
    if compas.exists():
        yield "COMPAS", pd.read_csv(compas)[COMPAS_SFM.columns], COMPAS_SFM, None


def judge(frame: pd.DataFrame, sfm, bn, column: str, outcome_effects: dict, truth: dict | None, seed: int) -> list[dict]:
    decomposition = decompose(frame, sfm, predictors=[column], seed=seed)
    cookbook = business_necessity_cookbook(decomposition, bn, predictors=[column], alpha=ALPHA, margin=TOLERANCE)
    verdicts = cookbook.to_frame().set_index("pathway")
    rows = []
    for pathway, measure in MEASURE.items():
        effect = decomposition.estimate(measure, outcome=column)
        in_bn = pathway in bn
        goal = outcome_effects[pathway] if in_bn else 0.0
        passed = abs(effect.estimate - goal) <= TOLERANCE
        if not in_bn:
            passed = passed and verdicts.loc[pathway, "p_holm"] >= ALPHA
        rows.append({
            "pathway": pathway, "in_bn": in_bn, "effect": effect.estimate, "se": effect.se,
            "outcome_effect": outcome_effects[pathway], "truth": (truth or {}).get(measure, float("nan")),
            "target": goal, "gap": effect.estimate - goal, "p_holm": verdicts.loc[pathway, "p_holm"],
            "cookbook_verdict": verdicts.loc[pathway, "verdict"], "cookbook_overall": cookbook.to_dict()["overall"][column]["status"],
            "passes": bool(passed),
        })
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="rows of the synthetic model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--learner", default="forest", choices=["forest", "gbm"], help="learner on the fair twins")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    all_rows = []
    for name, data, sfm, truth in datasets(args.n, args.seed):
        original = decompose(data, sfm, seed=args.seed)
        outcome_effects = {p: original.estimate(m).estimate for p, m in MEASURE.items()}
        learner = None if args.learner == "forest" else EarlyStoppingGBM(objective="cross_entropy", random_state=args.seed)
        for bn in BN_SETS:
            start = time.perf_counter()
            predictor = FairPredictor(sfm, bn=bn, learner=learner, random_state=args.seed).fit(data)
            adapted = judge(predictor.twin_frame(column="fair"), sfm, bn, "fair", outcome_effects, truth, args.seed)
            routes = [("adaptation", adapted)]
            for route, lambdas in (("constrained", None), ("constrained λ=∞", (np.inf,))):
                options = {} if lambdas is None else {"lambdas": lambdas}
                model = ConstrainedLearner(sfm, bn=bn, targets=outcome_effects, random_state=args.seed, **options).fit(data)
                scored = data.assign(constrained=model.predict_proba(data)[:, 1] if hasattr(model, "classes_") else model.predict(data))
                routes.append((route, judge(scored, sfm, bn, "constrained", outcome_effects, truth, args.seed)))
            for route, rows in routes:
                for row in rows:
                    all_rows.append({"data": name, "bn": "{" + ", ".join(bn) + "}", "route": route, **row})
            print(f"{name}, BN {{{', '.join(bn)}}}: {time.perf_counter() - start:.0f} s", flush=True)
    table = pd.DataFrame(all_rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"repair_cookbook_{args.learner}.csv", index=False)
    shown = table[["data", "bn", "route", "pathway", "in_bn", "effect", "se", "target", "gap", "p_holm", "cookbook_verdict", "passes"]]
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(shown.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    summary = table.groupby(["data", "route"])["passes"].agg(["sum", "count"])
    print("\npathway checks passed (of 12 per data set and route):\n" + summary.to_string())
    print(f"\nwrote {out / f'repair_cookbook_{args.learner}.csv'}")


if __name__ == "__main__":
    main()
