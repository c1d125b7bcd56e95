"""One vocabulary: pathways, measures, labels and business-necessity sets read the same way everywhere."""

from __future__ import annotations

import pytest

from fairpath import FairpathInputError
from fairpath._vocabulary import (
    LABELS,
    MEASURE_OF_PATHWAY,
    PATHWAYS,
    RESOLVING_NAMES,
    RESOLVING_ROLE,
    parse_bn,
    split_bn_sets,
)
from fairpath.adaptation import resolving_for_bn
from fairpath.causal import MEASURES, SFM
from fairpath.causal import PATHWAYS as CAUSAL_PATHWAYS
from fairpath.parity import parse_bn as parity_parse_bn
from fairpath.parity._ppm_decomposition import INTEGRATED, QUANTITIES
from fairpath.repair import BN_OF_RESOLVING, parse_bn_sets


@pytest.mark.parametrize(("spelling", "expected"), [
    (None, ()), ("none", ()), (" None ", ()), ("∅", ()), ("empty", ()), ([], ()),
    ("SE, de", ("DE", "SE")), ("ie+se", ("IE", "SE")), (["SE", "IE", "DE"], ("DE", "IE", "SE")),
    ("Z", ("SE",)), ("w", ("IE",)), ("ZW", ("IE", "SE")), ("wz", ("IE", "SE")),
])
def test_parse_bn_accepts_every_documented_spelling(spelling, expected):
    assert parse_bn(spelling) == expected


@pytest.mark.parametrize("blank", ["", "  ", "DE,,", ",SE", "IE+"])
def test_blank_text_or_an_empty_entry_is_not_the_empty_set(blank):
    """An unset shell variable or a stray comma is refused; the empty set is written 'none'."""
    with pytest.raises(FairpathInputError, match="is blank or has an empty entry; .*write 'none' for the empty set"):
        parse_bn(blank)


@pytest.mark.parametrize("sets", ["SE;IE;", ";;", ";SE"])
def test_an_empty_set_between_semicolons_is_refused(sets):
    with pytest.raises(FairpathInputError, match="hold an empty set between ';'"):
        parse_bn_sets(sets)


@pytest.mark.parametrize("bad", ["SE,XE", ["DE", "total"], "ctfde", "none,SE", "Z,SE"])
def test_parse_bn_names_the_entry_it_cannot_read(bad):
    with pytest.raises(FairpathInputError, match="is not a pathway; use any of DE, IE, SE .*resolving-variable names Z, W, ZW"):
        parse_bn(bad)


@pytest.mark.parametrize("table", [{"SE": False}, {"SE": True, "IE": False}, {}])
def test_a_mapping_is_refused_not_read_by_its_keys(table):
    """{"SE": False} was BN = {SE}: its keys were taken whatever their values said (as from a config's [bn] table)."""
    with pytest.raises(FairpathInputError, match=r"must be a text such as 'SE' or 'IE,SE' or a list of pathways such as \['IE', 'SE'\], got \{"):
        parse_bn(table)


def test_lists_of_sets_separate_by_semicolon_or_use_the_frontier_names():
    assert split_bn_sets("none; SE; IE,SE") == ["none", "SE", "IE,SE"]
    assert split_bn_sets("none,Z,W,ZW") == ["none", "Z", "W", "ZW"]
    assert split_bn_sets("IE,SE") == ["IE,SE"]  # one set of two pathways, not two sets
    assert parse_bn_sets("IE,SE") == ["ZW"]


def test_one_definition_serves_every_package():
    assert parity_parse_bn is parse_bn
    assert CAUSAL_PATHWAYS is MEASURE_OF_PATHWAY and tuple(MEASURE_OF_PATHWAY) == PATHWAYS
    assert BN_OF_RESOLVING == {name: bn for bn, name in RESOLVING_NAMES.items()}
    assert set(LABELS) >= set(MEASURES) | set(QUANTITIES) | set(INTEGRATED.values())
    assert LABELS["ctfde"] == "Ctf-DE" and LABELS["ippm"] == "iPPM"


def test_the_resolving_variables_realise_each_bn_set_without_de():
    sfm = SFM(x="x", x0=0, x1=1, z=("z1", "z2"), w=("w",), y="y")
    for bn, name in RESOLVING_NAMES.items():
        expected = [c for p in ("SE", "IE") if p in bn for c in getattr(sfm, RESOLVING_ROLE[p])]
        assert resolving_for_bn(sfm, bn) == resolving_for_bn(sfm, name) == expected
