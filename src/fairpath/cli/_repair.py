"""``fairpath repair`` (fair twins and a fair predictor for a BN set) and ``fairpath frontier`` (Figure 6)."""

from __future__ import annotations

import argparse

from fairpath.cli._common import (
    add_data_arguments, add_parallel_arguments, add_sfm_arguments, comma_list, int_at_least, parallel_options, read_table, seed_type,
    sfm_from_args,
)


def _add_shared_arguments(parser: argparse.ArgumentParser) -> None:
    add_data_arguments(parser)
    add_sfm_arguments(parser)
    parser.add_argument("--engine", default="forest", choices=["forest", "linear"], help="conditional quantile engine (default: %(default)s)")
    parser.add_argument("--reference", default="x1", choices=["x0", "x1"],
                        help="group whose mechanisms the fair twins follow (default: %(default)s, matching the effects' conventions)")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed (default: %(default)s)")
    parser.add_argument("--out", required=True, help="output folder")


def register(subparsers) -> None:
    repair = subparsers.add_parser(
        "repair",
        help="fair twins (causal data adaptation) and a fair predictor for a BN set",
        description="Adapt the data so that only the pathways of the BN set remain (SE in BN keeps Z, IE in BN keeps W), "
        "train a predictor on the fair twins and write adapted data, twins and out-of-fold scores to OUT.",
    )
    _add_shared_arguments(repair)
    repair.add_argument("--bn", default="", help="business-necessity set among IE,SE (default: empty)")
    repair.add_argument("--resolving", default=None, help="resolving columns, comma separated (instead of --bn)")
    repair.add_argument("--graph", default=None, help="edge list CSV (from,to[,kind]); default: the SFM graph")
    repair.add_argument("--test", default=None, help="new rows to transform with the fitted adaptation")
    repair.add_argument("--constrained", action="store_true", help="also fit the constrained-learning predictor (lambda path)")
    repair.set_defaults(func=_run_repair)

    front = subparsers.add_parser(
        "frontier",
        help="SPM / iPPM / AUC frontier across BN sets (the paper's Figure 6)",
        description="For each BN set (named by resolving variables: none, Z, W, ZW) and seed: adapt, learn, score "
        "out of fold; report mean and sd of SPM, iPPM, AUC. Resumable: finished runs are kept in OUT/runs.csv.",
    )
    _add_shared_arguments(front)
    front.add_argument("--bn-sets", default="none,Z,W,ZW", help="BN sets by resolving variables (default: %(default)s)")
    front.add_argument("--repeats", type=int_at_least(1, "--repeats"), default=3, help="seeds per BN set (default: %(default)s)")
    front.add_argument("--quantile", type=float, default=0.68, help="decision threshold quantile for SPM (default: %(default)s)")
    front.add_argument("--no-unconstrained", action="store_true", help="leave out the unconstrained learner")
    front.add_argument("--no-constrained", action="store_true", help="leave out the constrained-learning predictors")
    add_parallel_arguments(front)
    front.set_defaults(func=_run_frontier)


def _run_repair(args: argparse.Namespace) -> int:
    from fairpath._io import atomic_write_text, save_figure, write_csv
    from fairpath._results import to_json_text
    from fairpath._validation import check_columns_present, check_output_dir
    from fairpath.repair import CausalGraph, ConstrainedLearner, FairPredictor, graph_from_sfm

    out = check_output_dir(args.out, "--out folder")
    data = read_table(args.data, args.empty_category)
    sfm = sfm_from_args(args, data)
    test = read_table(args.test, args.empty_category, what="--test file") if args.test else None
    graph = CausalGraph.from_edge_table(read_table(args.graph, what="--graph file"), sfm.columns, source=args.graph) if args.graph else graph_from_sfm(sfm)
    if test is not None:
        check_columns_present(test, [c for c in graph.nodes if c != sfm.y], f"--test file {args.test!r}")
    resolving = comma_list(args.resolving) if args.resolving is not None else None
    predictor = FairPredictor(sfm, args.bn, resolving=resolving, graph=graph, reference=args.reference, engine=args.engine,
                              seed=args.seed).fit(data[sfm.columns])
    adapter = predictor.adapter_
    # Everything is computed before anything is written: a failure (say, in --test) leaves no partial outputs.
    tables = {"adapted_train.csv": adapter.adapted_train_, "fair_twins.csv": adapter.fair_twins()}
    scores = data[[sfm.x, sfm.y]].copy()
    scores["fair_score"] = predictor.oof_scores_
    summary = {
        "sfm": sfm.to_dict(), "graph": graph.to_dict(), "resolving": adapter.resolving_, "adapted": adapter.order_,
        "tv_outcome": _tv(data, sfm, sfm.y), "tv_adapted_outcome": _tv(adapter.adapted_train_, sfm, sfm.y),
    }
    if test is not None:
        tables["adapted_test.csv"] = adapter.transform(test)
        test_scores = test[[c for c in (sfm.x, sfm.y) if c in test.columns]].copy()
        test_scores["fair_score"] = predictor.predict(test)
        tables["test_scores.csv"] = test_scores
    figures = {}
    if args.constrained:
        learner = ConstrainedLearner(sfm, _constrained_bn(args), seed=args.seed).fit(data[sfm.columns])
        path = learner.path_result()
        tables["constrained_path.csv"] = path.to_frame()
        figures["constrained_path.png"] = path.plot()
        scores["constrained_score"] = learner.predict(data)
        summary["constrained"] = path.to_dict()
        print(path)
    tables["scores.csv"] = scores
    for name, frame in tables.items():
        write_csv(frame, out / name)
    for name, fig in figures.items():
        save_figure(fig, out / name, dpi=110, bbox_inches="tight")
    atomic_write_text(to_json_text(summary), out / "repair.json")
    print(f"adapted {adapter.order_} (resolving: {adapter.resolving_ or 'none'}); "
          f"TV of {sfm.y}: {summary['tv_outcome']:.4f} -> {summary['tv_adapted_outcome']:.4f} after adaptation")
    print(f"wrote {out}/{', '.join(tables)}, repair.json")
    return 0


def _constrained_bn(args: argparse.Namespace):
    """The BN set of the constrained learner: --bn, or the pathways kept by the resolving columns given."""
    if args.resolving is None:
        return args.bn
    resolving = set(comma_list(args.resolving))
    z, w = set(comma_list(args.z)), set(comma_list(args.w))
    return [p for p, cols in (("SE", z), ("IE", w)) if cols and cols <= resolving]


def _tv(frame, sfm, column) -> float:
    group = frame[sfm.x] == sfm.x1
    return float(frame.loc[group, column].mean() - frame.loc[~group, column].mean())


def _run_frontier(args: argparse.Namespace) -> int:
    from fairpath._io import save_figure, write_csv
    from fairpath._results import write_json
    from fairpath._validation import check_output_dir
    from fairpath.repair import frontier

    out = check_output_dir(args.out, "--out folder")
    data = read_table(args.data, args.empty_category)
    sfm = sfm_from_args(args, data)
    result = frontier(
        data[sfm.columns], sfm, args.bn_sets, repeats=args.repeats, quantile=args.quantile, reference=args.reference, engine=args.engine,
        unconstrained=not args.no_unconstrained, constrained=not args.no_constrained, seed=args.seed,
        out_dir=args.out, progress=not args.quiet, **parallel_options(args),
    )
    write_csv(result.to_frame(), out / "frontier.csv")
    write_json(result.to_dict(), out / "frontier.json")
    save_figure(result.plot(), out / "frontier.png", dpi=110, bbox_inches="tight")
    print(result)
    print(f"wrote {out}/frontier.csv, frontier.json, frontier.png (runs in {out}/runs.csv)")
    return 0
