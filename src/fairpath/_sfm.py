"""The Standard Fairness Model: which column plays which causal role."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from fairpath._exceptions import FairpathInputError
from fairpath._levels import SEPARATOR
from fairpath._validation import python_value


# A role: (what the column is, where to remove it from).
_ROLE_WORDS = {"Z": ("Z (a confounder)", "Z"), "W": ("W (a mediator)", "W"), "Y": ("Y (the outcome)", "Y"),
               "predictor": ("a predictor", "the predictors")}


def _as_tuple(columns, role: str) -> tuple[str, ...]:
    if columns is None:
        return ()
    if isinstance(columns, str):
        return (columns,) if columns else ()
    if isinstance(columns, (dict, set, frozenset)) or not hasattr(columns, "__iter__"):
        raise FairpathInputError(f"{role} must be a column name or a list of column names, got {columns!r} ({type(columns).__name__})")
    return tuple(columns)


def _check_name(column, role: str) -> None:
    if not isinstance(column, str):
        raise FairpathInputError(
            f"{role} column name must be a string, got {column!r} ({type(column).__name__}); give the DataFrame named "
            "columns (e.g. data.columns = data.columns.astype(str), or pandas.DataFrame(array, columns=[...]))"
        )


@dataclass(frozen=True)
class SFM:
    """Standard Fairness Model (Plečko & Bareinboim).

    Parameters
    ----------
    x : protected attribute column; ``x0`` is its baseline (reference) level, ``x1`` the comparison level,
        or None to compare every other level of ``x`` with ``x0`` (or every pair of levels, with
        ``contrasts="pairs"`` where an estimator takes it): one contrast per level, see
        :class:`fairpath.causal.CausalDecomposition`.
    z : confounders (may be empty); ``w`` : mediators (may be empty); ``y`` : outcome column.

    Each column plays one role. An X named as :func:`fairpath._levels.combine_attributes` names an intersection
    (``"race/sex"``) is the intersection of those columns (:attr:`x_parts`), so none of them may be Z, W or Y either
    (nor a predictor, checked where the predictors are given): X's level would then be decided by another role's
    column, and no effect of X could be estimated.
    """

    x: str
    x0: object
    x1: object | None
    y: str
    z: tuple[str, ...] = field(default=())
    w: tuple[str, ...] = field(default=())

    def __post_init__(self):
        # levels read from data are NumPy scalars: kept as Python values, so messages, reports and JSON show 0, not np.int64(0)
        object.__setattr__(self, "x0", python_value(self.x0))
        object.__setattr__(self, "x1", None if self.x1 is None else python_value(self.x1))
        object.__setattr__(self, "z", _as_tuple(self.z, "z (confounders)"))
        object.__setattr__(self, "w", _as_tuple(self.w, "w (mediators)"))
        for role, columns in (("X", (self.x,)), ("Z", self.z), ("W", self.w), ("Y", (self.y,))):
            for column in columns:
                _check_name(column, role)
        if self.x0 == self.x1:
            raise FairpathInputError(f"x0 and x1 must be two different levels of {self.x!r}, both are {self.x0!r}")
        seen: dict[str, str] = {}
        for role, columns in (("X", (self.x,)), ("Z", self.z), ("W", self.w), ("Y", (self.y,))):
            for column in columns:
                if column in seen:
                    raise FairpathInputError(
                        f"column {column!r} is given two roles ({seen[column]} and {role}); each column may play one role"
                    )
                seen[column] = role
        for part in self.x_parts:
            if part in seen:
                raise self.part_of_x_error(part, seen[part])

    @property
    def x_parts(self) -> tuple[str, ...]:
        """The columns whose intersection X is, read from its name as :func:`fairpath._levels.combine_attributes` writes it
        (``"race/sex"``: race and sex); () for an X of one column."""
        return tuple(self.x.split(SEPARATOR)) if SEPARATOR in self.x else ()

    def part_of_x_error(self, column: str, role: str) -> FairpathInputError:
        """The error for ``column``, a part of X, given another ``role`` too (``Z``, ``W``, ``Y`` or ``predictor``)."""
        plays, source = _ROLE_WORDS[role]
        return FairpathInputError(
            f"column {column!r} is part of X ({self.x!r}, the intersection of {list(self.x_parts)}) and also {plays}; each column may "
            f"play one role: X's levels hold the values of {column!r}, so X and {column!r} cannot be told apart (at a fixed "
            f"{column!r} X cannot vary) and no effect of X can be estimated. Remove {column!r} from {source}, or take it out of "
            f"X's intersection. (If {self.x!r} is one column, not an intersection, rename it without {SEPARATOR!r}.)"
        )

    def roles(self) -> dict[str, str]:
        """Map every column of the model to its role: ``X``, ``Z``, ``W`` or ``Y``."""
        roles = {self.x: "X"}
        roles.update({c: "Z" for c in self.z})
        roles.update({c: "W" for c in self.w})
        roles[self.y] = "Y"
        return roles

    @property
    def columns(self) -> list[str]:
        return list(self.roles())

    @property
    def binary(self) -> bool:
        """One contrast, x0 → x1 (False when ``x1`` is None: every level against ``x0``)."""
        return self.x1 is not None

    def for_contrast(self, x0, x1) -> "SFM":
        """The binary model of one contrast: the same columns with X's levels ``x0`` → ``x1``."""
        return replace(self, x0=x0, x1=x1)

    def with_outcome(self, y: str) -> "SFM":
        """The same model with another outcome column (for example a predictor)."""
        return replace(self, y=y)

    def to_dict(self) -> dict:
        return {"x": self.x, "x0": self.x0, "x1": self.x1, "z": list(self.z), "w": list(self.w), "y": self.y}

    def __str__(self) -> str:
        z, w = (f"{{{', '.join(names)}}}" if names else "∅" for names in (self.z, self.w))
        levels = f"{self.x0!r} → {self.x1!r}" if self.binary else f"every level against {self.x0!r}"
        return f"SFM(X={self.x} [{levels}], Z={z}, W={w}, Y={self.y})"


def check_sfm(sfm) -> SFM:
    """``sfm`` itself if it is an :class:`SFM`; anything else (a dict, a tuple) is an error saying how to build one."""
    if not isinstance(sfm, SFM):
        hint = "SFM(**sfm)" if isinstance(sfm, dict) else "SFM(x=..., x0=..., x1=..., z=[...], w=[...], y=...)"
        raise FairpathInputError(f"sfm must be a fairpath.causal.SFM, got {type(sfm).__name__}; build one with {hint}")
    return sfm


def check_binary_sfm(sfm, what: str) -> SFM:
    """``sfm`` as :func:`check_sfm`, and with one contrast (``x1`` given): ``what`` (e.g. "FairAdapt") handles one."""
    check_sfm(sfm)
    if not sfm.binary:
        raise FairpathInputError(
            f"{what} compares two levels of {sfm.x!r}; this SFM has x1=None (every level against {sfm.x0!r}): "
            f"give x1, the level to compare with {sfm.x0!r}"
        )
    return sfm
