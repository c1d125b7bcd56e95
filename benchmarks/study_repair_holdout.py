"""Does a fair predictor stay fair on rows it never saw? (issue 44)

    python benchmarks/study_repair_holdout.py twins [--n 2000 8000] [--engines forest linear] [--seed 0]
    python benchmarks/study_repair_holdout.py se-gap [--reps 6] [--n 8000]
    python benchmarks/study_repair_holdout.py verdicts [--reps 100] [--n 2000] [--jobs 2] [--out DIR]

``twins`` (the diagnosis): for each synthetic model and engine, FairAdapt for BN = {SE} (Z resolving) is
fitted on 70% of a sample and applied to the other 30%; for every adapted mediator the table gives its
dependence on X given Z among the twins, in sample (the fitted rows) and out of sample (the new rows): the
coefficient of X in a least-squares fit of the twin on X and Z, in units of its standard error (t; fair
twins give |t| below 2 most of the time), and the mean gap in the observed data for scale.

``se-gap`` (is the held-out SE comparison itself sound?): for binary-outcome models, learners are fitted on
70% of a sample (X, Z and W as features) and the remaining 30% are decomposed with their scores as
predictors; the table gives, per learner, the mean and SD over replications of Ctf-SE(ŷ) − Ctf-SE(y) (the
Cookbook's SE test for SE in BN), its mean SE and the share of replications whose 95% interval excludes 0.
The Bayes predictor E[Y | X, Z, W] has a difference of 0 by construction: its row checks the comparison,
the others the learners' calibration across Z (the default forest, the same forest recalibrated by isotonic
regression on its out-of-bag scores, and scikit-learn's histogram gradient boosting).

``verdicts`` (the calibration of the held-out verdict): each replication draws a fresh sample of a model
and runs :func:`fairpath.repair.repair` with BN = {SE} and every default (seeded by the replication). The
fair predictor's true Ctf-DE and Ctf-IE are 0 (the adaptation removes both pathways), so a held-out FAIL
is a false FAIL; the table gives the share of FAIL verdicts (in sample and held out) with its exact 95%
Monte Carlo interval, the mean and SD of the held-out Ctf-DE and Ctf-IE of the fair predictor and of its
Ctf-SE difference to the outcome's, the AUC (R² for a continuous outcome) of the fair and the
unconstrained predictors, and the share of FAILs of the unconstrained predictor for comparison. Results
are saved atomically one file per (model, replication) under DIR (default
benchmarks/results/repair_holdout_n{N}), so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from sklearn.model_selection import train_test_split

from fairpath._io import atomic_write_text
from fairpath.adaptation import FairAdapt, graph_from_sfm, resolving_for_bn
from fairpath.datasets import make_binary_sfm, make_count_sfm, make_mixed_sfm
from fairpath.repair import repair

MODELS = {"count_sfm": make_count_sfm, "binary_sfm": make_binary_sfm, "mixed_sfm": make_mixed_sfm}
BN = ("SE",)


def _gap_t(frame: pd.DataFrame, sfm, column: str) -> float:
    """t of X's coefficient in the least-squares fit of ``column`` on X and Z (categories as indicators)."""
    z = pd.get_dummies(frame[list(sfm.z)], drop_first=True).astype(float).to_numpy() if sfm.z else np.empty((len(frame), 0))
    design = np.column_stack([np.ones(len(frame)), (frame[sfm.x] == sfm.x1).to_numpy(float), z])
    values = frame[column].to_numpy(float)
    coef, *_ = np.linalg.lstsq(design, values, rcond=None)
    residuals = values - design @ coef
    covariance = np.linalg.pinv(design.T @ design) * (residuals @ residuals) / (len(values) - design.shape[1])
    return float(coef[1] / np.sqrt(covariance[1, 1]))


def twins_table(sizes: list[int], engines: list[str], seed: int, reps: int) -> pd.DataFrame:
    rows = []
    for model, make in MODELS.items():
        for n in sizes:
            for engine in engines:
                for rep in range(reps):
                    sample = make(n, seed=seed + rep)
                    data, sfm = sample.data, sample.sfm
                    fitting, new = train_test_split(data, test_size=0.3, stratify=data[sfm.x], random_state=seed + rep)
                    adapter = FairAdapt(graph_from_sfm(sfm), x=sfm.x, baseline=sfm.x1, y=sfm.y, resolving=resolving_for_bn(sfm, BN), engine=engine,
                                        random_state=seed + rep).fit(fitting)
                    held = adapter.transform(new)
                    for column in (c for c in adapter.order_ if c != sfm.y):
                        rows.append({"model": model, "n": n, "engine": engine, "rep": rep, "column": column,
                                     "t_data": _gap_t(new, sfm, column), "t_in_sample": _gap_t(adapter.adapted_train_, sfm, column),
                                     "t_out_of_sample": _gap_t(held, sfm, column)})
    frame = pd.DataFrame(rows)
    return frame.groupby(["model", "n", "engine", "column"], sort=False).agg(
        reps=("rep", "size"), t_data=("t_data", "mean"), t_in_mean=("t_in_sample", "mean"),
        t_in_rms=("t_in_sample", lambda t: float(np.sqrt(np.mean(np.square(t))))),
        t_out_mean=("t_out_of_sample", "mean"), t_out_rms=("t_out_of_sample", lambda t: float(np.sqrt(np.mean(np.square(t)))))).reset_index()


def se_gap_table(n: int, reps: int, seed: int) -> pd.DataFrame:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.isotonic import IsotonicRegression

    from fairpath.causal import decompose
    from fairpath.repair._predictor import default_forest

    rows = []
    for model in ("count_sfm", "binary_sfm"):
        for rep in range(reps):
            sample = MODELS[model](n, seed=seed + rep)
            sfm = sample.sfm
            fitting, held = train_test_split(sample.data, test_size=0.3, stratify=sample.data[sfm.x], random_state=seed + rep)
            features = [sfm.x, *sfm.z, *sfm.w]
            forest = default_forest(True, seed + rep).fit(fitting[features], fitting[sfm.y])
            isotonic = IsotonicRegression(out_of_bounds="clip").fit(forest.oob_decision_function_[:, 1], fitting[sfm.y])
            boosting = HistGradientBoostingClassifier(random_state=seed + rep).fit(fitting[features], fitting[sfm.y])
            scores = {"bayes": sample.outcome_mean(held), "forest": forest.predict_proba(held[features])[:, 1]}
            scores["forest+isotonic"] = isotonic.predict(scores["forest"])
            scores["hist_gbm"] = boosting.predict_proba(held[features])[:, 1]
            result = decompose(held.assign(**scores).reset_index(drop=True), sfm, predictors=list(scores), seed=seed + rep)
            for learner in scores:
                difference = result.difference("ctfse", learner)
                rows.append({"model": model, "learner": learner, "rep": rep, "gap": difference.estimate, "se": difference.se,
                             "excludes_0": not difference.ci_low <= 0 <= difference.ci_high})
    frame = pd.DataFrame(rows)
    return frame.groupby(["model", "learner"], sort=False).agg(
        reps=("rep", "size"), gap_mean=("gap", "mean"), gap_sd=("gap", "std"), se_mean=("se", "mean"),
        share_excluding_0=("excludes_0", "mean")).reset_index()


def _path(out: Path, model: str, rep: int) -> Path:
    return out / f"{model}_{rep:04d}.json"


def _effects(audit, subject: str) -> dict:
    tests = audit.cookbook.tests.set_index("pathway")
    record = {"status": audit.status[subject]}
    for pathway in ("DE", "IE", "SE"):
        row = tests.loc[pathway]
        record.update({f"{pathway}_estimate": float(row["estimate"]), f"{pathway}_se": float(row["se"]), f"{pathway}_p_holm": float(row["p_holm"])})
    return record


def replicate(task: tuple[str, int], n: int) -> dict:
    model, rep = task
    sample = MODELS[model](n, seed=20_000 + rep)
    started = time.perf_counter()
    result = repair(sample.data, sample.sfm, bn=BN, seed=rep)
    accuracy = "auc" if result.binary else "r2"
    record = {"model": model, "rep": rep, "n": n, "seconds": time.perf_counter() - started, "loadavg": os.getloadavg()[0],
              "accuracy_measure": accuracy, "accuracy_fair": result.accuracy("fair", accuracy),
              "accuracy_unconstrained": result.accuracy("unconstrained", accuracy)}
    for label, audit, subject in (("held", result.audit, "fair"), ("in", result.in_sample_audit, "fair"),
                                  ("unconstrained", result.baseline_audit, "unconstrained")):
        record.update({f"{label}_{key}": value for key, value in _effects(audit, subject).items()})
    return record


def _share(fails: pd.Series) -> str:
    k, n = int(fails.sum()), len(fails)
    interval = binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k / n:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def verdicts_table(records: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for model, frame in records.groupby("model", sort=False):
        rows.append({
            "model": model, "reps": len(frame), "false FAIL held out [95% MC]": _share(frame["held_status"] == "FAIL"),
            "FAIL in sample": _share(frame["in_status"] == "FAIL"),
            "held-out Ctf-DE mean ± sd": f"{frame['held_DE_estimate'].mean():+.4f} ± {frame['held_DE_estimate'].std():.4f}",
            "held-out Ctf-IE mean ± sd": f"{frame['held_IE_estimate'].mean():+.4f} ± {frame['held_IE_estimate'].std():.4f}",
            "held-out SE diff mean ± sd": f"{frame['held_SE_estimate'].mean():+.4f} ± {frame['held_SE_estimate'].std():.4f}",
            "mean SE of IE": f"{frame['held_IE_se'].mean():.4f}",
            "accuracy": frame["accuracy_measure"].iloc[0],
            "fair": f"{frame['accuracy_fair'].mean():.4f}", "unconstrained": f"{frame['accuracy_unconstrained'].mean():.4f}",
            "FAIL unconstrained": _share(frame["unconstrained_status"] == "FAIL"),
            "seconds per rep": f"{frame['seconds'].median():.0f}", "load": f"{frame['loadavg'].mean():.1f}",
        })
    return pd.DataFrame(rows)


def run_verdicts(args) -> None:
    out = Path(args.out or f"benchmarks/results/repair_holdout_n{args.n}")
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(model, rep) for rep in range(args.reps) for model in args.models]
    todo = [task for task in tasks if not _path(out, *task).exists()]
    print(f"{len(tasks) - len(todo)} of {len(tasks)} replications saved before; running {len(todo)}", flush=True)
    started = time.time()

    # Processes, not threads: each replication fits forests and decompositions that hold the GIL in places.
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(replicate, task, args.n): task for task in todo}
        for future in as_completed(futures):
            task, record = futures[future], future.result()
            atomic_write_text(json.dumps(record), _path(out, *task))
            print(f"{task[0]} rep {task[1]}: held out {record['held_status']}, in sample {record['in_status']}, "
                  f"{record['seconds']:.0f} s ({time.time() - started:.0f} s in all)", flush=True)
    records = pd.DataFrame([json.loads(_path(out, *task).read_text()) for task in tasks if _path(out, *task).exists()])
    print(verdicts_table(records).to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    twins = sub.add_parser("twins")
    twins.add_argument("--n", type=int, nargs="+", default=[2000, 8000])
    twins.add_argument("--engines", nargs="+", default=["forest", "linear"])
    twins.add_argument("--reps", type=int, default=5)
    twins.add_argument("--seed", type=int, default=0)
    gap = sub.add_parser("se-gap")
    gap.add_argument("--n", type=int, default=8000)
    gap.add_argument("--reps", type=int, default=6)
    gap.add_argument("--seed", type=int, default=0)
    verdicts = sub.add_parser("verdicts")
    verdicts.add_argument("--reps", type=int, default=100)
    verdicts.add_argument("--n", type=int, default=2000)
    verdicts.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    verdicts.add_argument("--jobs", type=int, default=2)
    verdicts.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.what == "twins":
        print(twins_table(args.n, args.engines, args.seed, args.reps).to_string(index=False, float_format=lambda v: f"{v:+.2f}"))
    elif args.what == "se-gap":
        print(se_gap_table(args.n, args.reps, args.seed).to_string(index=False, float_format=lambda v: f"{v:+.4f}"))
    else:
        run_verdicts(args)


if __name__ == "__main__":
    main()
