"""``fairpath repair`` (fair twins and a fair predictor for a BN set) and ``fairpath frontier`` (Figure 6)."""

from __future__ import annotations

import argparse

from fairpath._vocabulary import BN_HELP
from fairpath.cli._common import (
    add_data_arguments,
    add_parallel_arguments,
    add_recoding_arguments,
    add_sfm_arguments,
    comma_list,
    declared_type,
    parallel_options,
    read_data,
    read_table,
    save_and_print,
    sfm_from_args,
    signature_default,
)


def _add_shared_arguments(parser: argparse.ArgumentParser) -> None:
    from fairpath.adaptation import ENGINES
    from fairpath.repair import FairPredictor

    add_data_arguments(parser)
    add_sfm_arguments(parser)
    add_recoding_arguments(parser)
    parser.add_argument("--engine", default=signature_default(FairPredictor, "engine"), choices=list(ENGINES),
                        help="conditional quantile engine")
    parser.add_argument("--reference", default=signature_default(FairPredictor, "reference"), choices=["x0", "x1"],
                        help="group whose mechanisms the fair twins follow (x1 matches the effects' conventions)")
    parser.add_argument("--seed", type=declared_type("--seed", FairPredictor, "random_state"), default=signature_default(FairPredictor, "random_state"),
                        help="seed of every random step")
    parser.add_argument("--out", required=True, help="output folder")


def register(subparsers) -> None:
    from fairpath.causal import PRESETS
    from fairpath.repair import frontier
    from fairpath.repair import repair as repair_function

    repair = subparsers.add_parser(
        "repair",
        description="Adapt the data so that only the pathways of the BN set remain (SE in BN keeps Z, IE in BN keeps W), "
        "train a predictor on the fair twins and write adapted data, twins and out-of-fold scores to OUT. The predictor is "
        "judged on held-out rows (--holdout): its Cookbook verdict, its accuracy against the unconstrained predictor "
        "and its predictive parity; the first line printed is that verdict.",
    )
    _add_shared_arguments(repair)
    repair.add_argument("--bn", default="none", help=f"business-necessity set: {BN_HELP}. Adaptation always removes DE, "
                        "so DE is refused here")
    repair.add_argument("--resolving", default=None, help="resolving columns, comma separated (instead of --bn; default: from --bn)")
    repair.add_argument("--graph", default=None, help="edge list CSV (from,to[,kind]) (default: the SFM graph)")
    repair.add_argument("--test", default=None, help="new rows to transform with the fitted adaptation (default: none)")
    repair.add_argument("--constrained", action="store_true", help="also fit the constrained-learning predictor (lambda path)")
    repair.add_argument("--holdout", type=declared_type("--holdout", repair_function, "holdout"), default=signature_default(repair_function, "holdout"),
                        help="share of rows held out for the verdict: the predictors are refitted on the other rows and judged on these")
    repair.add_argument("--n-boot", type=declared_type("--n-boot", repair_function, "n_boot"), default=signature_default(repair_function, "n_boot"),
                        help="bootstrap draws of the verdict's predictive parity intervals")
    repair.add_argument("--margin", type=declared_type("--margin", repair_function, "margin"), default=None, help="equivalence margin of the verdict's Cookbook (default: none)")
    repair.add_argument("--audit-learner", default=None, choices=list(PRESETS),
                        help="learner of the verdict's causal decomposition (default: the decomposition's own)")
    repair.set_defaults(func=_run_repair)

    front = subparsers.add_parser(
        "frontier",
        description="For each BN set (named by resolving variables: none, Z, W, ZW) and seed: adapt, learn, score "
        "out of fold; report mean and sd of SPM, iPPM, AUC. Resumable: finished runs are kept in OUT/runs/ (all of them in OUT/runs.csv at the end).",
    )
    _add_shared_arguments(front)
    front.add_argument("--bn-sets", default="none;SE;IE;IE,SE",
                       help=f"BN sets separated by ';', each a business-necessity set ({BN_HELP}); DE is refused, as "
                       "adaptation removes it; the frontier names its points by resolving variables (none, Z, W, ZW)")
    front.add_argument("--repeats", type=declared_type("--repeats", frontier, "repeats"), default=signature_default(frontier, "repeats"), help="seeds per BN set")
    front.add_argument("--quantile", type=declared_type("--quantile", frontier, "quantile"), default=signature_default(frontier, "quantile"),
                       help="decision threshold quantile for SPM")
    front.add_argument("--no-unconstrained", action="store_true", help="leave out the unconstrained learner")
    front.add_argument("--no-constrained", action="store_true", help="leave out the constrained-learning predictors")
    add_parallel_arguments(front)
    front.set_defaults(func=_run_frontier)


def _run_repair(args: argparse.Namespace) -> int:
    from fairpath._validation import check_columns_present, check_output_dir
    from fairpath.adaptation import CausalGraph, graph_from_sfm
    from fairpath.repair import repair
    from fairpath.report import provenance

    out = check_output_dir(args.out, "--out folder")
    data = read_data(args)
    data, sfm = sfm_from_args(args, data)
    test = read_data(args, args.test, "--test file") if args.test else None
    graph = CausalGraph.from_edge_table(read_table(args.graph, what="--graph file"), sfm.columns, source=args.graph) if args.graph else graph_from_sfm(sfm)
    if test is not None:
        check_columns_present(test, [c for c in graph.nodes if c != sfm.y], f"--test file {args.test!r}")
    resolving = comma_list(args.resolving) if args.resolving is not None else None
    record = provenance(inputs=[args.data, *[p for p in (args.graph, args.test) if p]], seed=args.seed)
    result = repair(data, sfm, bn=args.bn, resolving=resolving, graph=graph, test=test, reference=args.reference, engine=args.engine,
                    constrained=args.constrained, holdout=args.holdout, margin=args.margin, n_boot=args.n_boot, audit_learner=args.audit_learner,
                    seed=args.seed, provenance=record, progress=not args.quiet)
    save_and_print(result, out)
    return 0


def _run_frontier(args: argparse.Namespace) -> int:
    from fairpath._validation import check_output_dir
    from fairpath.repair import frontier
    from fairpath.report import provenance

    out = check_output_dir(args.out, "--out folder")
    data = read_data(args)
    data, sfm = sfm_from_args(args, data)
    result = frontier(
        data[sfm.columns], sfm, args.bn_sets, repeats=args.repeats, quantile=args.quantile, reference=args.reference, engine=args.engine,
        unconstrained=not args.no_unconstrained, constrained=not args.no_constrained, seed=args.seed,
        out_dir=args.out, progress=not args.quiet, provenance=provenance(inputs=[args.data], seed=args.seed), **parallel_options(args),
    )
    save_and_print(result, out)
    return 0
