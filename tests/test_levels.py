"""Building a protected attribute with several levels: the product of columns, merged and dropped levels,
and parsing --merge / --drop-levels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath._levels import RecodedLevels, combine_attributes, recode_levels
from fairpath.cli._common import comma_list, parse_merge


@pytest.fixture
def people():
    return pd.DataFrame({
        "race": ["black", "white", "white", "asian", "black", "native", "white", "black"],
        "sex": ["female", "male", "female", "male", "male", "female", "male", "female"],
        "y": np.arange(8.0),
    }, index=[10, 11, 12, 13, 14, 15, 16, 17])


def test_combined_attribute_joins_the_levels(people):
    before = people.copy()
    combined, name = combine_attributes(people, ["race", "sex"])
    assert name == "race/sex"
    assert combined[name].tolist() == ["black/female", "white/male", "white/female", "asian/male", "black/male",
                                       "native/female", "white/male", "black/female"]
    assert combined[name].value_counts().to_dict() == {"black/female": 2, "white/male": 2, "white/female": 1, "asian/male": 1,
                                                       "black/male": 1, "native/female": 1}
    assert list(combined.columns) == ["race", "sex", "y", "race/sex"] and combined.index.tolist() == list(range(10, 18))
    assert people.equals(before)


def test_three_columns_and_numbers_as_their_text(people):
    data = people.assign(age=[1, 2, 2, 1, 1, 2, 1, 2])
    combined, name = combine_attributes(data, ["sex", "age", "race"])
    assert name == "sex/age/race"
    assert combined[name].iloc[:3].tolist() == ["female/1/black", "male/2/white", "female/2/white"]


def test_merge_renames_several_levels_into_one(people):
    before = people.copy()
    result = recode_levels(people, "race", merge={"asian": "other", "native": "other"})
    assert isinstance(result, RecodedLevels) and result.column == "race" and result.dropped == {}
    assert result.data["race"].tolist() == ["black", "white", "white", "other", "black", "other", "white", "black"]
    assert result.data["race"].value_counts().to_dict() == {"black": 3, "white": 3, "other": 2}
    assert result.describe() == "" and people.equals(before)


def test_merge_into_an_existing_level(people):
    result = recode_levels(people, "race", merge={"asian": "white"})
    assert result.data["race"].value_counts().to_dict() == {"white": 4, "black": 3, "native": 1}


def test_drop_removes_only_the_named_levels_and_counts_them(people):
    result = recode_levels(people, "race", drop_levels=["native", "asian"])
    assert result.dropped == {"native": 1, "asian": 1}
    assert result.data.index.tolist() == [10, 11, 12, 14, 16, 17]
    assert result.data["race"].tolist() == ["black", "white", "white", "black", "white", "black"]
    assert result.describe() == "dropped 2 rows of column 'race', level(s) 'native' (1 row), 'asian' (1 row)"
    assert len(people) == 8


def test_one_dropped_level_by_its_name(people):
    assert recode_levels(people, "race", drop_levels="native").dropped == {"native": 1}


def test_merge_and_drop_on_a_combined_attribute(people):
    combined, name = combine_attributes(people, ["race", "sex"])
    result = recode_levels(combined, name, merge={"asian/male": "other", "native/female": "other"}, drop_levels=["white/female"])
    assert result.dropped == {"white/female": 1}
    assert result.data[name].value_counts().to_dict() == {"black/female": 2, "white/male": 2, "other": 2, "black/male": 1}
    assert result.describe() == "dropped 1 row of column 'race/sex', level(s) 'white/female' (1 row)"


def test_a_dropped_category_leaves_no_empty_level(people):
    data = people.astype({"race": "category"})
    result = recode_levels(data, "race", drop_levels=["asian", "native"])
    assert result.data["race"].value_counts().to_dict() == {"black": 3, "white": 3}


def test_a_repeated_index_label(people):
    data = people.set_axis([1, 1, 2, 2, 3, 3, 4, 4])
    result = recode_levels(data, "race", merge={"asian": "other", "native": "other"}, drop_levels=["white"])
    assert result.data.index.tolist() == [1, 2, 3, 3, 4] and result.data["race"].tolist() == ["black", "other", "black", "other", "black"]
    assert result.dropped == {"white": 3}


def test_numeric_levels_are_named_by_their_text():
    data = pd.DataFrame({"x": [0, 1, 2, 2, 3, 1, 0], "y": range(7)})
    dropped = recode_levels(data, "x", drop_levels=["3"])
    assert dropped.dropped == {"3": 1} and dropped.data["x"].tolist() == [0, 1, 2, 2, 1, 0]
    assert dropped.data["x"].dtype == data["x"].dtype  # without merge the values keep their type
    merged = recode_levels(data, "x", merge={"2": "2+", "3": "2+"})
    assert merged.data["x"].tolist() == ["0", "1", "2+", "2+", "2+", "1", "0"]


def test_parse_merge_and_lists():
    assert parse_merge("asian=other,native=other") == {"asian": "other", "native": "other"}
    # names exactly as written, spaces included: " native " is not "native" (recode_levels then says so)
    assert parse_merge("asian=other, native = other") == {"asian": "other", " native ": " other"}
    assert parse_merge("black/female=bf") == {"black/female": "bf"}
    assert parse_merge("") == {} and parse_merge(None) == {}
    assert comma_list("asian, native") == ["asian", "native"] and comma_list("") == []
