"""``fairpath audit`` (decomposition + predictive parity + Business Necessity Cookbook, as a report)
and ``fairpath demo`` (the whole audit on data that ships with the package)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairpath._vocabulary import BN_HELP
from fairpath.cli import print_note
from fairpath.cli._common import (
    X_INTERSECTION_HELP, add_level_arguments, add_fail_on_argument, add_parallel_arguments, add_predictor_argument, add_reading_arguments,
    add_sensitivity_argument, comma_list, declared_type,
    exit_status, parallel_options, predictor_columns, seed_type,
)

COMPAS_PREDICTORS = {
    "northpointe": "Northpointe's COMPAS decision: decile score > 4 (high risk)",
    "risk_score": "Northpointe's decile score / 10, as a score",
    "pp_baseline": "predictive-parity baseline (the paper's Ŷ^PP): an unconstrained learner on X, Z, W, thresholded once "
                   "so that it selects Northpointe's share of defendants",
    "sp_baseline": "statistical-parity baseline (the paper's Ŷ^SP): the same scores with one threshold per group, each group "
                   "selected at Northpointe's rate",
}
FAIR_PREDICTOR = ("the causally fair predictor Ŷ^FP for BN = {SE}: data adaptation keeps Z (age, sex) and replaces W by its fair "
                  "twin, a forest trained on the twins (never on race) gives out-of-bag scores; measured on the twins, as in the paper")

# Flag -> AuditConfig key, for the flags whose name differs from the key.
_FLAG_KEYS = {"predictor": "predictors", "folds": "n_folds", "bins": "n_bins", "bootstrap": "n_boot"}


def register(subparsers) -> None:
    # Flags default to None so that a --config file's values stand unless a flag is given; the help
    # shows the settings' own defaults (the AuditConfig dataclass).
    from fairpath.causal import METHODS, PRESETS
    from fairpath.parity import AuditConfig, audit

    defaults = AuditConfig()

    def default(key: str) -> str:
        return f"(default: {getattr(defaults, key)}; config key {key})"

    parser = subparsers.add_parser(
        "audit",
        description="Decompose the disparity of the outcome and of each predictor into direct, indirect and "
        "spurious effects, measure predictive parity, and judge each predictor with the Business Necessity "
        "Cookbook. Writes OUT/report.html, OUT/result.json, OUT/result.csv and CSV tables. Every flag can also be given in "
        f"a TOML/YAML --config file (keys: {', '.join(AuditConfig.keys())}); flags win over the file.",
    )
    parser.add_argument("data", nargs="?", help="CSV or Parquet file (config key data)")
    parser.add_argument("--config", help="TOML or YAML file holding any of the settings")
    parser.add_argument("--x", help="protected attribute column" + X_INTERSECTION_HELP)
    parser.add_argument("--x0", help="baseline (reference) level of X")
    parser.add_argument("--x1", help="comparison level of X (default: every other level against --x0, see --contrasts)")
    add_level_arguments(parser, contrasts_default=None)
    parser.add_argument("--z", type=comma_list, help="confounders, comma-separated (default: none)")
    parser.add_argument("--w", type=comma_list, help="mediators, comma-separated (default: none)")
    parser.add_argument("--y", help="outcome column")
    add_predictor_argument(parser)
    parser.add_argument("--bn", help=f"business-necessity set: {BN_HELP}")
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--empty-category", type=comma_list, metavar="COLUMN[,COLUMN]",
                        help="columns where an empty cell is a real category, not a missing value")
    add_reading_arguments(parser)
    parser.add_argument("--method", choices=METHODS, help=f"estimator {default('method')}")
    parser.add_argument("--learner", choices=PRESETS, help="nuisance learner (default: stack for debiasing, rf for medDML)")
    parser.add_argument("--folds", "--n-folds", type=declared_type("--folds", audit, "n_folds"),
                        help=f"cross-fitting folds {default('n_folds')}")
    parser.add_argument("--seed", type=declared_type("--seed", audit, "seed"), help=f"seed of every random step {default('seed')}")
    parser.add_argument("--level", type=declared_type("--level", audit, "level"), help=f"confidence level {default('level')}")
    parser.add_argument("--alpha", type=declared_type("--alpha", audit, "alpha"), help=f"family-wise error level of the Cookbook tests {default('alpha')}")
    parser.add_argument("--margin", type=declared_type("--margin", audit, "margin"),
                        help="equivalence margin δ: certify |effect difference| < δ (default: none, no equivalence test; "
                        "config key margin)")
    parser.add_argument("--bins", type=declared_type("--bins", audit, "n_bins"), help=f"quantile bins of the predictor for predictive parity {default('n_bins')}")
    parser.add_argument("--bootstrap", type=declared_type("--bootstrap", audit, "n_boot"),
                        help=f"bootstrap draws for predictive parity CIs {default('n_boot')}")
    parser.add_argument("--eps", type=declared_type("--eps", audit, "eps"), help=f"positivity threshold for propensities {default('eps')}")
    parser.add_argument("--trim", action="store_const", const=True,
                        help=f"drop rows with propensities outside [eps, 1-eps] {default('trim')}")
    parser.add_argument("--nboot1", type=declared_type("--nboot1", audit, "nboot1"), help=f"medDML refits on resampled rows {default('nboot1')}")
    parser.add_argument("--n-rep", type=declared_type("--n-rep", audit, "n_rep"),
                        help=f"debiasing: cross-fitting splits, aggregated by their mean; auto: 5 below 5000 rows or with a level of X below 2000 rows, else 1 {default('n_rep')}")
    add_parallel_arguments(parser, "medDML refits and cross-fitting splits", threads=False)
    add_fail_on_argument(parser, "any predictor's Cookbook verdict is FAIL")
    add_sensitivity_argument(parser)
    parser.set_defaults(func=_run_audit)


def register_demo(subparsers) -> None:
    demo = subparsers.add_parser(
        "demo",
        description="Audit predictors with known verdicts on a synthetic SFM whose true effects are printed, then "
        "Northpointe's COMPAS score and the paper's PP/SP baselines (BN = {SE}); writes a report per data set "
        "under OUT. COMPAS is skipped with a note when its data file is absent.",
    )
    demo.add_argument("--out", default="fairpath-demo", help="output folder")
    demo.add_argument("--seed", type=seed_type, default=0, help="seed of every random step")
    demo.set_defaults(func=_run_demo)


def _config_from_args(args: argparse.Namespace):
    from fairpath.parity import AuditConfig, load_config

    config = load_config(args.config) if args.config else AuditConfig()
    flags = {}
    for name, value in vars(args).items():
        if name in {"config", "func", "command", "quiet", "scheduler", "workers", "fail_on", "sensitivity", "benchmark"}:  # not audit()'s
            continue
        if name == "predictor":
            value = predictor_columns(value) or None
        flags[_FLAG_KEYS.get(name, name)] = value
    return config.updated(flags).require()


def _print_verdicts(result, paths: dict) -> None:
    print("\n".join(result.verdict_lines()))
    print(result.cookbook.summary())
    for note in result.notes:
        print_note(note, file=sys.stdout)
    print(f"report: {paths['report']}")
    print(f"results: {paths['result']}")


def _run_audit(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.cli._common import check_sensitivity_flags, comma_list, protected_attribute, read_table, sensitivity_of, sfm_for
    from fairpath.parity import audit

    config = _config_from_args(args)
    check_output_dir(config.out, "output folder (--out)")
    check_sensitivity_flags(args, config.method)
    data = read_table(config.data, config.empty_category, na_values=config.na_values, categorical=config.categorical,
                      levels=comma_list(config.x))
    data, x = protected_attribute(data, config.x, merge=config.merge, drop_levels=config.drop_levels)
    sfm = sfm_for(data, x=x, x0=config.x0, x1=config.x1, z=config.z, w=config.w, y=config.y, source=repr(config.data))
    from fairpath.report import provenance

    result = audit(data, sfm, config.predictors, config.bn, provenance=provenance(inputs=[config.data], seed=config.seed),
                   progress=not args.quiet, **parallel_options(args), **config.audit_options())
    paths = result.save(config.out)
    bounds = sensitivity_of(result, args, data)
    if bounds is not None:
        paths["sensitivity"] = bounds.save(Path(config.out) / "sensitivity")["report"]
    _print_verdicts(result, paths)
    if bounds is not None:
        print(bounds.summary())
        print(f"sensitivity: {paths['sensitivity']}")
    return exit_status(args.fail_on, [f"{predictor}: FAIL" for predictor, status in result.status.items() if status == "FAIL"])


def _run_demo(args: argparse.Namespace) -> int:
    from fairpath._exceptions import FairpathInputError
    from fairpath._validation import check_output_dir
    from fairpath.datasets import load_compas, make_binary_sfm
    from fairpath.parity import ORACLE_SATISFIES, audit, baseline_predictors, oracle_predictors
    from fairpath.repair import FairPredictor
    from fairpath.report import provenance

    out = check_output_dir(args.out, "--out folder")
    print("[1/3] synthetic SFM with known effects (binary Y, n = 3000, logistic learner); BN = {SE}, "
          "equivalence margin 0.05", file=sys.stderr)
    sample = make_binary_sfm(3000, seed=args.seed)
    predictors = oracle_predictors(sample, seed=args.seed)
    truth = ", ".join(f"{k} {sample.truth[k]:+.3f}" for k in ("tv", "ctfde", "ctfie", "ctfse"))
    # The model's mechanisms are logistic, so the linear learner is correctly specified here (and fast).
    synthetic = audit(sample.data.join(predictors), sample.sfm, list(predictors.columns), "SE", margin=0.05,
                      learner="linear", seed=args.seed, title=f"fairpath demo: synthetic SFM (true effects of Y: {truth})")
    print(f"true effects of Y: {truth}")
    print("each predictor satisfies exactly one BN set: "
          + "; ".join(f"{p}: {{{', '.join(bn)}}}" if bn else f"{p}: ∅" for p, bn in ORACLE_SATISFIES.items()))
    _print_verdicts(synthetic, synthetic.save(out / "synthetic"))

    try:
        compas = load_compas()
    except FairpathInputError as error:
        print(f"[2/3] COMPAS skipped: {error}", file=sys.stderr)
        return 0
    print("[2/3] COMPAS (paper's preparation): Northpointe's score and the PP/SP baselines; BN = {SE}", file=sys.stderr)
    data = compas.data.join(baseline_predictors(compas.data, compas.sfm, selection_rate=compas.data["northpointe"].mean(), seed=args.seed))
    data = data.rename(columns={"pp": "pp_baseline", "sp": "sp_baseline"}).assign(risk_score=data["decile_score"] / 10)
    result = audit(data, compas.sfm, ["northpointe", "risk_score", "pp_baseline", "sp_baseline"], "SE", seed=args.seed,
                   title="fairpath demo: COMPAS, the court example (BN = {SE})", descriptions=COMPAS_PREDICTORS,
                   provenance=provenance(inputs=[compas.source], seed=args.seed))
    _print_verdicts(result, result.save(out / "compas"))

    print("[3/3] COMPAS: the causally fair predictor Ŷ^FP for BN = {SE} (adaptation keeps Z, removes the direct and "
          "indirect effects), audited on its fair twins as in the paper", file=sys.stderr)
    fair = FairPredictor(compas.sfm, bn="SE", random_state=args.seed).fit(compas.data[compas.sfm.columns])
    result = fair.audit(seed=args.seed, title="fairpath demo: COMPAS, the causally fair predictor Ŷ^FP (BN = {SE}), on its fair twins",
                        descriptions={"fair_predictor": FAIR_PREDICTOR}, provenance=provenance(inputs=[compas.source], seed=args.seed))
    _print_verdicts(result, result.save(out / "compas-fair"))
    return 0
