"""``fairpath decompose``: the causal decomposition of Y and predictors from a CSV/Parquet file."""

from __future__ import annotations

from pathlib import Path

from fairpath.cli._common import (
    add_data_arguments,
    add_parallel_arguments,
    add_predictor_argument,
    add_sensitivity_argument,
    check_sensitivity_flags,
    add_sfm_arguments,
    declared_type,
    parallel_options,
    predictor_columns,
    read_data,
    sensitivity_of,
    sfm_from_args,
    signature_default,
)


def register(subparsers) -> None:
    # The choices and defaults are the estimator's own (importing it here costs about a second of --help).
    from fairpath.causal import METHODS, PRESETS, decompose

    def default(name):
        return signature_default(decompose, name)

    parser = subparsers.add_parser(
        "decompose",
        description="Estimate TV = Ctf-DE − Ctf-IE − Ctf-SE (and ETT, NDE, NIE, Exp-SE) of X on Y and predictors, for "
        "--x0 → --x1 or, without --x1, for every other level of X against --x0 (or every pair, --contrasts pairs) with "
        "simultaneous intervals; --out DIR writes report.html, result.json and result.csv.",
    )
    add_data_arguments(parser)
    add_sfm_arguments(parser, levels=True)
    add_predictor_argument(parser)
    parser.add_argument("--method", default=default("method"), choices=METHODS, help="estimator")
    parser.add_argument("--learner", default=None, choices=PRESETS,
                        help="nuisance learner (default: stack for debiasing, rf for medDML)")
    parser.add_argument("--folds", "--n-folds", type=declared_type("--folds", decompose, "n_folds"), default=default("n_folds"),
                        help="cross-fitting folds")
    parser.add_argument("--seed", type=declared_type("--seed", decompose, "seed"), default=default("seed"), help="seed of the folds and the learners")
    parser.add_argument("--level", type=declared_type("--level", decompose, "level"), default=default("level"), help="confidence level")
    parser.add_argument("--eps", type=declared_type("--eps", decompose, "eps"), default=default("eps"),
                        help="positivity bound: propensities are clipped to [eps, 1-eps] and such rows counted")
    parser.add_argument("--trim", action="store_const", const=True, default=default("trim"),
                        help="leave rows with extreme propensities out (default: only with medDML, as faircause)")
    parser.add_argument("--bootstrap", type=declared_type("--bootstrap", decompose, "n_boot"), default=default("n_boot"),
                        help="debiasing: percentile CIs from N resamples (0: normal CIs from the influence function)")
    parser.add_argument("--nboot1", type=declared_type("--nboot1", decompose, "nboot1"), default=default("nboot1"), help="medDML: refits on resampled rows")
    parser.add_argument("--nboot2", type=declared_type("--nboot2", decompose, "nboot2"), default=default("nboot2"), help="medDML: resamples per refit")
    parser.add_argument("--n-rep", type=declared_type("--n-rep", decompose, "n_rep"), default=default("n_rep"),
                        help="debiasing: cross-fitting splits, aggregated by their mean (DoubleML's n_rep); "
                             "auto (default): 5 below 5000 rows or with a level of X below 2000 rows, else 1")
    add_parallel_arguments(parser, "cross-fitting folds and splits, medDML refits and bootstrap blocks (debiasing then "
                           "reads the table as partitions, which stay on the Dask workers)", threads=False)
    parser.add_argument("--out", type=Path, help="write report.html, result.json and result.csv into this folder "
                        "(default: not written)")
    parser.add_argument("--json", type=Path, help="write the results as JSON here (default: not written)")
    parser.add_argument("--plot", type=Path, help="write the bar chart (PNG) here (default: not drawn)")
    add_sensitivity_argument(parser)
    parser.set_defaults(func=run)


def run(args) -> int:
    from fairpath._exceptions import FairpathInputError
    from fairpath._io import save_figure
    from fairpath._stats import format_p
    from fairpath._parallel import task_client
    from fairpath._validation import check_figure_file, check_output_dir, check_output_file
    from fairpath.causal import decompose
    from fairpath.report import provenance

    if args.json is not None:
        check_output_file(args.json, "--json file", inputs=[args.data])
    if args.plot is not None:
        check_figure_file(args.plot, "--plot file", inputs=[args.data])
    if args.json is not None and args.plot is not None and Path(args.json).resolve() == Path(args.plot).resolve():
        raise FairpathInputError(f"--json and --plot name the same file {str(args.json)!r}: the figure would replace the results; give two files")
    if args.out is not None:
        check_output_dir(args.out, "--out folder")
    check_sensitivity_flags(args, args.method, args.bootstrap)
    with task_client(**parallel_options(args)) as where:
        # On a Dask cluster the debiasing method reads the table as partitions, which stay on the workers.
        data = read_data(args, partitioned=bool(where) and args.method == "debiasing")
        data, sfm = sfm_from_args(args, data)
        predictors = predictor_columns(args.predictor)
        result = decompose(
            data, sfm, predictors, method=args.method, learner=args.learner, n_folds=args.folds, seed=args.seed,
            level=args.level, eps=args.eps, trim=args.trim, n_boot=args.bootstrap, nboot1=args.nboot1,
            nboot2=args.nboot2, n_rep=args.n_rep, contrasts=args.contrasts, progress=not args.quiet, provenance=provenance(inputs=[args.data], seed=args.seed),
            **where,
        )
    # every file is written before anything is printed: a reader that closes stdout early (| head) loses no file
    written = []
    if args.json:
        result.to_json(args.json)
        written.append(f"results written to {args.json}")
    if args.out:
        paths = result.save(args.out)
        written.append(f"wrote {paths['report']}, {paths['result']} and {paths['table']}")
    if args.plot:
        save_figure(result.plot(), args.plot, dpi=120, bbox_inches="tight")
        written.append(f"figure written to {args.plot}")
    bounds = sensitivity_of(result, args, data)
    if bounds is not None and args.out:
        paths = bounds.save(Path(args.out) / "sensitivity")
        written.append(f"wrote the sensitivity bounds: {paths['report']}, {paths['result']} and {paths['table']}")
    print("\n".join(result.headline()))
    print(result.summary())
    frame = result.to_frame()
    if result.single:  # its contrast, simultaneous interval and adjusted p repeat the marginal ones: not printed twice
        frame = frame.drop(columns=["contrast", "simultaneous_low", "simultaneous_high", "p_simultaneous"])
    p_columns = [c for c in ("p_value", "p_simultaneous") if c in frame]  # a p is never printed as 0.0000
    frame[p_columns] = frame[p_columns].map(format_p)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if bounds is not None:
        print(bounds.summary())
    for line in written:
        print(line)
    return 0
