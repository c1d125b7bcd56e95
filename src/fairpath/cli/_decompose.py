"""``fairpath decompose``: the causal decomposition of Y and predictors from a CSV/Parquet file."""

from __future__ import annotations

from pathlib import Path

from fairpath.cli._common import add_data_arguments, add_sfm_arguments, comma_list, int_at_least, read_table, seed_type, sfm_from_args


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "decompose", help="decompose TV into counterfactual direct, indirect and spurious effects",
        description="Estimate TV = Ctf-DE − Ctf-IE − Ctf-SE (and ETT, NDE, NIE, Exp-SE) of X on Y and predictors.",
    )
    add_data_arguments(parser)
    add_sfm_arguments(parser)
    parser.add_argument("--yhat", action="append", default=[], help="predictor column (repeat or comma-separate)")
    parser.add_argument("--method", default="debiasing", choices=["debiasing", "medDML"])
    parser.add_argument("--learner", default=None, choices=["stack", "gbm", "rf", "linear"],
                        help="nuisance learner (default: stack for debiasing, rf for medDML)")
    parser.add_argument("--folds", type=int_at_least(2, "--folds"), default=5, help="cross-fitting folds (default 5)")
    parser.add_argument("--seed", type=seed_type, default=0)
    parser.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    parser.add_argument("--eps", type=float, default=0.01,
                        help="positivity bound: propensities are clipped to [eps, 1-eps] and such rows counted (default 0.01)")
    parser.add_argument("--trim", action="store_const", const=True, default=None,
                        help="leave rows with extreme propensities out (default: only with medDML, as faircause)")
    parser.add_argument("--bootstrap", type=int_at_least(0, "--bootstrap"), default=0, help="debiasing: percentile CIs from N resamples")
    parser.add_argument("--nboot1", type=int_at_least(1, "--nboot1"), default=1, help="medDML: refits on resampled rows")
    parser.add_argument("--nboot2", type=int_at_least(1, "--nboot2"), default=100, help="medDML: resamples per refit")
    parser.add_argument("--json", type=Path, help="write the results as JSON here")
    parser.add_argument("--plot", type=Path, help="write the bar chart (PNG) here")
    parser.set_defaults(func=run)


def run(args) -> int:
    from fairpath._io import save_figure
    from fairpath._validation import check_output_file
    from fairpath.causal import decompose

    for path, what in ((args.json, "--json file"), (args.plot, "--plot file")):
        if path is not None:
            check_output_file(path, what)
    data = read_table(args.data, args.empty_category)
    sfm = sfm_from_args(args, data)
    predictors = [c for item in args.yhat for c in comma_list(item)]
    result = decompose(
        data, sfm, predictors, method=args.method, learner=args.learner, n_folds=args.folds, seed=args.seed,
        level=args.level, eps=args.eps, trim=args.trim, n_boot=args.bootstrap, nboot1=args.nboot1,
        nboot2=args.nboot2, progress=not args.quiet,
    )
    print(result.summary())
    print(result.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if args.json:
        result.to_json(args.json)
        print(f"results written to {args.json}")
    if args.plot:
        save_figure(result.plot(), args.plot, dpi=120, bbox_inches="tight")
        print(f"figure written to {args.plot}")
    return 0
