"""Bad graphs and BN sets give errors that name the problem."""

import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.causal import SFM
from fairpath.adaptation import CausalGraph, resolving_for_bn


def test_cycle_is_refused():
    with pytest.raises(FairpathInputError, match=r"cycle through \['a', 'b', 'c'\]"):
        CausalGraph(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "a")])


def test_edge_to_unknown_node():
    with pytest.raises(FairpathInputError, match="names 'q', which is not a node"):
        CausalGraph(["a", "b"], [("a", "q")])


def test_self_loop():
    with pytest.raises(FairpathInputError, match="joins a column to itself"):
        CausalGraph(["a"], [("a", "a")])


def test_edge_table_omitting_a_used_column():
    table = pd.DataFrame({"from": ["x"], "to": ["y"]})
    with pytest.raises(FairpathInputError, match=r"omits the used column\(s\) \['w'\]"):
        CausalGraph.from_edge_table(table, ["x", "w", "y"])


def test_edge_table_naming_an_unknown_column():
    table = pd.DataFrame({"from": ["x", "x", "w"], "to": ["w", "salary", "y"]})
    with pytest.raises(FairpathInputError, match=r"names \['salary'\], which are not columns"):
        CausalGraph.from_edge_table(table, ["x", "w", "y"])


def test_edge_table_bad_kind_and_missing_header():
    with pytest.raises(FairpathInputError, match="'directed' or 'bidirected'"):
        CausalGraph.from_edge_table(pd.DataFrame({"from": ["x"], "to": ["y"], "kind": ["arrow"]}), ["x", "y"])
    with pytest.raises(FairpathInputError, match="needs the columns 'from' and 'to'"):
        CausalGraph.from_edge_table(pd.DataFrame({"source": ["x"], "target": ["y"]}), ["x", "y"])


def test_asymmetric_bidirected_matrix():
    matrix = pd.DataFrame(0, index=["a", "b"], columns=["a", "b"])
    bidirected = matrix.copy()
    bidirected.loc["a", "b"] = 1
    with pytest.raises(FairpathInputError, match="symmetric"):
        CausalGraph.from_adjacency(matrix, bidirected)


def test_bn_with_unknown_pathway_or_direct_effect():
    sfm = SFM(x="x", x0=0, x1=1, z=("z",), w=("w",), y="y")
    with pytest.raises(FairpathInputError, match="business-necessity entry 'XE' is not a pathway; use any of DE, IE, SE"):
        resolving_for_bn(sfm, "XE")
    with pytest.raises(FairpathInputError, match="removes the direct effect in every case"):
        resolving_for_bn(sfm, "DE,SE")
