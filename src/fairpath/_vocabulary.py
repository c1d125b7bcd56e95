"""The words every part of fairpath shares: pathways, their measures, display labels, business-necessity sets.

Pathways are the Cookbook's names of the three ways X reaches a decision in the Standard Fairness
Model: DE (direct, X → Y), IE (indirect, X → W → Y) and SE (spurious, X ← Z → Y); the counterfactual
measures ``ctfde``, ``ctfie``, ``ctfse`` quantify them.

A business-necessity (BN) set is the subset of pathways a decision may use. :func:`parse_bn` reads
it the same way everywhere (Python API, config files, every CLI command):

- pathway names, separated by commas or ``+``, in any case and order: ``"SE"``, ``"IE,SE"``, ``"de+ie"``;
- the empty set: ``None``, ``"none"``, ``"empty"`` or ``"∅"`` (blank text is refused);
- the frontier's names by *resolving variables* (the paper's Figure 6): in data adaptation a
  resolving variable keeps its observed value, so ``"Z"`` (Z resolving) keeps the spurious pathway,
  ``"W"`` the indirect one: ``Z`` = {SE}, ``W`` = {IE}, ``ZW`` = {IE, SE}.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from fairpath._exceptions import FairpathInputError

Pathway = Literal["DE", "IE", "SE"]
Reference = Literal["x0", "x1"]  # the group whose mechanisms fair twins follow
Engine = Literal["forest", "linear"]  # conditional quantile engines of data adaptation (or an engine object)
PATHWAYS: tuple[Pathway, ...] = ("DE", "IE", "SE")
MEASURE_OF_PATHWAY: dict[str, str] = {"DE": "ctfde", "IE": "ctfie", "SE": "ctfse"}
PATHWAY_NAMES = {"DE": "direct", "IE": "indirect", "SE": "spurious"}

# SE in BN <-> the confounders Z are resolving; IE in BN <-> the mediators W are (X itself never is).
RESOLVING_ROLE = {"SE": "z", "IE": "w"}
# A BN set without DE by the roles of its resolving variables, as the frontier names its points.
RESOLVING_NAMES: dict[tuple[str, ...], str] = {(): "none", ("SE",): "Z", ("IE",): "W", ("IE", "SE"): "ZW"}
_RESOLVING_ALIASES = {"Z": ("SE",), "W": ("IE",), "ZW": ("IE", "SE"), "WZ": ("IE", "SE")}
_EMPTY = {"none", "empty", "∅"}  # blank text is refused: an unset shell variable, not a choice

BN_HELP = (
    "pathways among DE, IE, SE, comma-separated ('none' for the empty set); the frontier's names by "
    "resolving variables are accepted too: Z = SE, W = IE, ZW = IE,SE"
)

# Display labels of every quantity fairpath reports, by its key in results and tables.
LABELS = {
    "tv": "TV", "ctfde": "Ctf-DE", "ctfie": "Ctf-IE", "ctfse": "Ctf-SE", "ett": "ETT", "te": "TE",
    "nde": "NDE", "nie": "NIE", "expse_x0": "Exp-SE x0", "expse_x1": "Exp-SE x1",
    "term1": "Term I", "term2": "Term II", "ppm": "PPM", "iterm1": "iTerm I", "iterm2": "iTerm II", "ippm": "iPPM",
}


def parse_bn(bn) -> tuple[Pathway, ...]:
    """The business-necessity set as a tuple in the order DE, IE, SE (see the module docstring).

    Accepts None or a string in any spelling above, or an iterable of pathway names; a mapping (a config
    file's table such as ``{SE = false}``) is refused rather than read by its keys.
    """
    if bn is None or (isinstance(bn, str) and bn.strip().lower() in _EMPTY):
        return ()
    if isinstance(bn, str) and bn.strip().upper() in _RESOLVING_ALIASES:
        return _RESOLVING_ALIASES[bn.strip().upper()]
    if not isinstance(bn, (str, Iterable)) or isinstance(bn, Mapping):  # a table's keys would be kept whatever their values say
        raise FairpathInputError(f"the business-necessity set must be a text such as 'SE' or 'IE,SE' or a list of pathways such as "
                                 f"['IE', 'SE'], got {bn!r}; list the pathways kept (TOML: bn = [\"SE\"], YAML: bn: [SE]), 'none' for "
                                 "the empty set")
    items = bn.replace("+", ",").split(",") if isinstance(bn, str) else list(bn)
    if isinstance(bn, str) and not all(item.strip() for item in items):
        raise FairpathInputError(f"the business-necessity set {bn!r} is blank or has an empty entry; name pathways among DE, IE, SE "
                                 "separated by single commas, or write 'none' for the empty set")
    names = [str(item).strip().upper() for item in items if str(item).strip()]
    unknown = [item for item, name in zip(items, names) if name not in PATHWAYS]
    if unknown:
        raise FairpathInputError(
            f"business-necessity entry {unknown[0]!r} is not a pathway; use any of DE, IE, SE (comma-separated), "
            "'none' for the empty set, or the resolving-variable names Z, W, ZW"
        )
    return tuple(p for p in PATHWAYS if p in names)


def split_bn_sets(value) -> list[str]:
    """A list of BN sets from ``"none;SE;IE,SE"`` (sets separated by ``;``), an iterable of sets, or the
    frontier's comma-separated resolving-variable names ``"none,Z,W,ZW"``."""
    if not isinstance(value, str):
        return list(value)
    if ";" in value:
        sets = [item.strip() for item in value.split(";")]
        if not all(sets):
            raise FairpathInputError(f"the BN sets {value!r} hold an empty set between ';'; write 'none' for the empty set "
                                     "and no ';' at either end")
        return sets
    items = [item.strip() for item in value.split(",")]
    if len(items) > 1 and all(item.lower() in _EMPTY or item.upper() in _RESOLVING_ALIASES for item in items):
        return items
    return [value]
