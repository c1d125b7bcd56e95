"""Every level of X in one run against one binary contrast on the same rows: Census 2018 with X = race.

    python benchmarks/bench_levels.py [--census PATH] [--repeats 1] [--measures main | all] [--rows N]
    python benchmarks/bench_levels.py --scored census_scored.csv

``--scored PATH`` instead writes the Census table with a predictor column ``score`` to audit
(``fairpath audit PATH --x race ...``): a race-blind LightGBM regression of salary on every other column
(Z and W), its 5-fold out-of-fold predictions, seed 0.

In this process, on the Census 2018 table (204,309 rows; ``--rows`` takes a seeded subsample): the SFM of
faircause's census projection with race as X (Z = age, sex, hispanic_origin, citizenship, nativity,
economic_region; W = the nine work and family columns; Y = salary). The baseline is one binary contrast on all
rows: X = white against not white (``race_binary``). The run under test is every race level against white
(``SFM(x1=None)``: 6 contrasts, their outcome regressions fitted once, a propensity per contrast), with the same
settings (debiasing, default learner and folds, seed 0). Each is timed ``--repeats`` times, alternating; the
script prints the median seconds of each and their ratio (target ≤ 1.5), the load average before and after, and
the TV of each contrast with its simultaneous interval. ``--measures main`` (default) estimates TV, Ctf-DE,
Ctf-IE, Ctf-SE (no nested means); ``all`` every measure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

from fairpath.causal import SFM, decompose
from fairpath.datasets import GOV_CENSUS_SFM, load_gov_census
from fairpath.reproduce._paper import subsample

ROOT = Path(__file__).resolve().parents[1]
MAIN = ("tv", "ctfde", "ctfie", "ctfse")


def census_race_sfm(x1) -> SFM:
    """faircause's census projection with race as X (sex moves into Z)."""
    z = [c for c in GOV_CENSUS_SFM.z if c != "race"] + ["sex"]
    return SFM(x="race" if x1 is None else "race_binary", x0="white", x1=x1, z=z, w=GOV_CENSUS_SFM.w, y="salary")


def write_scored(data, path: Path) -> None:
    """The table with ``score``: out-of-fold predictions of salary from Z and W (race and sex left out)."""
    import lightgbm as lgb
    from sklearn.model_selection import cross_val_predict

    from fairpath._encoding import CategoryEncoder

    sfm = census_race_sfm(None)
    columns = [c for c in (*sfm.z, *sfm.w) if c != "sex"]
    features = CategoryEncoder(columns, max_one_hot_levels=0).fit_transform(data[columns])
    model = lgb.LGBMRegressor(n_estimators=200, num_leaves=31, verbose=-1, random_state=0, n_jobs=2)
    score = cross_val_predict(model, features, data["salary"].to_numpy(float), cv=5)
    data.assign(score=score).to_csv(path, index=False)
    print(f"wrote {path}: {len(data)} rows with a race- and sex-blind score (out-of-fold LightGBM of salary on {len(columns)} columns)")


def timed(data, sfm, measures) -> tuple[float, object]:
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(data, sfm, seed=0, measures=measures)
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--census", type=Path, default=ROOT.parent / "shared" / "data" / "gov_census.csv")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--measures", choices=("main", "all"), default="main")
    parser.add_argument("--rows", type=int, default=None, help="a seeded subsample of this many rows (default: all)")
    parser.add_argument("--scored", type=Path, default=None, help="write the table with a race-blind score here, then stop")
    args = parser.parse_args()
    data = load_gov_census(args.census).data
    if args.scored:
        write_scored(data, args.scored)
        return
    if args.rows:
        data = subsample(data, args.rows, 0)
    data = data.assign(race_binary=data["race"].where(data["race"] == "white", "not white"))
    measures = MAIN if args.measures == "main" else None
    print(f"Census 2018: {len(data)} rows; race levels {data['race'].value_counts().to_dict()}; load {os.getloadavg()[0]:.2f}")
    times = {"binary": [], "levels": []}
    results = {}
    for _ in range(args.repeats):
        for name, sfm in (("binary", census_race_sfm("not white")), ("levels", census_race_sfm(None))):
            seconds, results[name] = timed(data, sfm, measures)
            times[name].append(seconds)
            print(f"  {name}: {seconds:.1f} s", flush=True)
    binary, levels = (statistics.median(times[name]) for name in ("binary", "levels"))
    print(f"binary contrast (white vs not white): {binary:.1f} s; every level ({len(results['levels'].contrasts)} contrasts): "
          f"{levels:.1f} s; ratio {levels / binary:.2f} (target ≤ 1.5); load {os.getloadavg()[0]:.2f}")
    tv = results["levels"].simultaneous("tv")
    for contrast in results["levels"].contrasts:
        e = results["levels"].estimate("tv", contrast=contrast)
        print(f"  TV {contrast} vs white: {e.estimate:+.0f} (95% CI [{e.ci_low:+.0f}, {e.ci_high:+.0f}], simultaneous "
              f"[{tv[contrast][0]:+.0f}, {tv[contrast][1]:+.0f}])")


if __name__ == "__main__":
    main()
