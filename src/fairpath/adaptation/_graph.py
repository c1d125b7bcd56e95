"""Causal graphs for data adaptation: directed edges, bidirected (confounding) edges, checks.

A graph names every column that the adaptation uses. Directed edges ``a -> b`` say that ``a`` is a
cause of ``b``; bidirected edges ``a <-> b`` say that the two share an unobserved cause. In the
Standard Fairness Model the confounders Z are joined to the protected attribute X by bidirected
edges: their distribution differs between the groups without being caused by X.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._vocabulary import RESOLVING_ROLE, parse_bn


class CausalGraph:
    """A causal graph over named columns.

    Parameters
    ----------
    nodes : the column names, in any order.
    edges : directed edges ``(parent, child)``.
    bidirected : undirected pairs ``(a, b)`` of columns that share an unobserved cause.
    """

    def __init__(self, nodes: Sequence[str], edges: Iterable[tuple[str, str]] = (), bidirected: Iterable[tuple[str, str]] = ()):
        self.nodes = list(dict.fromkeys(nodes))
        if len(self.nodes) != len(list(nodes)):
            raise FairpathInputError("graph nodes must be unique; a column is listed twice")
        self.edges = [tuple(edge) for edge in edges]
        self.bidirected = [tuple(pair) for pair in bidirected]
        known = set(self.nodes)
        for kind, pairs in (("edge", self.edges), ("bidirected edge", self.bidirected)):
            for a, b in pairs:
                for name in (a, b):
                    if name not in known:
                        raise FairpathInputError(
                            f"{kind} {a!r} -> {b!r} names {name!r}, which is not a node of the graph; "
                            "add it to the nodes or fix the edge"
                        )
                if a == b:
                    raise FairpathInputError(f"{kind} {a!r} -> {b!r} joins a column to itself; remove it")
        self._parents = {node: [] for node in self.nodes}
        for a, b in self.edges:
            if a not in self._parents[b]:
                self._parents[b].append(a)
        self.order_ = self._topological_order()

    # -- construction --------------------------------------------------------------------------
    @classmethod
    def from_adjacency(cls, matrix: pd.DataFrame, bidirected: pd.DataFrame | None = None) -> "CausalGraph":
        """From a square 0/1 DataFrame with ``matrix.loc[a, b] == 1`` for an edge ``a -> b``.

        ``bidirected`` is an optional symmetric 0/1 DataFrame over the same columns.
        """
        if list(matrix.index) != list(matrix.columns):
            raise FairpathInputError("adjacency matrix must have the same labels, in the same order, on rows and columns")
        nodes = [str(c) for c in matrix.columns]
        values = np.asarray(matrix.values)
        edges = [(nodes[i], nodes[j]) for i, j in zip(*np.nonzero(values))]
        pairs: list[tuple[str, str]] = []
        if bidirected is not None:
            b = bidirected.reindex(index=matrix.index, columns=matrix.columns)
            if b.isna().any().any():
                raise FairpathInputError("bidirected matrix must have the same labels as the adjacency matrix")
            bv = np.asarray(b.values)
            if not np.array_equal(bv, bv.T):
                raise FairpathInputError("bidirected matrix must be symmetric (a <-> b is the same as b <-> a)")
            pairs = [(nodes[i], nodes[j]) for i, j in zip(*np.nonzero(np.triu(bv)))]
        return cls(nodes, edges, pairs)

    @classmethod
    def from_edge_table(cls, table: pd.DataFrame, columns: Sequence[str], source: str = "edge list") -> "CausalGraph":
        """From a table with columns ``from``, ``to`` and optionally ``kind`` (``directed``/``bidirected``).

        Every used column must appear in some edge and every edge must name used columns.
        """
        for needed in ("from", "to"):
            if needed not in table.columns:
                raise FairpathInputError(f"{source} needs the columns 'from' and 'to' (and optionally 'kind'); it has {list(table.columns)}")
        kinds = table["kind"].astype(str).str.lower() if "kind" in table.columns else pd.Series("directed", index=table.index)
        bad = sorted(set(kinds) - {"directed", "bidirected"})
        if bad:
            raise FairpathInputError(f"{source}: edge kind must be 'directed' or 'bidirected', got {bad}")
        pairs = list(zip(table["from"].astype(str), table["to"].astype(str)))
        named = {name for pair in pairs for name in pair}
        unknown = sorted(named - set(columns))
        if unknown:
            raise FairpathInputError(f"{source} names {unknown}, which are not columns of the model ({list(columns)})")
        omitted = [c for c in columns if c not in named]
        if omitted:
            raise FairpathInputError(f"{source} omits the used column(s) {omitted}; give each at least one edge")
        directed = [pair for pair, kind in zip(pairs, kinds) if kind == "directed"]
        bidirected = [pair for pair, kind in zip(pairs, kinds) if kind == "bidirected"]
        return cls(list(columns), directed, bidirected)

    def to_adjacency(self) -> pd.DataFrame:
        matrix = pd.DataFrame(0, index=self.nodes, columns=self.nodes)
        for a, b in self.edges:
            matrix.loc[a, b] = 1
        return matrix

    # -- queries -------------------------------------------------------------------------------
    def parents(self, node: str) -> list[str]:
        return list(self._parents[node])

    def children(self, node: str) -> list[str]:
        return [b for a, b in self.edges if a == node]

    def descendants(self, node: str) -> set[str]:
        found: set[str] = set()
        stack = self.children(node)
        while stack:
            current = stack.pop()
            if current not in found:
                found.add(current)
                stack.extend(self.children(current))
        return found

    def ancestors(self, node: str) -> set[str]:
        found: set[str] = set()
        stack = self.parents(node)
        while stack:
            current = stack.pop()
            if current not in found:
                found.add(current)
                stack.extend(self.parents(current))
        return found

    def spouses(self, node: str) -> set[str]:
        """Columns joined to ``node`` by a bidirected edge."""
        return {b for a, b in self.bidirected if a == node} | {a for a, b in self.bidirected if b == node}

    def _topological_order(self) -> list[str]:
        # Kahn's algorithm, ties broken by the order the nodes were given in (reproducible).
        indegree = {node: len(self._parents[node]) for node in self.nodes}
        ready = [node for node in self.nodes if indegree[node] == 0]
        order: list[str] = []
        while ready:
            node = ready.pop(0)
            order.append(node)
            for child in self.children(node):
                indegree[child] -= 1
                if indegree[child] == 0:
                    ready.append(child)
        if len(order) < len(self.nodes):
            cycle = [node for node in self.nodes if indegree[node] > 0]
            raise FairpathInputError(
                f"the causal graph has a cycle through {cycle}; a causal graph must be acyclic, remove an edge"
            )
        return order

    def check_columns(self, columns: Iterable[str], what: str = "data") -> None:
        """Every used column must be a node and every node a column."""
        columns = list(columns)
        missing = [c for c in columns if c not in self.nodes]
        if missing:
            raise FairpathInputError(f"the causal graph omits the column(s) {missing} used in the {what}; add them to the graph")
        unknown = [n for n in self.nodes if n not in columns]
        if unknown:
            raise FairpathInputError(f"the causal graph names {unknown}, which are not columns of the {what}")

    def to_dict(self) -> dict:
        return {"nodes": self.nodes, "edges": [list(e) for e in self.edges], "bidirected": [list(p) for p in self.bidirected]}

    def __repr__(self) -> str:
        return f"CausalGraph({len(self.nodes)} nodes, {len(self.edges)} edges, {len(self.bidirected)} bidirected)"


def graph_from_sfm(sfm) -> CausalGraph:
    """The Standard Fairness Model as a graph.

    X -> W, X -> Y, Z -> W, Z -> Y, W -> Y; the mediators form a chain in the order given
    (each W_j has the earlier W_i as parents, the most general order-respecting structure); each
    confounder Z is joined to X by a bidirected edge (X and Z share unobserved causes).
    """
    x, z, w, y = sfm.x, list(sfm.z), list(sfm.w), sfm.y
    edges = [(x, c) for c in (*w, y)]
    edges += [(c, t) for c in z for t in (*w, y)]
    edges += [(a, b) for i, b in enumerate(w) for a in w[:i]]
    edges += [(c, y) for c in w]
    return CausalGraph([x, *z, *w, y], edges, [(x, c) for c in z])


def resolving_for_bn(sfm, bn) -> list[str]:
    """Resolving variables that realise a BN set on the SFM: SE in BN <-> Z resolving, IE in BN <-> W resolving.

    The direct pathway is never kept by adaptation (X itself cannot be resolving), so DE in the BN
    set is refused with an explanation.
    """
    pathways = parse_bn(bn)
    if "DE" in pathways:
        raise FairpathInputError(
            "data adaptation removes the direct effect in every case (X itself cannot be resolving); "
            "a BN set with DE asks for no repair of the direct pathway: use the original predictor, "
            "or constrained learning with DE in the BN set"
        )
    roles = [RESOLVING_ROLE[p] for p in ("SE", "IE") if p in pathways]  # Z before W, as the SFM lists them
    return [column for role in roles for column in getattr(sfm, role)]
