"""``fairpath audit`` (decomposition + predictive parity + Business Necessity Cookbook, as a report)
and ``fairpath demo`` (the whole audit on data that ships with the package)."""

from __future__ import annotations

import argparse
import sys

from fairpath.cli._common import comma_list, int_at_least, seed_type

# Flag -> AuditConfig key, for the flags whose name differs from the key.
_FLAG_KEYS = {"predictor": "predictors", "folds": "n_folds", "bins": "n_bins", "boot": "n_boot"}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="audit predictors: causal decomposition, predictive parity and business-necessity verdicts",
        description="Decompose the disparity of the outcome and of each predictor into direct, indirect and "
        "spurious effects, measure predictive parity, and judge each predictor with the Business Necessity "
        "Cookbook. Writes OUT/report.html, OUT/results.json and CSV tables. Every flag can also be given in "
        "a TOML/YAML --config file (keys: data, x, x0, x1, z, w, y, predictors, bn, out, method, learner, "
        "n_folds, seed, level, alpha, margin, n_bins, n_boot, eps, trim, nboot1, empty_category); flags win over the file.",
    )
    parser.add_argument("data", nargs="?", help="CSV or Parquet file")
    parser.add_argument("--config", help="TOML or YAML file holding any of the settings")
    parser.add_argument("--x", help="protected attribute column")
    parser.add_argument("--x0", help="baseline level of X")
    parser.add_argument("--x1", help="comparison level of X")
    parser.add_argument("--z", type=comma_list, help="confounders, comma-separated")
    parser.add_argument("--w", type=comma_list, help="mediators, comma-separated")
    parser.add_argument("--y", help="outcome column")
    parser.add_argument("--predictor", nargs="+", action="extend", help="predictor column(s)")
    parser.add_argument("--bn", help="business-necessity set: pathways among DE, IE, SE, comma-separated; 'none' for ∅")
    parser.add_argument("--out", help="output folder")
    parser.add_argument("--empty-category", type=comma_list, metavar="COLUMN[,COLUMN]",
                        help="columns where an empty cell is a real category, not a missing value")
    parser.add_argument("--method", choices=("debiasing", "medDML"), help="estimator (default debiasing)")
    parser.add_argument("--learner", help="nuisance learner: stack, gbm, rf or linear")
    parser.add_argument("--folds", type=int_at_least(2, "--folds"), help="cross-fitting folds (default 5)")
    parser.add_argument("--seed", type=seed_type, help="seed of every random step (default 0)")
    parser.add_argument("--level", type=float, help="confidence level (default 0.95)")
    parser.add_argument("--alpha", type=float, help="family-wise error level of the Cookbook tests (default 0.05)")
    parser.add_argument("--margin", type=float, help="equivalence margin δ: certify |effect difference| < δ")
    parser.add_argument("--bins", type=int_at_least(2, "--bins"), help="quantile bins of the predictor for predictive parity (default 10)")
    parser.add_argument("--boot", type=int_at_least(2, "--boot"), help="bootstrap draws for predictive parity CIs (default 200)")
    parser.add_argument("--eps", type=float, help="positivity threshold for propensities (default 0.01)")
    parser.add_argument("--trim", action="store_const", const=True, help="drop rows with propensities outside [eps, 1-eps]")
    parser.add_argument("--nboot1", type=int_at_least(1, "--nboot1"), help="medDML refits on resampled rows (default 1)")
    parser.set_defaults(func=_run_audit)

    demo = subparsers.add_parser(
        "demo",
        help="run the whole audit on shipped data (a synthetic SFM with known effects, and COMPAS) and write reports",
    )
    demo.add_argument("--out", default="fairpath-demo", help="output folder (default: %(default)s)")
    demo.add_argument("--seed", type=seed_type, default=0, help="seed (default: %(default)s)")
    demo.set_defaults(func=_run_demo)


def _config_from_args(args: argparse.Namespace):
    from fairpath.parity import AuditConfig, load_config

    config = load_config(args.config) if args.config else AuditConfig()
    flags = {}
    for name, value in vars(args).items():
        if name in {"config", "func", "command", "quiet"}:
            continue
        flags[_FLAG_KEYS.get(name, name)] = value
    return config.updated(flags).require()


def _print_verdicts(result, paths: dict) -> None:
    print(result.cookbook_)
    for note in result.notes_:
        print(f"note: {note}")
    print(f"report: {paths['report']}")
    print(f"results: {paths['results']}")


def _run_audit(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.causal import SFM, resolve_level
    from fairpath.cli._common import read_table
    from fairpath.parity import audit

    config = _config_from_args(args)
    check_output_dir(config.out, "output folder (--out)")
    data = read_table(config.data, config.empty_category)
    if config.x not in data.columns:
        from fairpath._exceptions import FairpathInputError

        raise FairpathInputError(f"protected attribute column {config.x!r} not found in {config.data!r}; columns: {list(data.columns)}")
    sfm = SFM(x=config.x, x0=resolve_level(data[config.x], config.x0), x1=resolve_level(data[config.x], config.x1),
              z=config.z, w=config.w, y=config.y)
    result = audit(data, sfm, config.predictors, config.bn, progress=not args.quiet, **config.audit_options())
    _print_verdicts(result, result.save(config.out))
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from fairpath._exceptions import FairpathInputError
    from fairpath._validation import check_output_dir
    from fairpath.datasets import load_compas, make_binary_sfm
    from fairpath.parity import ORACLE_SATISFIES, audit, baseline_predictors, oracle_predictors

    out = check_output_dir(args.out, "--out folder")
    print("[1/2] synthetic SFM with known effects (binary Y, n = 3000, logistic learner); BN = {SE}, "
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
        print(f"[2/2] COMPAS skipped: {error}", file=sys.stderr)
        return 0
    print("[2/2] COMPAS (paper's preparation): Northpointe's score and the PP/SP baselines; BN = {SE}", file=sys.stderr)
    data = compas.data.join(baseline_predictors(compas.data, compas.sfm, selection_rate=compas.data["northpointe"].mean(), seed=args.seed))
    data = data.rename(columns={"pp": "pp_baseline", "sp": "sp_baseline"}).assign(risk_score=data["decile_score"] / 10)
    result = audit(data, compas.sfm, ["northpointe", "risk_score", "pp_baseline", "sp_baseline"], "SE", seed=args.seed,
                   title="fairpath demo: COMPAS, the court example (BN = {SE})")
    _print_verdicts(result, result.save(out / "compas"))
    return 0
