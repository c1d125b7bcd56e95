"""Issue 43's diagnosis: where does the error of Ctf-SE's interval come from?

    python benchmarks/study_ctfse_terms.py [--levels 3] [--binary | --continuous] [--n 3000] [--reps 200]
        [--learner stack] [--n-folds auto] [--jobs 2] [--out DIR]

Ctf-SE(x0 → x1) = ψ(x0, x1, x1) − ψ(x1, x1, x1) = E[Y_{x1} | x0] − E[Y | x1]. The second term is a group mean (its
pseudo-outcome 1(X = x1)/P̂(x1)·Y has no nuisance), so every error of the nuisance fits sits in the first, whose
pseudo-outcome needs the odds p(x0 | z)/p(x1 | z) and μ(x1, z) = E[Y | X = x1, z]. Each replication draws
``make_multilevel_sfm(n, levels=K, binary_outcome=...)``, runs ``decompose`` as a user does (every level against 0,
the defaults), and on its first cross-fitting split recomputes the pseudo-outcomes of every contrast four ways: as
fitted; with the true odds; with the true μ(x1, z); with both true (the oracle, whose only error is sampling). Per
contrast and variant the table gives the mean and SD of z = (estimate − truth)/SE, the coverage of the 95% interval,
and the ratio of the Monte Carlo SD of the estimate to the mean SE, for ψ(x0, x1, x1) and for Ctf-SE; the
``decompose`` rows are the user's estimate (every split). Results are saved one file per replication under DIR
(default ``benchmarks/results/ctfse_terms_k{K}_{y}_n{N}_{learner}``), so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from fairpath._parallel import run_tasks
from fairpath._stats import z_value
from fairpath.causal import SFM, decompose
from fairpath.causal._data import prepare_data
from fairpath._levels import contrast_codes
from fairpath.causal._decompose import _Fitter, resolve_n_folds
from fairpath.causal._methods import Debiasing
from fairpath.causal._nuisance import OutcomeNuisances, pair_rows
from fairpath.causal._pseudo import PseudoOutcomes
from fairpath.datasets._synthetic import MultilevelSFM

VARIANTS = ("fitted", "true_odds", "true_mu", "oracle", "normalized")
MEASURES = ("tv", "ctfde", "ctfie", "ctfse")


def _true_nuisances(model: MultilevelSFM, z: np.ndarray, contrast: tuple[int, int]) -> tuple[np.ndarray, dict]:
    """The pair propensity P(X = b | z, X ∈ {a, b}) and μ(v, z) = E[Y | X = v, z] (v coded 0 for a, 1 for b)."""
    a, b = contrast
    p = model.propensities(z)
    return p[:, b] / (p[:, a] + p[:, b]), {0: model._mean_given_z(a, a, z), 1: model._mean_given_z(b, b, z)}


@lru_cache(maxsize=None)
def _true_psi011(model: MultilevelSFM, contrast: tuple[int, int]) -> float:
    """ψ(x0, x1, x1) of the contrast by quadrature, once per model and contrast (not per replication)."""
    return model.true_psi(*contrast)[0][(0, 1, 1)]


def _ctfse_rows(psi011: np.ndarray, pseudo: PseudoOutcomes) -> tuple[np.ndarray, np.ndarray]:
    """ψ(x0, x1, x1)'s rows and Ctf-SE's: ψ(x0, x1, x1) − ψ(x1, x1, x1)."""
    return psi011, psi011 - pseudo(1, 1, 1)


def _normalized_psi011(pseudo: PseudoOutcomes) -> np.ndarray:
    """ψ(x0, x1, x1)'s rows with the odds weights of the x1 rows scaled to sum to the x0 group's size (Hájek)."""
    x, y, mu = pseudo.x, pseudo.y, pseudo.nuisances.mu_xz[1]
    odds = pseudo.p_z[0] / pseudo.p_z[1]
    scale = (x == 0).sum() / odds[x == 1].sum()
    rows = ((x == 1) * odds * scale * (y - mu) + (x == 0) * mu) / pseudo.share[0]
    return rows - rows.mean() * ((x == 0) / pseudo.share[0] - 1.0)


def _summary(rows: np.ndarray) -> tuple[float, float]:
    return float(rows.mean()), float(rows.std(ddof=1) / np.sqrt(len(rows)))


def replicate(rep: int, *, levels: int, binary: bool, n: int, learner: str, n_folds, full: bool = True) -> dict:
    model = MultilevelSFM(levels, binary)
    sample = model.sample(n, seed=50_000 + rep)
    sfm = SFM(x="x", x0=0, x1=None, z=model.z_names, w=model.w_names, y="y")
    started = time.perf_counter()
    result = decompose(sample.data, sfm, seed=rep, learner=learner, n_folds=n_folds, n_jobs=1, measures=MEASURES) if full else None
    record = {"rep": rep, "seconds": time.perf_counter() - started, "loadavg": os.getloadavg()[0], "contrasts": {}}
    prepared = prepare_data(sample.data, sfm, ["y"])
    codes = contrast_codes(levels, "reference")
    fitter = _Fitter(["y"], learner, resolve_n_folds(n_folds, prepared.n), 0.01, False, Debiasing(), 1, False,
                     "x", codes, balanced_bounds=True)
    fits = fitter(prepared, rep)  # decompose's first split: the same seed
    for contrast, fit in zip(codes, fits):
        label = str(prepared.levels[contrast[1]])
        truth = sample.truth_for(*contrast)
        fitted = fit.pseudo["y"]
        z = prepared.z[pair_rows(prepared.x, contrast)]
        true_p, true_mu = _true_nuisances(model, z, contrast)
        mu_true = OutcomeNuisances(mu_xz=true_mu, mu_xzw=fitted.nuisances.mu_xzw)
        variants = {
            "fitted": fitted,
            "true_odds": PseudoOutcomes(fitted.x, fitted.y, true_p, fitted.p_zw[1], fitted.nuisances, True),
            "true_mu": PseudoOutcomes(fitted.x, fitted.y, fitted.p_z[1], fitted.p_zw[1], mu_true, True),
            "oracle": PseudoOutcomes(fitted.x, fitted.y, true_p, fitted.p_zw[1], mu_true, True),
        }
        rows = {name: _ctfse_rows(pseudo(0, 1, 1), pseudo) for name, pseudo in variants.items()}
        rows["normalized"] = _ctfse_rows(_normalized_psi011(fitted), fitted)
        entry = {"truth_psi011": _true_psi011(model, contrast), "truth_ctfse": truth["ctfse"],
                 "max_odds": float(np.max(fitted.p_z[0] / fitted.p_z[1])),
                 "max_true_odds": float(np.max((1 - true_p) / true_p))}
        for name, (psi_rows, ctfse_rows) in rows.items():
            entry[f"{name}_psi011"], entry[f"{name}_psi011_se"] = _summary(psi_rows)
            entry[f"{name}_ctfse"], entry[f"{name}_ctfse_se"] = _summary(ctfse_rows)
        for measure in MEASURES:
            entry[f"truth_{measure}"] = truth[measure]
            if result is not None:
                e = result.decompositions[label].estimate(measure)
                entry[f"decompose_{measure}"], entry[f"decompose_{measure}_se"] = e.estimate, e.se
        record["contrasts"][label] = entry
    return record


def summarise(records: list[dict]) -> pd.DataFrame:
    rows = []
    for label in records[0]["contrasts"]:
        entries = pd.DataFrame([r["contrasts"][label] for r in records])
        quantities = [(f"{v}_{q}", f"truth_{q}") for v in VARIANTS for q in ("psi011", "ctfse")]
        quantities += [(f"decompose_{m}", f"truth_{m}") for m in MEASURES if f"decompose_{m}" in entries]
        quantities = [(column, truth) for column, truth in quantities if column in entries]
        for column, truth in quantities:
            error, se = entries[column] - entries[truth], entries[f"{column}_se"]
            z = error / se
            rows.append({"contrast": label, "quantity": column, "reps": len(entries), "bias": error.mean(),
                         "mean_se": se.mean(), "mc_sd": entries[column].std(ddof=1), "sd_over_se": entries[column].std(ddof=1) / se.mean(),
                         "mean_z": z.mean(), "sd_z": z.std(ddof=1), "coverage": float((z.abs() <= z_value(0.95)).mean())})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=3)
    parser.add_argument("--continuous", action="store_true", help="continuous Y (default: binary)")
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--learner", default="stack")
    parser.add_argument("--n-folds", default="auto")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--split-only", action="store_true", help="the first split's variants only, without decompose's estimate")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # process-wide: the replications run on threads (overlap notes are in the records)
    n_folds = args.n_folds if args.n_folds == "auto" else int(args.n_folds)
    binary = not args.continuous
    out = args.out or Path("benchmarks/results") / (f"ctfse_terms_k{args.levels}_{'binary' if binary else 'continuous'}_n{args.n}_"
                                                     f"{args.learner}" + (f"_folds{n_folds}" if n_folds != "auto" else "")
                                                     + ("_split" if args.split_only else ""))
    out.mkdir(parents=True, exist_ok=True)
    todo = [rep for rep in range(args.reps) if not (out / f"rep_{rep:04d}.json").exists()]
    shared = {"levels": args.levels, "binary": binary, "n": args.n, "learner": args.learner, "n_folds": n_folds, "full": not args.split_only}
    for position, record in tqdm(run_tasks(replicate, todo, shared=shared, n_jobs=args.jobs), total=len(todo), desc="replications",
                                 mininterval=10):
        path = out / f"rep_{record['rep']:04d}.json"
        path.with_suffix(".tmp").write_text(json.dumps(record))
        path.with_suffix(".tmp").replace(path)
    records = [json.loads((out / f"rep_{rep:04d}.json").read_text()) for rep in range(args.reps)]
    table = summarise(records)
    table.to_csv(out / "summary.csv", index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.round(4).to_string(index=False))
    print(f"mean seconds per replication {np.mean([r['seconds'] for r in records]):.1f}, "
          f"load {np.mean([r['loadavg'] for r in records]):.1f}")


if __name__ == "__main__":
    main()
