"""Decomposing a Dask DataFrame: the table stays partitioned on the Dask workers.

``prepare_partitioned(frame, sfm, outcomes, client)`` checks and encodes a partitioned table with
the rules, messages and codes of ``prepare_data`` on the whole table, in two passes over the
partitions, each on the workers:

0. per partition, its rows and the census of each column's types (``column_type_census``): the types
   are checked here on the whole table's census, in ``prepare_data``'s words and counts (a token late
   in a file is named with its column, count and row); a column that a file's parts read as numbers
   in some and as text in others is refused (declare it categorical);
1. per partition, the other row checks of ``prepare_data`` (missing and infinite values, numeric
   outcomes; a row is named by its position in the whole table) and a summary: X's levels
   and group counts, and the distinct values of each Z and W column and of Y (two of a numeric
   column, all of a categorical one);
2. here, the whole table's checks on the summaries (both levels of X present, group sizes, no
   constant column, an outcome that varies) and one encoder per role fitted on all categories;
   then, per partition on the workers, the encoded arrays.

The encoded partitions are assembled on one worker into the ``PreparedData`` that every
cross-fitting task reads there (Z and W as floats, 8 bytes a cell, not the table's text and unused
columns). This process receives only X, the outcome columns and the kept rows' positions. The arrays
are, value for value, those ``prepare_data`` builds from the whole table, so a decomposition's
numbers equal a local run's with the same seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fairpath._encoding import CategoryEncoder
from fairpath._exceptions import FairpathInputError
from fairpath._remedies import remedy
from fairpath._validation import (
    LEVELS_ROLE, MIN_GROUP_ROWS, check_column_type, check_finite, check_group_sizes, check_outcome_varies, column_type_census, is_numeric_column,
    merged_census,
)
from fairpath.causal._data import (
    PreparedData, _check_columns, _check_constant, _outcome_values, check_levels_present, group_rows, warn_excluded,
)
from fairpath._sfm import SFM, check_sfm


class RemoteColumns:
    """Encoded columns (Z or W) that stay on the Dask workers; here only their shape is known."""

    def __init__(self, n: int, width: int):
        self.shape = (n, width)


def _used(sfm: SFM, outcomes: list[str]) -> list[str]:
    return list(dict.fromkeys([sfm.x, *sfm.z, *sfm.w, *outcomes]))


def _summarise(part: pd.DataFrame, offset: int, sfm: SFM, outcomes: list[str]) -> dict:
    """Pass 1 on one partition (its first row is row ``offset`` of the table): row checks and a summary."""
    part = part.set_axis(pd.RangeIndex(offset, offset + len(part)))
    check_finite(part, _numeric_roles(sfm, outcomes), types=False)  # checked on the whole table (_check_types)
    keep = group_rows(part, sfm)
    kept = part.loc[keep]
    for column in outcomes:
        _outcome_values(kept, column, column == sfm.y)
    distinct = {c: kept[c].drop_duplicates().iloc[:2 if is_numeric_column(kept[c]) else None] for c in [*sfm.z, *sfm.w, sfm.y]}
    return {
        "levels": pd.unique(part[sfm.x]).tolist(), "counts": ((kept[sfm.x] == sfm.x0).sum(), (kept[sfm.x] == sfm.x1).sum()),
        "excluded": {str(v) for v in part[sfm.x][~keep].unique()}, "distinct": distinct,
    }


def _encode(part: pd.DataFrame, offset: int, sfm: SFM, outcomes: list[str], z_encoder, w_encoder) -> dict:
    """Pass 2 on one partition: the arrays ``prepare_data`` would build for its kept rows."""
    keep = group_rows(part, sfm).to_numpy()
    kept = part.loc[keep]
    return {"x": (kept[sfm.x] == sfm.x1).to_numpy(dtype=np.int8), "z": z_encoder.transform(kept[list(sfm.z)]),
            "w": w_encoder.transform(kept[list(sfm.w)]), "index": offset + np.flatnonzero(keep),
            "outcomes": {c: _outcome_values(kept, c, c == sfm.y) for c in outcomes}}


def _assemble(parts: list[dict], z_names, w_names, n_excluded: int) -> PreparedData:
    """The whole table's PreparedData from its encoded partitions (on a worker)."""
    return PreparedData(
        x=np.concatenate([p["x"] for p in parts]), z=np.vstack([p["z"] for p in parts]), w=np.vstack([p["w"] for p in parts]),
        outcomes={c: np.concatenate([p["outcomes"][c] for p in parts]) for c in parts[0]["outcomes"]},
        index=pd.Index(np.concatenate([p["index"] for p in parts])), z_names=z_names, w_names=w_names, n_excluded=n_excluded,
    )


def _outcomes_and_x(prepared: PreparedData) -> tuple:
    return prepared.x, prepared.outcomes, prepared.index


def _union(summaries: list[dict], column: str) -> pd.Series:
    return pd.concat([s["distinct"][column] for s in summaries], ignore_index=True).drop_duplicates()


def _numeric_roles(sfm: SFM, outcomes: list[str]) -> dict[str, str]:
    """The roles of the type checks: the outcomes' (numeric), and the protected attribute's (its text names its levels)."""
    return {c: "outcome" if c == sfm.y else "predictor" for c in outcomes} | {sfm.x: LEVELS_ROLE}


def _census(part: pd.DataFrame) -> dict:
    """Pass 0 on one partition: its rows and each column's type census (rows named by their position in the part)."""
    part = part.set_axis(pd.RangeIndex(len(part)))
    return {"rows": len(part), "types": [column_type_census(part[column]) for column in part.columns]}


def _check_types(censuses: list[dict], offsets: list[int], columns: list[str], roles: dict[str, str]) -> None:
    """The type checks of ``prepare_data`` on the whole table, from the partitions' censuses; then a column read as
    numbers in some parts and as text in others (each part of a file is typed by its own cells) is refused."""
    for position, column in enumerate(columns):
        parts = [{**census["types"][position], "first": None if census["types"][position]["first"] is None
                  else census["types"][position]["first"] + offset} for census, offset in zip(censuses, offsets)]
        check_column_type(merged_census(parts), roles.get(column))
        kinds = {part["text"] for part in parts if part["present"]}
        if len(kinds) > 1:
            declare = remedy(f"categorical=[{column!r}]", "--categorical", f"--categorical {column}")
            raise FairpathInputError(
                f"column {column!r} reads as numbers in some parts of the table and as text in others (each part is read on "
                f"its own); declare it categorical ({declare}) so that every part reads it as text"
                if declare else f"column {column!r} reads as numbers in some parts of the table and as text in others: fix its cells")


def prepare_partitioned(frame, sfm: SFM, outcomes: list[str], client) -> PreparedData:
    """Check and encode the Dask DataFrame ``frame`` on ``client``'s workers (see the module docstring)."""
    import dask

    check_sfm(sfm)
    _check_columns(frame._meta, sfm, outcomes)
    used = _used(sfm, outcomes)
    partitions = frame[used].to_delayed()
    censuses = client.compute([dask.delayed(_census)(part) for part in partitions], sync=True)
    lengths = [census["rows"] for census in censuses]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int).tolist()
    _check_types(censuses, offsets, used, _numeric_roles(sfm, outcomes))
    summaries = client.compute([dask.delayed(_summarise)(part, offset, sfm, outcomes) for part, offset in zip(partitions, offsets)], sync=True)
    levels = list(dict.fromkeys(level for s in summaries for level in s["levels"]))
    counts = {sfm.x0: int(sum(s["counts"][0] for s in summaries)), sfm.x1: int(sum(s["counts"][1] for s in summaries))}
    check_levels_present(sfm, levels, counts)
    n_excluded = int(sum(lengths)) - sum(counts.values())
    warn_excluded(sfm, n_excluded, set().union(*(s["excluded"] for s in summaries)))
    check_group_sizes(counts, sfm.x, MIN_GROUP_ROWS)
    for role, columns in (("confounder (Z)", sfm.z), ("mediator (W)", sfm.w)):
        for column in columns:
            _check_constant(pd.DataFrame({column: _union(summaries, column)}), role)
    check_outcome_varies(_union(summaries, sfm.y), sfm.y)
    z_encoder = CategoryEncoder(sfm.z).fit({c: _union(summaries, c) for c in sfm.z})
    w_encoder = CategoryEncoder(sfm.w).fit({c: _union(summaries, c) for c in sfm.w})
    encoded = client.compute([dask.delayed(_encode)(part, offset, sfm, outcomes, z_encoder, w_encoder)
                              for part, offset in zip(partitions, offsets)])
    remote = client.submit(_assemble, encoded, z_encoder.feature_names_, w_encoder.feature_names_, n_excluded, pure=False)
    x, values, index = client.submit(_outcomes_and_x, remote, pure=False).result()
    n = len(x)
    return PreparedData(x=x, z=RemoteColumns(n, len(z_encoder.feature_names_)), w=RemoteColumns(n, len(w_encoder.feature_names_)),
                        outcomes=values, index=index, z_names=z_encoder.feature_names_, w_names=w_encoder.feature_names_,
                        n_excluded=n_excluded, levels=(sfm.x0, sfm.x1), remote=remote)

