"""Causal data adaptation (Plečko & Meinshausen's fairadapt algorithm): causal graphs, ``FairAdapt``
(fair twins by quantile transport along the graph) and the conditional quantile engines it uses."""

from fairpath.adaptation._adaptation import FairAdapt
from fairpath.adaptation._graph import CausalGraph, graph_from_sfm, resolving_for_bn
from fairpath.adaptation._quantile import ENGINES, ForestQuantileEngine, LinearQuantileEngine, make_engine

__all__ = [
    "CausalGraph",
    "ENGINES",
    "FairAdapt",
    "ForestQuantileEngine",
    "LinearQuantileEngine",
    "graph_from_sfm",
    "make_engine",
    "resolving_for_bn",
]
