"""Bad input to the adaptation: errors that name the column, level or setting."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.repair import CausalGraph, FairAdapt

GRAPH = CausalGraph(["x", "c", "w", "y"], [("x", "c"), ("x", "w"), ("c", "y"), ("w", "y"), ("x", "y")])


def frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n)
    return pd.DataFrame({"x": x, "c": rng.choice(["red", "blue"], n), "w": rng.standard_normal(n) + x, "y": rng.integers(0, 2, n)})


def test_protected_attribute_with_a_parent():
    graph = CausalGraph(["x", "w", "y"], [("w", "x"), ("x", "y"), ("w", "y")])
    data = frame()[["x", "w", "y"]]
    with pytest.raises(FairpathInputError, match=r"protected attribute 'x' has parents \['w'\]"):
        FairAdapt(graph, "x", 0, "y").fit(data)


def test_protected_attribute_as_resolving_variable():
    with pytest.raises(FairpathInputError, match="'x' cannot be a resolving variable"):
        FairAdapt(GRAPH, "x", 0, "y", resolving=["x"]).fit(frame())


def test_unknown_resolving_variable():
    with pytest.raises(FairpathInputError, match=r"resolving variables \['income'\] are not nodes"):
        FairAdapt(GRAPH, "x", 0, "y", resolving=["income"]).fit(frame())


def test_graph_naming_a_column_missing_from_the_data():
    with pytest.raises(FairpathInputError, match=r"names \['c'\], which are not columns of the data"):
        FairAdapt(GRAPH, "x", 0, "y").fit(frame().drop(columns="c"))


def test_graph_omitting_the_outcome():
    graph = CausalGraph(["x", "w"], [("x", "w")])
    with pytest.raises(FairpathInputError, match="omits the outcome 'y'"):
        FairAdapt(graph, "x", 0, "y").fit(frame())


def test_missing_values_are_counted_per_column():
    data = frame()
    data.loc[:4, "w"] = np.nan
    with pytest.raises(FairpathInputError, match=r"missing values \(NaN\) in used columns \('w': 5\)"):
        FairAdapt(GRAPH, "x", 0, "y").fit(data)


def test_protected_attribute_levels():
    data = frame()
    with pytest.raises(FairpathInputError, match="baseline level 7 does not occur"):
        FairAdapt(GRAPH, "x", 7, "y").fit(data)
    data.loc[0, "x"] = 2
    with pytest.raises(FairpathInputError, match="must have exactly two levels"):
        FairAdapt(GRAPH, "x", 0, "y").fit(data)


def test_non_numeric_outcome():
    data = frame().assign(y=lambda d: np.where(d.y == 1, "yes", "no"))
    with pytest.raises(FairpathInputError, match="outcome 'y' must be numeric"):
        FairAdapt(GRAPH, "x", 0, "y").fit(data)


def test_unseen_category_in_new_rows():
    adapter = FairAdapt(GRAPH, "x", 0, "y", engine="linear").fit(frame())
    new = frame(20, seed=1)
    new.loc[3, "c"] = "green"
    with pytest.raises(FairpathInputError, match=r"column 'c' has categories \['green'\] that the adaptation never saw"):
        adapter.transform(new)


def test_new_rows_with_an_unseen_group_or_missing_column():
    adapter = FairAdapt(GRAPH, "x", 0, "y", engine="linear").fit(frame())
    with pytest.raises(FairpathInputError, match=r"'x' has levels \['5'\] not seen in training"):
        adapter.transform(frame(10).assign(x=5))
    with pytest.raises(FairpathInputError, match=r"lacks the column\(s\) \['w'\]"):
        adapter.transform(frame(10).drop(columns="w"))


def test_transform_before_fit():
    with pytest.raises(FairpathInputError, match="not fitted yet"):
        FairAdapt(GRAPH, "x", 0, "y").transform(frame())
