"""Causal graphs: order, relations, construction from matrices, edge lists and the SFM; BN sets."""

import pandas as pd
import pytest

from fairpath.causal import SFM
from fairpath.adaptation import CausalGraph, graph_from_sfm, resolving_for_bn

SFM_EXAMPLE = SFM(x="x", x0=0, x1=1, z=("z1", "z2"), w=("w1", "w2"), y="y")


def test_topological_order_respects_every_edge():
    graph = CausalGraph(["y", "w", "x"], [("x", "w"), ("w", "y"), ("x", "y")])
    position = {node: i for i, node in enumerate(graph.order_)}
    assert graph.order_ == ["x", "w", "y"]
    assert all(position[a] < position[b] for a, b in graph.edges)


def test_relations():
    graph = CausalGraph(["a", "b", "c", "d"], [("a", "b"), ("b", "c")], [("a", "d")])
    assert graph.descendants("a") == {"b", "c"}
    assert graph.ancestors("c") == {"a", "b"}
    assert graph.parents("c") == ["b"]
    assert graph.spouses("d") == {"a"} and graph.spouses("a") == {"d"}


def test_graph_from_sfm_has_the_standard_fairness_model_structure():
    graph = graph_from_sfm(SFM_EXAMPLE)
    edges = set(graph.edges)
    assert {("x", "w1"), ("x", "w2"), ("x", "y"), ("z1", "w1"), ("z2", "y"), ("w1", "w2"), ("w2", "y")} <= edges
    assert ("w2", "w1") not in edges and not any(b in ("x", "z1", "z2") for _, b in edges)
    assert set(graph.bidirected) == {("x", "z1"), ("x", "z2")}
    assert graph.order_[0] == "x" and graph.order_[-1] == "y"


def test_adjacency_round_trip_and_bidirected_matrix():
    graph = graph_from_sfm(SFM_EXAMPLE)
    matrix = graph.to_adjacency()
    bidirected = pd.DataFrame(0, index=matrix.index, columns=matrix.columns)
    bidirected.loc["x", "z1"] = bidirected.loc["z1", "x"] = 1
    rebuilt = CausalGraph.from_adjacency(matrix, bidirected)
    assert set(rebuilt.edges) == set(graph.edges)
    assert rebuilt.bidirected == [("x", "z1")]


def test_edge_table_with_kinds():
    table = pd.DataFrame({"from": ["x", "x", "w", "z"], "to": ["w", "y", "y", "x"], "kind": ["directed"] * 3 + ["bidirected"]})
    graph = CausalGraph.from_edge_table(table, ["x", "z", "w", "y"])
    assert set(graph.edges) == {("x", "w"), ("x", "y"), ("w", "y")}
    assert graph.spouses("x") == {"z"}


@pytest.mark.parametrize(
    "bn, expected",
    [("none", []), ("∅", []), ("SE", ["z1", "z2"]), ("IE", ["w1", "w2"]), ("se,ie", ["z1", "z2", "w1", "w2"]), (["IE", "SE"], ["z1", "z2", "w1", "w2"])],
)
def test_resolving_for_bn(bn, expected):
    assert resolving_for_bn(SFM_EXAMPLE, bn) == expected
