"""The one encoder of categorical columns, against pandas' own encodings."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fairpath._encoding import MAX_ONE_HOT_LEVELS, CategoryEncoder
from fairpath._exceptions import FairpathInputError


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.normal(size=40), "flag": rng.integers(0, 2, 40).astype(bool),
                         "city": rng.choice(["b", "a", "c"], 40), "code": rng.choice([f"k{i:02d}" for i in range(12)], 40)})


def test_few_categories_become_the_indicators_of_get_dummies_and_many_become_codes(frame):
    encoder = CategoryEncoder(["age", "flag", "city", "code"]).fit(frame)
    matrix = encoder.transform(frame)
    dummies = pd.get_dummies(frame["city"], drop_first=True, dtype=float)
    np.testing.assert_array_equal(matrix[:, 2:4], dummies.to_numpy())
    np.testing.assert_array_equal(matrix[:, :2], frame[["age", "flag"]].to_numpy(dtype=float))
    np.testing.assert_array_equal(matrix[:, 4], pd.Categorical(frame["code"]).codes)  # 12 > MAX_ONE_HOT_LEVELS
    assert encoder.feature_names_ == ["age", "flag", "city=b", "city=c", "code"] and MAX_ONE_HOT_LEVELS == 10


def test_a_subset_of_rows_gets_the_training_columns_and_an_unseen_category_is_refused(frame):
    encoder = CategoryEncoder(["city"], max_one_hot_levels=math.inf, what="the test model").fit(frame)
    only_c = frame[frame["city"] == "c"]
    np.testing.assert_array_equal(encoder.transform(only_c), np.tile([0.0, 1.0], (len(only_c), 1)))
    with pytest.raises(FairpathInputError, match=r"column 'city' has categories \['z'\] that the test model never saw "
                                                 r"in training \(known: \['a', 'b', 'c'\]\); refit on data"):
        encoder.transform(frame.assign(city="z"))


def test_codes_for_trees_and_the_order_of_a_categorical_dtype(frame):
    ordered = frame.assign(city=pd.Categorical(frame["city"], categories=["c", "a", "b"]))
    codes = CategoryEncoder(["city"], max_one_hot_levels=0).fit_transform(ordered)[:, 0]
    np.testing.assert_array_equal(codes, ordered["city"].cat.codes)
