"""Coverage of the confidence intervals (95% unless --level) of the default decomposition on the synthetic SCMs.

    python benchmarks/study_coverage.py [--reps 200] [--n 2000] [--learner stack] [--n-rep auto | K]
        [--subject y | bayes | bayes-known] [--level 0.95] [--out DIR] [--jobs 2 | --scheduler tcp://HOST:8786 | --workers N]
    python benchmarks/study_coverage.py --grid [--table-only] [--grid-n 1000,3000] [--grid-learners default,gbm] [--reps 200]

Each replication draws a fresh sample, decomposes it (default learner unless --learner; only the
four measures studied, whose estimates do not depend on that: the nested means cancel) and records
whether each interval covers the true value, with its wall time and the load average; each
coverage is printed with its exact 95% Monte Carlo interval (mc_low, mc_high). Results are
saved atomically one file per (model, replication) under DIR (default
benchmarks/results/coverage_n{N}_{learner}), so an interrupted run resumes. Replications run on
threads, or as tasks on a Dask cluster (the records come back and are written here, so the workers
need no shared disk); each is seeded by its number, so the figures are the same. The table covers
the replications 0 … reps − 1: `--reps 200` on a folder of 1000 prints the first 200 without running any.

``--level`` checks the intervals at another level, computed on request after the fit at 0.95
(``CausalDecomposition.confint(level)``), as a user asks for them; its folder gets ``_level<L>``.

``--models multilevel_k4`` studies a protected attribute with four levels (``make_multilevel_sfm``; ``multilevel_k2``,
``multilevel_k3`` and a binary Y: ``multilevel_k3_binary`` …): every
level against the reference in one decomposition (``SFM(x1=None)``); each contrast's marginal interval is
checked against its truth (rows ``ctfde[1]`` ...), and the simultaneous intervals of each measure jointly
(rows ``ctfde[simultaneous]``: covered when every contrast's simultaneous interval covers its truth).

``--grid`` runs issue 43's grid of K-level cells, cheapest first, each resumable in its own folder as above: K = 2, 3, 4
levels, continuous and binary Y, n = 1,000, 3,000 and 10,000, the default learner and ``gbm`` (``--reps`` each); then, and
with ``--table-only`` without running anything, it prints one Markdown row per cell from the replications saved so far
(marginal coverage of each contrast and the simultaneous coverage, per measure, with the SD of z), and lists every
coverage outside [0.93, 0.97] with its exact Monte Carlo interval. ``--grid-n`` and ``--grid-learners`` narrow it.

``--subject`` picks what is decomposed: the outcome Y (default), or the noiseless Bayes predictor
ŷ = E[Y | X, Z, W] as a predictor column, whose true measures are Y's (the truth is computed from
that mean). ``bayes`` estimates ŷ's mean like any predictor's; ``bayes-known`` passes its function
(``decompose(predictor_functions=...)``), so μ(x, z, w) is exact.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd
from scipy.stats import binomtest
from tqdm import tqdm

from fairpath._parallel import run_tasks
from fairpath.causal import SFM, decompose
from fairpath.cli._common import declared_type
from fairpath.datasets import make_appendix_a2, make_binary_sfm, make_confounded_sfm, make_mixed_sfm, make_multilevel_sfm

MODELS = {"appendix_a2": make_appendix_a2, "binary_sfm": make_binary_sfm, "confounded_sfm": make_confounded_sfm,
          "mixed_sfm": make_mixed_sfm}
# Protected attributes with K levels, every level against the reference, continuous or binary Y: not in the
# default --models. name -> (levels, binary_outcome)
MULTILEVEL = {f"multilevel_k{k}{'_binary' if binary else ''}": (k, binary) for binary in (False, True) for k in (2, 3, 4)}
MEASURES = ("tv", "ctfde", "ctfie", "ctfse")
SUBJECTS = ("y", "bayes", "bayes-known")
FIRST_SEED = 10_000  # replication r draws its sample with seed FIRST_SEED + r


def _path(out: Path, model: str, rep: int) -> Path:
    return out / f"{model}_{rep:04d}.json"


def replicate(task: tuple[str, int], n: int, learner: str | None, n_rep: int | str = "auto", subject: str = "y",
              n_folds: int | str = "auto", level: float = 0.95, first_seed: int = FIRST_SEED) -> dict:
    model, rep = task
    if model in MULTILEVEL:
        return replicate_levels(task, n, learner, n_rep, n_folds, level, first_seed)
    sample = MODELS[model](n, seed=first_seed + rep)
    data, options, column = sample.data, {}, None
    if subject != "y":
        column = "y_bayes"
        data = data.assign(**{column: sample.outcome_mean(data)})
        options = {"predictors": [column]}
        if subject == "bayes-known":
            options["predictor_functions"] = {column: sample.outcome_mean}
    started = time.perf_counter()
    result = decompose(data, sample.sfm, seed=rep, learner=learner, n_rep=n_rep, n_folds=n_folds, n_jobs=1, measures=MEASURES,
                       **options)
    record = {"model": model, "rep": rep, "n_rep": result.settings["n_rep"], "seconds": time.perf_counter() - started,
              "loadavg": os.getloadavg()[0], "level": level}
    for measure in MEASURES:
        e = result.estimate(measure, column)
        truth = sample.truth[measure]
        low, high = e.confint(level)
        record[measure] = {"estimate": e.estimate, "se": e.se, "truth": truth, "covered": bool(low <= truth <= high)}
    return record


def replicate_levels(task: tuple[str, int], n: int, learner: str | None, n_rep, n_folds, level: float, first_seed: int = FIRST_SEED) -> dict:
    """One replication of a K-level model: each contrast's marginal interval, and the simultaneous intervals jointly."""
    model, rep = task
    levels, binary = MULTILEVEL[model]
    sample = make_multilevel_sfm(n, seed=first_seed + rep, levels=levels, binary_outcome=binary)
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    started = time.perf_counter()
    result = decompose(sample.data, sfm, seed=rep, learner=learner, n_rep=n_rep, n_folds=n_folds, n_jobs=1, measures=MEASURES)
    record = {"model": model, "rep": rep, "n_rep": result.settings["n_rep"], "seconds": time.perf_counter() - started,
              "loadavg": os.getloadavg()[0], "level": level}
    for measure in MEASURES:
        bounds = result.simultaneous(measure, level=level)
        joint = True
        for contrast in result.contrasts:
            e = result.estimate(measure, contrast=contrast)
            truth = sample.truth_for(0, int(contrast))[measure]
            low, high = e.confint(level)
            record[f"{measure}[{contrast}]"] = {"estimate": e.estimate, "se": e.se, "truth": truth, "covered": bool(low <= truth <= high)}
            joint &= bool(bounds[contrast][0] <= truth <= bounds[contrast][1])
        record[f"{measure}[simultaneous]"] = {"estimate": float("nan"), "se": float("nan"), "truth": float("nan"), "covered": joint}
    return record


def _measures_of(record: dict) -> list[str]:
    """The rows a record holds: the measures, or for a K-level model each contrast's and the simultaneous ones."""
    return [key for key in record if isinstance(record[key], dict)]


def _write(out: Path, record: dict) -> None:
    path = _path(out, record["model"], record["rep"])
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps(record))
    partial.replace(path)


def summarise(out: Path, models: list[str], reps: int) -> pd.DataFrame:
    """The table of the replications 0 … reps − 1 of ``models`` saved under ``out`` (a folder may hold more)."""
    rows = []
    for path in sorted(_path(out, m, r) for m in models for r in range(reps)):
        record = json.loads(path.read_text())
        for measure in _measures_of(record):
            rows.append({"model": record["model"], "measure": measure, "seconds": record.get("seconds", float("nan")),
                         "loadavg": record.get("loadavg", float("nan")), **record[measure]})
    frame = pd.DataFrame(rows)
    frame["error"] = frame["estimate"] - frame["truth"]
    frame["z"] = frame["error"] / frame["se"]
    table = frame.groupby(["model", "measure"], sort=False).agg(
        reps=("covered", "size"), coverage=("covered", "mean"), bias=("error", "mean"),
        sd_estimate=("estimate", "std"), mean_se=("se", "mean"), mean_z=("z", "mean"), sd_z=("z", "std"),
        seconds=("seconds", "mean"), loadavg=("loadavg", "mean"),
    )
    table["se_over_sd"] = table["mean_se"] / table["sd_estimate"]
    # A measure that the model's structure makes exact (ctfse with Z empty; the DE of a predictor
    # with a known function whose effect of X is the same on every row): zero-width intervals at
    # the truth, up to rounding in the last digits, are no test of coverage: shown as NaN, not as 1.
    table.loc[(table["sd_estimate"] < 1e-12) & (table["mean_se"] < 1e-12), "coverage"] = float("nan")
    # a simultaneous row has no single estimate: its coverage is that of the family
    simultaneous = table.index.get_level_values("measure").str.endswith("[simultaneous]")
    table.loc[simultaneous, "coverage"] = frame[frame["measure"].str.endswith("[simultaneous]")].groupby(
        ["model", "measure"], sort=False)["covered"].mean()
    table["mc_low"], table["mc_high"] = zip(*(_monte_carlo_interval(c, r) for c, r in zip(table["coverage"], table["reps"])))
    return table


def _monte_carlo_interval(coverage: float, reps: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 95% interval of a coverage seen in ``reps`` replications: the
    band [0.93, 0.97] is only about ±1.3 Monte Carlo SEs wide at 200, so a cell just outside it may
    still be consistent with 0.95."""
    if coverage != coverage:  # NaN: an exact measure, no test
        return float("nan"), float("nan")
    interval = binomtest(round(coverage * reps), reps).proportion_ci(0.95, method="exact")
    return interval.low, interval.high


GRID_N = (1000, 3000, 10_000)
GRID_LEARNERS = ("default", "gbm")
BAND = (0.93, 0.97)


def _folder(n: int, learner: str | None, n_rep="auto", subject: str = "y", level: float = 0.95, first_seed: int = FIRST_SEED) -> Path:
    """Where the replications of one setting are saved (so that a rerun resumes)."""
    suffix = (f"_rep{n_rep}" + ("" if subject == "y" else f"_{subject.replace('-', '_')}") + ("" if level == 0.95 else f"_level{level:g}")
              + ("" if first_seed == FIRST_SEED else f"_seeds{first_seed}"))
    return Path(__file__).parent / "results" / f"coverage_n{n}_{learner or 'default'}{suffix}"


def _run(out: Path, models: list[str], reps: int, shared: dict, *, jobs: int, scheduler=None, workers=None) -> None:
    """The replications 0 … reps − 1 of ``models`` not yet saved under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(m, r) for m in models for r in range(reps) if not _path(out, m, r).exists()]
    for _, record in tqdm(run_tasks(replicate, tasks, shared=shared, n_jobs=jobs, scheduler=scheduler, workers=workers),
                          total=len(tasks), desc=f"replications {out.name}"):
        _write(out, record)


def _saved_reps(out: Path, model: str, reps: int) -> int:
    """How many of the replications 0 … reps − 1 of ``model`` are saved, counted from 0 (the table uses those)."""
    return next((r for r in range(reps) if not _path(out, model, r).exists()), reps)


def grid_table(ns, learners, reps: int) -> str:
    """One Markdown row per grid cell with saved replications, then the coverages outside ``BAND``."""
    rows, outside = [], []
    for n in ns:
        for learner in learners:
            out = _folder(n, None if learner == "default" else learner)
            for model in MULTILEVEL:
                done = _saved_reps(out, model, reps)
                if not done:
                    continue
                table = summarise(out, [model], done).loc[model]
                cells = []
                for measure in MEASURES:
                    part = table[table.index.str.startswith(f"{measure}[")]
                    marginal = part[~part.index.str.endswith("[simultaneous]")]
                    text = ", ".join(f"{c:.3f}" for c in marginal["coverage"])
                    if len(marginal) > 1:
                        text += f"; sim. {part.loc[f'{measure}[simultaneous]', 'coverage']:.3f}"
                    cells.append(f"{text} (SD z {', '.join(f'{v:.2f}' for v in marginal['sd_z'])})")
                    outside += [f"n = {n}, {learner}, {model}, {name}: {row.coverage:.3f} [{row.mc_low:.3f}, {row.mc_high:.3f}]"
                                for name, row in part.iterrows() if not BAND[0] <= row.coverage <= BAND[1]]
                rows.append(f"| {n:,} | {learner} | `{model}` | {done} | " + " | ".join(cells) + " |")
    header = ("| n | learner | model | reps | TV | Ctf-DE | Ctf-IE | Ctf-SE |\n|---|---|---|---|---|---|---|---|\n")
    return header + "\n".join(rows) + "\n\nOutside [0.93, 0.97] (exact 95% Monte Carlo interval):\n" + "\n".join(
        f"- {line}" for line in outside)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--learner", default=None, help="a learner preset (default: decompose's default)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--n-rep", type=declared_type("--n-rep", decompose, "n_rep"), default="auto",
                        help="cross-fitting splits per replication (decompose's n_rep; default auto)")
    parser.add_argument("--folds", type=declared_type("--folds", decompose, "n_folds"), default="auto",
                        help="cross-fitting folds (default: decompose's auto)")
    parser.add_argument("--subject", choices=SUBJECTS, default="y", help="decompose Y, or the Bayes predictor (mean estimated or known)")
    parser.add_argument("--level", type=declared_type("--level", decompose, "level"), default=0.95,
                        help="confidence level of the intervals checked, computed on request from the fit at 0.95 (default 0.95)")
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED,
                        help=f"replication r draws its sample with seed FIRST_SEED + r (default {FIRST_SEED}; another gives fresh samples)")
    parser.add_argument("--jobs", type=int, default=2, help="threads (default 2)")
    parser.add_argument("--scheduler", default=None, help="run the replications on this Dask scheduler")
    parser.add_argument("--workers", type=int, default=None, help="run the replications on a local Dask cluster of N processes")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--grid", action="store_true", help="run issue 43's grid of K-level cells, then print its table")
    parser.add_argument("--table-only", action="store_true", help="with --grid: print the table of what is saved, run nothing")
    parser.add_argument("--grid-n", default=",".join(map(str, GRID_N)), help="the grid's sample sizes")
    parser.add_argument("--grid-learners", default=",".join(GRID_LEARNERS), help="the grid's learners (default = decompose's)")
    args = parser.parse_args()
    parallel = {"jobs": args.jobs, "scheduler": args.scheduler, "workers": args.workers}
    started = time.perf_counter()
    if args.grid:
        ns, learners = [int(n) for n in args.grid_n.split(",")], args.grid_learners.split(",")
        if not args.table_only:
            for n in ns:
                for learner in learners:
                    learner = None if learner == "default" else learner
                    _run(_folder(n, learner), list(MULTILEVEL), args.reps,
                         {"n": n, "learner": learner, "n_rep": "auto", "subject": "y", "n_folds": "auto", "level": 0.95}, **parallel)
        print(grid_table(ns, learners, args.reps))
        print(f"wall time {time.perf_counter() - started:.0f} s")
        return
    args.out = args.out or _folder(args.n, args.learner, args.n_rep, args.subject, args.level, args.first_seed)
    models = args.models.split(",")
    _run(args.out, models, args.reps, {"n": args.n, "learner": args.learner, "n_rep": args.n_rep, "subject": args.subject,
                                       "n_folds": args.folds, "level": args.level, "first_seed": args.first_seed}, **parallel)
    table = summarise(args.out, models, args.reps)
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"wall time {time.perf_counter() - started:.0f} s")
    (args.out / "summary.csv").write_text(table.to_csv())


if __name__ == "__main__":
    main()
