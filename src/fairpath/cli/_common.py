"""Argument helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import inspect
import sys

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import read_partitioned, read_table
from fairpath._progress import stage
from fairpath._validation import Jobs, Optional, SchedulerAddress, Seed, check_columns_present, flag_type, local_workers

__all__ = ["add_data_arguments", "add_parallel_arguments", "add_predictor_argument", "add_reading_arguments", "add_recoding_arguments",
           "add_sfm_arguments", "comma_list", "declared_type", "flag_type", "parallel_options", "parse_level_names", "parse_merge",
           "predictor_columns", "read_data", "read_table",
           "seed_type", "sfm_from_args", "signature_default", "add_level_arguments", "protected_attribute", "sfm_for"]


def comma_list(text: str | None) -> list[str]:
    """Parse ``a,b,c`` into a list; an empty string or None gives an empty list."""
    if not text:
        return []
    return [item.strip() for item in text.split(",") if item.strip()]


def save_and_print(result, out) -> None:
    """``result.save(out)``, then its summary and the files written in one line (their paths, all under ``out``, relative
    to it): every file first, so a reader that closes stdout early (``| head``) loses none."""
    paths = result.save(out)
    print(result.summary())
    print(f"wrote {out}/: {', '.join(str(path.relative_to(out)) for path in paths.values())}")


def number_list(flag: str, text: str) -> list[float]:
    """The numbers of a comma-separated flag such as ``--lambdas 1,10,100``; a clear error naming the flag otherwise."""
    values = []
    for item in comma_list(text):
        try:
            values.append(float(item))
        except ValueError:
            raise FairpathInputError(f"{flag} must be comma-separated numbers such as 1,10,100; {item!r} is not a number") from None
    if not values:
        raise FairpathInputError(f"{flag} is empty; give comma-separated numbers such as 1,10,100")
    return values


def sensitivity_strengths(text: str) -> tuple[float, float]:
    """``--sensitivity 0.03,0.05`` as (cf_y, cf_d), each checked by the constraint ``sensitivity`` declares; an argparse
    error naming the flag otherwise."""
    from fairpath.causal import CausalDecomposition

    parts = comma_list(text)
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"--sensitivity takes two shares CF_Y,CF_D such as 0.03,0.03; got {text!r}")
    return tuple(declared_type(f"--sensitivity {name}", CausalDecomposition.sensitivity, name)(part)
                 for name, part in zip(("cf_y", "cf_d"), parts))


def add_sensitivity_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sensitivity", type=sensitivity_strengths, metavar="CF_Y,CF_D",
                        help="bounds of every measure under an unobserved confounder that explains the share CF_Y of the "
                        "outcome's residual variation and CF_D of the weights' (e.g. 0.03,0.03), with robustness values "
                        "(Chernozhukov et al. 2022); with --out also written to OUT/sensitivity/ (default: robustness "
                        "values in the report only)")
    parser.add_argument("--benchmark", nargs="?", const="all", metavar="COLUMNS",
                        help="with --sensitivity: refit without each observed Z and W column (or each of the comma-separated "
                        "COLUMNS) and show what a confounder as strong as it would do (one more decomposition per column)")


def check_sensitivity_flags(args, method: str | None, n_boot: int = 0) -> None:
    """Refuse ``--sensitivity``/``--benchmark`` combinations before any fit: the bounds need influence-function inference."""
    if args.benchmark is not None and args.sensitivity is None:
        raise FairpathInputError("--benchmark shows confounders as strong as observed columns beside the bounds of "
                                 "--sensitivity: give --sensitivity CF_Y,CF_D too")
    if args.benchmark not in (None, "all") and not comma_list(args.benchmark):
        raise FairpathInputError("--benchmark names no column: name Z or W columns (a,b) or give --benchmark alone for all")
    if args.sensitivity is not None and (method not in (None, "debiasing") or n_boot):
        raise FairpathInputError("--sensitivity takes its sampling error from the influence function: use --method debiasing "
                                 "without --bootstrap")


def sensitivity_of(result, args, data):
    """``result.sensitivity`` at the strengths of ``--sensitivity``, benchmarked against ``--benchmark``'s columns of
    ``data`` (:func:`check_sensitivity_flags` has checked them); None without ``--sensitivity``."""
    from fairpath.causal import confounder_benchmarks

    if args.sensitivity is None:
        return None
    marks = None
    if args.benchmark is not None:
        decomposition = getattr(result, "decomposition", result)  # an audit's, or the decomposition itself
        marks = confounder_benchmarks(decomposition, data, None if args.benchmark == "all" else comma_list(args.benchmark))
    return result.sensitivity(cf_y=args.sensitivity[0], cf_d=args.sensitivity[1], benchmarks=marks)


def parse_merge(text: str | None) -> dict[str, str]:
    """``--merge "asian=other,native=other"`` as ``{"asian": "other", "native": "other"}`` (see
    :func:`fairpath._levels.merge_from_text`); a malformed text is an argparse error."""
    from fairpath._levels import merge_from_text

    try:
        return merge_from_text(text)
    except FairpathInputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_level_names(text: str | None) -> list[str]:
    """``--drop-levels "a,b"`` as ``["a", "b"]``, each name exactly as written (see
    :func:`fairpath._levels.names_from_text`); an empty entry is an argparse error."""
    from fairpath._levels import names_from_text

    try:
        return names_from_text(text)
    except FairpathInputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def signature_default(func, name: str):
    """The default of ``func``'s parameter ``name``: flags show and use the code's own defaults."""
    return inspect.signature(func).parameters[name].default


def add_predictor_argument(parser: argparse.ArgumentParser) -> None:
    """``--predictor`` (Ŷ columns): repeat it, or give several, space- or comma-separated."""
    parser.add_argument("--predictor", action="extend", nargs="+", default=None, metavar="COLUMN",
                        help="predictor column(s) Ŷ, space- or comma-separated, or repeat the flag")


def predictor_columns(values: list[str] | None) -> list[str]:
    """The columns of ``--predictor`` values, each of which may hold several comma-separated."""
    return [column for item in values or [] for column in comma_list(item)]

def declared_type(flag: str, owner, parameter: str):
    """An argparse ``type`` for ``flag``: the constraint that ``owner`` (a function or class) declares for its
    ``parameter`` (fairpath._validation.validate_params), so that the flag accepts and refuses what the API does."""
    return flag_type(flag, owner.parameter_constraints[parameter])


seed_type = flag_type("--seed", Seed())


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """The data file and how to read it."""
    parser.add_argument("data", help="CSV or Parquet file")
    parser.add_argument("--empty-category", type=comma_list, default=[], metavar="COLUMN[,COLUMN]",
                        help="columns where an empty cell is a real category (e.g. the census' industry), not a missing value")
    add_reading_arguments(parser)


def add_reading_arguments(parser: argparse.ArgumentParser) -> None:
    """``--na-values`` (tokens that mean a missing value) and ``--categorical`` (columns read as categories)."""
    parser.add_argument("--na-values", action="extend", nargs="+", default=None, metavar="TOKEN",
                        help="further tokens that mean a missing value in every column, e.g. ? or - (taken verbatim; list several or repeat)")
    parser.add_argument("--categorical", type=comma_list, default=None, metavar="COLUMN[,COLUMN]",
                        help="columns read as categories even where their cells look like numbers")


def read_data(args: argparse.Namespace, path=None, what: str = "data file", *, partitioned: bool = False) -> pd.DataFrame:
    """The table ``path`` (default: the data argument), read as the flags of :func:`add_data_arguments` say, the columns
    of ``--x`` as levels (their exact text, see :func:`fairpath._io.read_table`); with ``partitioned`` a Dask
    DataFrame, whose partitions are read where a computation needs them."""
    options = {"na_values": args.na_values, "categorical": args.categorical, "levels": comma_list(getattr(args, "x", None))}
    if partitioned:
        return read_partitioned(path or args.data, args.empty_category, what, **options)
    with stage(f"reading {path or args.data}") as reading:
        data = read_table(path or args.data, args.empty_category, what, **options)
        reading.rows = len(data)
    return data

def add_sfm_arguments(parser: argparse.ArgumentParser, required: bool = True, *, levels: bool = False) -> None:
    """The Standard Fairness Model flags shared by the tabular subcommands; with ``levels`` the subcommand analyses
    every level of X (``--x1`` optional) and takes :func:`add_level_arguments`."""
    parser.add_argument("--x", required=required, help="protected attribute column" + X_INTERSECTION_HELP)
    parser.add_argument("--x0", required=required, help="baseline (reference) level of X")
    if levels:
        parser.add_argument("--x1", help="comparison level of X (default: every other level against --x0, see --contrasts)")
        add_level_arguments(parser)
    else:
        parser.add_argument("--x1", required=required, help="comparison level of X")
    parser.add_argument("--z", default="", help="confounders, comma-separated (default: none)")
    parser.add_argument("--w", default="", help="mediators, comma-separated (default: none)")
    parser.add_argument("--y", required=required, help="outcome column")


X_INTERSECTION_HELP = "; several comma-separated (race,sex) analyse their intersection, levels named 'black/female'"


def add_level_arguments(parser: argparse.ArgumentParser, contrasts_default: str | None = "reference") -> None:
    """The flags of a protected attribute with several levels: which contrasts, and merged or dropped levels
    (``contrasts_default`` None where a config file's value stands unless the flag is given)."""
    parser.add_argument("--contrasts", choices=("reference", "pairs"), default=contrasts_default,
                        help="without --x1: each level against --x0 (reference, default) or every pair of levels (pairs)")
    add_recoding_arguments(parser)


def add_recoding_arguments(parser: argparse.ArgumentParser) -> None:
    """``--merge`` and ``--drop-levels``: levels of X merged or left out before the analysis."""
    parser.add_argument("--merge", type=parse_merge, default=None, metavar="LEVEL=NEW[,...]",
                        help='merge levels of X before the analysis, e.g. --merge "NHOPI=other,AIAN=other", each level exactly as written in '
                             "the data (default: none)")
    parser.add_argument("--drop-levels", type=parse_level_names, default=None, metavar="LEVEL[,LEVEL]",
                        help="leave out the rows of these levels of X, comma-separated, each exactly as written in the data; the rows "
                             "dropped are reported (default: none)")


def protected_attribute(data: pd.DataFrame, x: str, *, merge=None, drop_levels=None) -> tuple[pd.DataFrame, str]:
    """The data and X's column for ``--x`` (one column, or comma-separated columns whose intersection is built), its
    levels merged (``--merge``) and dropped (``--drop-levels``); what was dropped is said on stderr."""
    from fairpath._levels import combine_attributes, recode_levels
    from fairpath.cli import print_note

    columns = comma_list(x)
    if len(columns) > 1:
        data, x = combine_attributes(data, columns)
    if merge or drop_levels:
        recoded = recode_levels(data, x, merge=merge, drop_levels=drop_levels)
        if recoded.dropped:
            print_note(recoded.describe())
        data = recoded.data
    return data, x


def sfm_for(data: pd.DataFrame, *, x: str, x0, x1, z, w, y: str, source: str):
    """The SFM with X's levels matched to its column in ``data`` (named ``source`` in the message when it lacks it) by their
    text, exactly (:func:`fairpath._levels.match_level`: ``"1"`` names a numeric level 1, never 1.0 nor "01"); ``x1``
    None keeps every level. A Dask DataFrame's distinct values of X are computed (on the active Dask client)."""
    from fairpath._levels import match_level
    from fairpath.causal import SFM

    if x not in data.columns:
        raise FairpathInputError(f"protected attribute column {x!r} not found in {source}; available columns: {list(data.columns)}")
    column = data[x]
    if not isinstance(column, pd.Series):
        column = pd.Series(column.unique().compute(), name=x)
    return SFM(x=x, x0=match_level(column, x0), x1=None if x1 is None else match_level(column, x1), z=z, w=w, y=y)


def sfm_from_args(args, data: pd.DataFrame):
    """The data and the SFM of the flags (:func:`add_sfm_arguments` and :func:`add_recoding_arguments`); X's levels are
    matched to the column ("1" names a numeric level 1), X is built from several columns and its levels merged or dropped.
    ``data`` may be a Dask DataFrame (one column X, its levels as they are): X's distinct values are then computed (on
    the active Dask client)."""
    partitioned = not isinstance(data, pd.DataFrame)
    changes = args.merge or args.drop_levels or "," in args.x
    if changes and partitioned:
        raise FairpathInputError("--x with several columns, --merge and --drop-levels need the table in this process: "
                                 "run without --scheduler/--workers")
    if changes:
        data, x = protected_attribute(data, args.x, merge=args.merge, drop_levels=args.drop_levels)
    else:
        x = args.x
    source = f"data file {str(args.data)!r}"
    sfm = sfm_for(data, x=x, x0=args.x0, x1=args.x1, z=comma_list(args.z), w=comma_list(args.w), y=args.y, source=source)
    check_columns_present(data, sfm.columns, source)
    return data, sfm


def add_parallel_arguments(parser: argparse.ArgumentParser, repetitions: str = "repetitions", threads: bool = True) -> None:
    """``--n-jobs`` (when ``threads``), ``--scheduler``, ``--workers``: where ``repetitions`` run
    (see fairpath._parallel.run_tasks)."""
    group = parser.add_argument_group(f"running the {repetitions} in parallel (the same seed gives the same numbers)")
    if threads:
        group.add_argument("--n-jobs", type=flag_type("--n-jobs", Jobs()), default=1, help=f"threads for the {repetitions} (default 1; -1: one per core)")
    group.add_argument("--scheduler", type=flag_type("--scheduler", Optional(SchedulerAddress())), default=None,
                       help=f"run the {repetitions} as tasks on this Dask scheduler, e.g. tcp://10.0.0.5:8786 (needs fairpath[dask])")
    group.add_argument("--workers", type=flag_type("--workers", local_workers()), default=None,
                       help=f"run the {repetitions} on a local Dask cluster of N worker processes (needs fairpath[dask])")


def parallel_options(args: argparse.Namespace) -> dict:
    """The ``run_tasks`` options the parser of :func:`add_parallel_arguments` read."""
    options = {"scheduler": args.scheduler, "workers": args.workers}
    if hasattr(args, "n_jobs"):
        options["n_jobs"] = args.n_jobs
    return options


VIOLATION_EXIT = 3  # distinct from 1 (a bug) and 2 (bad input): a CI step fails on it


def add_fail_on_argument(parser: argparse.ArgumentParser, violation: str) -> None:
    """``--fail-on never|violation``: whether a shown violation (``violation`` says which) makes the command exit 3."""
    parser.add_argument("--fail-on", choices=["never", "violation"], default="never",
                        help=f"violation: exit with status {VIOLATION_EXIT} when {violation}, to guard a model release in CI; "
                             "never: exit 0 whatever the verdicts (default)")


def exit_status(fail_on: str, violations: list[str]) -> int:
    """The exit status after the results are written: 3 with ``--fail-on violation`` and a violation, else 0."""
    if fail_on == "violation" and violations:
        print(f"fairpath: failing (--fail-on violation, exit {VIOLATION_EXIT}): {'; '.join(violations)}", file=sys.stderr)
        return VIOLATION_EXIT
    return 0
