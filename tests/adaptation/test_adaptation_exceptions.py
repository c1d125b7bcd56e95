"""Bad input to the adaptation: errors that name the column, level or setting."""

import re

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.adaptation import CausalGraph, FairAdapt

GRAPH = CausalGraph(["x", "c", "w", "y"], [("x", "c"), ("x", "w"), ("c", "y"), ("w", "y"), ("x", "y")])


def frame(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, n)
    return pd.DataFrame({"x": x, "c": rng.choice(["red", "blue"], n), "w": rng.standard_normal(n) + x, "y": rng.integers(0, 2, n)})


def test_protected_attribute_with_a_parent():
    graph = CausalGraph(["x", "w", "y"], [("w", "x"), ("x", "y"), ("w", "y")])
    data = frame()[["x", "w", "y"]]
    with pytest.raises(FairpathInputError, match=r"protected attribute 'x' has parents \['w'\]"):
        FairAdapt(graph, x="x", baseline=0, y="y").fit(data)


def test_protected_attribute_as_resolving_variable():
    with pytest.raises(FairpathInputError, match="'x' cannot be a resolving variable"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y", resolving=["x"]).fit(frame())


def test_unknown_resolving_variable():
    with pytest.raises(FairpathInputError, match=r"resolving variables \['income'\] are not nodes"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y", resolving=["income"]).fit(frame())


def test_graph_naming_a_column_missing_from_the_data():
    with pytest.raises(FairpathInputError, match=r"names \['c'\], which are not columns of the data"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(frame().drop(columns="c"))


def test_graph_omitting_the_outcome():
    graph = CausalGraph(["x", "w"], [("x", "w")])
    with pytest.raises(FairpathInputError, match="omits the outcome 'y'"):
        FairAdapt(graph, x="x", baseline=0, y="y").fit(frame())


def test_missing_values_are_counted_per_column():
    data = frame()
    data.loc[:4, "w"] = np.nan
    with pytest.raises(FairpathInputError, match=r"missing values \(NaN\) in used columns \('w': 5\)"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data)


def test_protected_attribute_levels():
    data = frame()
    with pytest.raises(FairpathInputError, match="baseline level 7 does not occur"):
        FairAdapt(GRAPH, x="x", baseline=7, y="y").fit(data)
    with pytest.raises(FairpathInputError, match=r"'x' has one level \(0\) only: adaptation needs a level to compare with the baseline"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data[data.x == 0])


def test_every_small_level_is_named_with_its_remedies():
    data = frame(300).assign(x=lambda d: d.x.map({0: "a", 1: "b"}))
    data.loc[:3, "x"] = "d"  # 4 rows
    data.loc[4:10, "x"] = "c"  # 7 rows
    with pytest.raises(FairpathInputError, match=re.escape(
        "column 'x' has 2 levels with fewer than 10 rows: 'd' (4 rows), 'c' (7 rows); fitting needs at least 10 rows per "
        "level. Merge each into another level (merge={'d': 'other', 'c': 'other'}")):
        FairAdapt(GRAPH, x="x", baseline="a", y="y", engine="linear").fit(data)


def test_non_numeric_outcome():
    data = frame().assign(y=lambda d: np.where(d.y == 1, "yes", "no"))
    with pytest.raises(FairpathInputError, match="outcome 'y' must be numeric"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data)


def test_new_rows_with_an_unseen_group_or_missing_column():
    adapter = FairAdapt(GRAPH, x="x", baseline=0, y="y", engine="linear").fit(frame())
    with pytest.raises(FairpathInputError, match=r"'x' has levels \['5'\] not seen in training \(expected one of \[0, 1\]\)"):
        adapter.transform(frame(10).assign(x=5))
    with pytest.raises(FairpathInputError, match=r"lacks the column\(s\) \['w'\]"):
        adapter.transform(frame(10).drop(columns="w"))


def test_transform_before_fit():
    with pytest.raises(FairpathInputError, match="not fitted yet"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").transform(frame())


# -- issue 11: degenerate input ---------------------------------------------------------------------

def test_graph_none():
    with pytest.raises(FairpathInputError, match=r"graph must be a CausalGraph, got NoneType; build one with graph_from_sfm\(sfm\)"):
        FairAdapt(None, x="x", baseline=0, y="y").fit(frame())


def test_numpy_training_data():
    with pytest.raises(FairpathInputError, match="training data must be a pandas DataFrame, got ndarray"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(frame().to_numpy())


def test_infinite_values_are_counted():
    data = frame()
    data.loc[:2, "w"] = np.inf
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('w': 3\)"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data)


def test_constant_outcome_and_one_row_group():
    with pytest.raises(FairpathInputError, match=r"outcome column 'y' is constant \(1\); there is nothing to explain"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(frame().assign(y=1))
    data = frame()
    data = pd.concat([data[data.x == 0], data[data.x == 1].head(1)])
    with pytest.raises(FairpathInputError, match=r"group x=1 has 1 rows; fitting needs at least 10 \(10 per group\)"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data)


def test_seed_and_levels_arguments():
    with pytest.raises(FairpathInputError, match="random_state must be a non-negative integer, got None"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y", random_state=None).fit(frame())
    with pytest.raises(FairpathInputError, match=r"discrete_max_levels must be an integer, got 10\.0 \(float\)"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y", discrete_max_levels=10.0).fit(frame())


def test_outcome_as_resolving_variable():
    with pytest.raises(FairpathInputError, match="the outcome 'y' cannot be a resolving variable; remove it from the resolving set"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y", resolving="y").fit(frame())


def test_one_resolving_name_is_one_column_not_its_characters():
    data = frame()
    graph = CausalGraph(["x", "cw", "y"], [("x", "cw"), ("cw", "y"), ("x", "y")])
    data = data.rename(columns={"w": "cw"})[["x", "cw", "y"]]
    as_text = FairAdapt(graph, x="x", baseline=0, y="y", resolving="cw", engine="linear").fit(data)
    as_list = FairAdapt(graph, x="x", baseline=0, y="y", resolving=["cw"], engine="linear").fit(data)
    assert as_text.resolving_ == ["cw"]
    pd.testing.assert_frame_equal(as_text.adapted_train_, as_list.adapted_train_)
    with pytest.raises(FairpathInputError, match=r"resolving must be a column name or a list of column names, got 3 \(int\)"):
        FairAdapt(graph, x="x", baseline=0, y="y", resolving=3).fit(data)


def test_adaptation_refuses_dirty_numeric_columns():
    data = frame().astype({"w": object})
    data.loc[5, "w"] = "n/a?"
    with pytest.raises(FairpathInputError, match=r"column 'w' holds numbers in 199 of 200 non-missing cells and the non-numeric token\(s\) 'n/a\?' \(1x\), the first in row 5"):
        FairAdapt(GRAPH, x="x", baseline=0, y="y").fit(data)
