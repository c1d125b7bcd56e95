"""Bad input to building and cleaning a multi-level protected attribute, and the floor on each level's rows."""

from __future__ import annotations

import argparse
import re

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._levels import combine_attributes, match_level, recode_levels
from fairpath._validation import check_fit_group_sizes, check_group_sizes, check_level_sizes
from fairpath.cli._common import parse_level_names, parse_merge


@pytest.fixture
def people():
    return pd.DataFrame({"race": ["black", "white", "white", "asian", "black"], "sex": ["f", "m", "f", "m", "m"], "y": range(5)})


def raises(message):
    return pytest.raises(FairpathInputError, match=f"^{re.escape(message)}$")


def test_combine_needs_two_distinct_present_columns(people):
    with raises("combine_attributes needs at least two columns to combine, got ['race']; one column is already an attribute"):
        combine_attributes(people, ["race"])
    with raises("combine_attributes needs at least two columns to combine, got ['race']; one column is already an attribute"):
        combine_attributes(people, "race")
    with raises("column(s) ['race'] given more than once in ['race', 'sex', 'race']; name each column once"):
        combine_attributes(people, ["race", "sex", "race"])
    with raises("column(s) ['gender'] not found in the data; available columns: ['race', 'sex', 'y']"):
        combine_attributes(people, ["race", "gender"])
    with raises("columns must hold column names (strings), got 1 (int)"):
        combine_attributes(people, ["race", 1])


def test_combine_refuses_an_existing_name(people):
    with raises("the data already have a column 'race/sex', the name of the combined attribute of ['race', 'sex']; "
                "rename or drop it first"):
        combine_attributes(people.assign(**{"race/sex": 1}), ["race", "sex"])


def test_combine_refuses_missing_values(people):
    data = people.assign(sex=["f", None, "f", np.nan, "m"])
    with raises("column 'sex' has missing values in 2 rows (the first: row 1 (data row 2, line 3 of a CSV file with a header)); "
                "combining attributes needs a level in every row: impute or drop these rows first, or give the missing value "
                "a level of its own (e.g. fill them with 'unknown')"):
        combine_attributes(data, ["race", "sex"])


def test_combine_refuses_the_separator_in_a_level(people):
    with raises("column 'sex' has level(s) ['n/a'] containing '/', which separates the levels of the combined attribute; "
                "rename them first, e.g. recode_levels(data, 'sex', merge={'n/a': 'n-a'})"):
        combine_attributes(people.assign(sex=["f", "n/a", "f", "m", "m"]), ["race", "sex"])


def test_values_written_alike_are_refused(people):
    with raises("column 'sex' holds different values written alike, ['1'] (e.g. the number 1 and the text '1'); their rows would "
                "become one level: make the column's values one type first"):
        combine_attributes(people.assign(sex=pd.Series([1, "1", "f", "m", "m"], dtype=object)), ["race", "sex"])


def test_recode_refuses_unknown_levels(people):
    with raises("merge names level(s) ['Asian'] that column 'race' does not have; its levels are ['asian', 'black', 'white']"):
        recode_levels(people, "race", merge={"Asian": "other"})
    with raises("drop_levels names level(s) ['hispanic', 'other'] that column 'race' does not have; its levels are "
                "['asian', 'black', 'white']"):
        recode_levels(people, "race", drop_levels=["hispanic", "asian", "other"])
    with raises("column(s) ['ethnicity'] not found in the data; available columns: ['race', 'sex', 'y']"):
        recode_levels(people, "ethnicity", drop_levels=["asian"])


def test_recode_refuses_leaving_one_level(people):
    with raises("dropping ['asian', 'white'] in column 'race' leaves 1 level(s) ['black']; a comparison needs at least two "
                "(its levels: ['asian', 'black', 'white'])"):
        recode_levels(people, "race", drop_levels=["asian", "white"])
    with raises("merging {'asian': 'all', 'black': 'all', 'white': 'all'} in column 'race' leaves 1 level(s) ['all']; a comparison "
                "needs at least two (its levels: ['asian', 'black', 'white'])"):
        recode_levels(people, "race", merge={"asian": "all", "black": "all", "white": "all"})
    with raises("merging {'asian': 'white'} and dropping ['black'] in column 'race' leaves 1 level(s) ['white']; a comparison needs "
                "at least two (its levels: ['asian', 'black', 'white'])"):
        recode_levels(people, "race", merge={"asian": "white"}, drop_levels=["black"])
    with raises("column 'race' holds 1 level(s) ['black']; a comparison needs at least two (its levels: ['black'])"):
        recode_levels(people.assign(race="black"), "race")


def test_recode_refuses_contradictions_and_bad_names(people):
    with raises("level(s) ['asian'] are both merged (from or into) and dropped; choose one for each"):
        recode_levels(people, "race", merge={"asian": "white"}, drop_levels=["asian"])
    with raises("level(s) ['white'] are both merged (from or into) and dropped; choose one for each"):
        recode_levels(people, "race", merge={"asian": "white"}, drop_levels=["white"])
    with raises("drop_levels names level(s) ['asian'] more than once; name each level once"):
        recode_levels(people, "race", drop_levels=["asian", "asian"])
    with raises("merge must map level names (strings) to new non-empty names (strings), got 'asian' -> ' '; "
                "a level's name is its cells' text, e.g. '1' for the number 1"):
        recode_levels(people, "race", merge={"asian": " "})
    with raises("merge must map level names (strings) to new non-empty names (strings), got 1 -> 'low'; "
                "a level's name is its cells' text, e.g. '1' for the number 1"):
        recode_levels(people.assign(race=[1, 2, 2, 3, 1]), "race", merge={1: "low"})
    with raises("drop_levels must hold level names (strings), got 3 (int); a level's name is its cells' text, e.g. '1' for the number 1"):
        recode_levels(people.assign(race=[1, 2, 2, 3, 1]), "race", drop_levels=[3])
    with raises("merge must be a dict of level names to new names, e.g. {'asian': 'other'}, got list"):
        recode_levels(people, "race", merge=[("asian", "other")])
    with raises("column 'race' has missing values in 1 rows (the first: row 4 (data row 5, line 6 of a CSV file with a header)); "
                "recoding levels needs a level in every row: impute or drop these rows first, or give the missing value a level "
                "of its own (e.g. fill them with 'unknown')"):
        recode_levels(people.assign(race=["black", "white", "white", "asian", None]), "race", drop_levels=["asian"])


def test_level_sizes_lists_every_small_level_and_both_remedies():
    counts = {"white/male": 900, "asian/female": 7, "native/male": 3, "black/female": 120, "asian/male": 7}
    with raises("column 'race/sex' has 3 levels with fewer than 10 rows: 'native/male' (3 rows), 'asian/female' (7 rows), "
                "'asian/male' (7 rows); each cross-fitting fold needs 10 rows per level. Merge each into another level "
                "(merge={'native/male': 'other', 'asian/female': 'other', 'asian/male': 'other'}) or drop their rows explicitly "
                "(drop_levels=['native/male', 'asian/female', 'asian/male'])"):
        check_level_sizes(counts, "race/sex", 10, reason="each cross-fitting fold needs 10 rows per level")
    check_level_sizes(counts, "race/sex", 3, reason="unused")  # every level has 3 rows or more


def test_fit_group_sizes_with_more_than_two_levels_list_them_all():
    counts = {np.int64(0): 400, np.int64(1): 12, np.int64(2): 1, np.int64(3): 60}
    with raises("column 'x' has 2 levels with fewer than 50 rows: '2' (1 row), '1' (12 rows); 5-fold cross-fitting needs at least "
                "50 rows per level (10 per fold; fewer folds need fewer). Merge each into another level (merge={'2': 'other', "
                "'1': 'other'}) or drop their rows explicitly (drop_levels=['2', '1'])"):
        check_fit_group_sizes(counts, "x", 5)
    with raises("column 'x' has 1 level with fewer than 10 rows: '2' (1 row); fitting in the training part needs at least 10 rows "
                "per level. Merge each into another level (merge={'2': 'other'}) or drop their rows explicitly (drop_levels=['2'])"):
        check_fit_group_sizes(counts, "x", purpose="in the training part")
    with raises("column 'x' has 1 level with fewer than 2 rows: '2' (1 row); each level needs at least 2. Merge each into another "
                "level (merge={'2': 'other'}) or drop their rows explicitly (drop_levels=['2'])"):
        check_group_sizes(counts, "x", 2)


def test_binary_messages_are_unchanged():
    with raises("group x=1 has 3 rows; 3-fold cross-fitting needs at least 30 (10 per fold and group): use fewer folds or more data"):
        check_fit_group_sizes({0: 500, 1: 3}, "x", 3)
    with raises("group x='b' has 1 rows; fitting needs at least 10 (10 per group): use more data or merge levels"):
        check_fit_group_sizes({"a": 500, "b": 1}, "x")


@pytest.mark.parametrize("text, message", [
    ("A=", "--merge entry 'A=' has no new name after '='"),
    ("=B", "--merge entry '=B' has no level name before '='"),
    ("A=B=C", "--merge entry 'A=B=C' has more than one '='"),
    ("asian=other,native", "--merge entry 'native' has no '='"),
])
def test_parse_merge_refuses_malformed_entries(text, message):
    with pytest.raises(argparse.ArgumentTypeError, match="^" + re.escape(message + '; write LEVEL=NEW, comma-separated, '
                                                                          'e.g. --merge "asian=other,native=other"') + "$"):
        parse_merge(text)


def test_parse_merge_refuses_a_level_twice():
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape("--merge gives level 'A' twice (into 'B' and 'C'); merge each level once")):
        parse_merge("A=B,A=C")


def test_merge_flag_error_reaches_the_user(capsys):
    parser = argparse.ArgumentParser(prog="fairpath")
    parser.add_argument("--merge", type=parse_merge)
    with pytest.raises(SystemExit):
        parser.parse_args(["--merge", "A="])
    assert "fairpath: error: argument --merge: --merge entry 'A=' has no new name after '='" in capsys.readouterr().err


# -- names are matched exactly as written (issue 41) -----------------------------------------------

@pytest.fixture
def spaced():
    return pd.DataFrame({"x": ["base", "base", "other", "other", "third"], "y": range(5)})


def test_a_name_with_spaces_is_never_trimmed_to_another_level(spaced):
    hint = "(level names are matched exactly as written, spaces included: ' base' is not 'base')"
    with raises(f"drop_levels names level(s) [' base'] that column 'x' does not have {hint}; its levels are ['base', 'other', 'third']"):
        recode_levels(spaced, "x", drop_levels=parse_level_names(" base"))
    with raises(f"merge names level(s) [' base'] that column 'x' does not have {hint}; its levels are ['base', 'other', 'third']"):
        recode_levels(spaced, "x", merge=parse_merge(" base=other"))
    with raises(f"level ' base' does not occur in column 'x' {hint}; its levels are ['base', 'other', 'third']"):
        match_level(spaced["x"], " base")


def test_a_name_with_spaces_names_the_level_written_so(spaced):
    data = spaced.assign(x=["base", " base", "other", "other", "third"])
    dropped = recode_levels(data, "x", drop_levels=parse_level_names(" base"))
    assert dropped.dropped == {" base": 1} and dropped.data["x"].tolist() == ["base", "other", "other", "third"]
    merged = recode_levels(data, "x", merge=parse_merge(" base=third"))
    assert merged.data["x"].tolist() == ["base", "third", "other", "other", "third"]
    assert match_level(data["x"], " base") == " base" and match_level(data["x"], "base") == "base"


def test_numbers_and_their_texts_name_one_level_each():
    numbers = pd.Series([0, 1, 1, 0], name="x")
    assert match_level(numbers, "1") == 1 and match_level(numbers, 0) == 0  # a flag's text, a settings file's integer
    for name in ("01", "1.0", " 1"):
        with pytest.raises(FairpathInputError, match=f"^level {re.escape(repr(name))} does not occur in column 'x'"):
            match_level(numbers, name)
    with raises("column 'x' holds different values written alike, '1' (e.g. the number 1 and the text '1'); make the column's values "
                "one type first"):
        match_level(pd.Series([1, "1", 0], name="x"), "1")


@pytest.mark.parametrize("name, text", [(True, "true"), (False, "false"), (1.0, "1.0"), (None, "None")])
def test_a_level_named_by_other_than_its_text_is_refused(name, text):
    message = (f"a level is named by its cells' text, got {name!r} ({type(name).__name__}); write the level exactly as the data "
               f"write it, quoted in a settings file (e.g. x0: '{text}' in YAML, x0 = \"{text}\" in TOML)")
    with raises(message):
        match_level(pd.Series([0, 1], name="x"), name)


def test_level_lists_refuse_empty_entries():
    assert parse_level_names("a,b") == ["a", "b"] and parse_level_names(" a, b") == [" a", " b"] and parse_level_names(None) == []
    for text in ("a,,b", "a,", "a, "):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(f"level list {text!r} has an empty entry")):
            parse_level_names(text)
