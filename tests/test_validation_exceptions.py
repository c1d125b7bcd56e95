"""The shared argument and table checks: each error names the argument and says what to pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._validation import (
    MAX_BOOTSTRAP_DRAWS, MAX_SEED, check_bool, check_choice, check_columns_arg, check_comparable_scales, check_draws, check_figure_file, check_finite,
    check_group_sizes,
    check_frame, check_int, check_list_arg, check_nonnegative, check_output_dir, check_output_file, check_probability, check_seed,
)


@pytest.mark.parametrize("value, message", [
    (2.0, r"n_folds must be an integer, got 2\.0 \(float\); pass 2"),
    (True, r"n_folds must be an integer, got True \(bool\)"),
    ("5", r"n_folds must be an integer, got '5' \(str\)"),
    (1, "n_folds must be an integer ≥ 2, got 1"),
])
def test_check_int(value, message):
    with pytest.raises(FairpathInputError, match=message):
        check_int("n_folds", value, minimum=2)


def test_check_int_accepts_numpy_integers():
    assert check_int("n", np.int64(3), minimum=2) == 3 and type(check_int("n", np.int64(3))) is int


@pytest.mark.parametrize("value, message", [
    (None, "seed must be a non-negative integer, got None; fairpath results are always seeded"),
    (-1, "seed must be an integer ≥ 0, got -1"),
    (1.5, r"seed must be an integer, got 1\.5 \(float\)"),
])
def test_check_seed(value, message):
    with pytest.raises(FairpathInputError, match=message):
        check_seed(value)


def test_probability_bool_and_choice():
    with pytest.raises(FairpathInputError, match=r"level must lie in \(0, 1\), got 1\.0"):
        check_probability("level", 1.0)
    with pytest.raises(FairpathInputError, match=r"trim must be true or false, got 'false' \(str\) \(a string: write it without quotes\)"):
        check_bool("trim", "false")
    with pytest.raises(FairpathInputError, match="unknown method 'magic'; use one of debiasing, medDML"):
        check_choice("method", "magic", ("debiasing", "medDML"))
    with pytest.raises(FairpathInputError, match=r"unknown method \['a'\]"):
        check_choice("method", ["a"], ("debiasing",))


def test_a_string_is_one_column_name():
    assert check_columns_arg("predictors", "northpointe") == ["northpointe"]
    with pytest.raises(FairpathInputError, match=r"predictors must hold column names \(strings\), got 3 \(int\)"):
        check_columns_arg("predictors", ["a", 3])


def test_output_paths(tmp_path):
    existing = tmp_path / "results.csv"
    existing.write_text("a\n")
    with pytest.raises(FairpathInputError, match=r"output folder .*results\.csv' is an existing file, not a folder"):
        check_output_dir(existing)
    with pytest.raises(FairpathInputError, match=r"cannot create output folder .*results\.csv/out'.*is a file, not a folder"):
        check_output_dir(existing / "out")
    with pytest.raises(FairpathInputError, match=r"output file .* is an existing folder; name a file"):
        check_output_file(tmp_path)
    with pytest.raises(FairpathInputError, match="is a file, not a folder"):
        check_output_file(existing / "figure.png")
    assert check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing


def test_frames():
    with pytest.raises(FairpathInputError, match=r"data must be a pandas DataFrame, got ndarray; wrap it as pandas\.DataFrame"):
        check_frame(np.zeros((3, 2)))
    with pytest.raises(FairpathInputError, match=r"duplicated column name\(s\) \['a'\]"):
        check_frame(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(FairpathInputError, match=r"infinite values \(inf\) in used columns \('b': 2\)"):
        check_finite(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [np.inf, -np.inf, 0.0]}))


def test_seeds_are_bounded_by_numpy():
    assert check_seed(MAX_SEED) == 2**32 - 1
    np.random.RandomState(check_seed(MAX_SEED))  # the largest seed numpy takes
    with pytest.raises(FairpathInputError, match=r"seed must be an integer ≤ 4294967295, got 4294967296"):
        check_seed(2**32)


def test_bootstrap_draws_have_a_minimum_and_a_documented_maximum():
    assert check_draws("n_boot", 0, allow_zero=True) == 0 and check_draws("n_boot", 2) == 2 and check_draws("n_boot", MAX_BOOTSTRAP_DRAWS) == MAX_BOOTSTRAP_DRAWS
    with pytest.raises(FairpathInputError, match="n_boot must be 0 \\(no interval\\) or an integer ≥ 2, got 1: one draw gives a zero-width interval"):
        check_draws("n_boot", 1, allow_zero=True)
    with pytest.raises(FairpathInputError, match="n_boot must be an integer ≥ 2, got 1"):
        check_draws("n_boot", 1)
    with pytest.raises(FairpathInputError, match="n_boot must be an integer ≤ 100,000 \\(fairpath's bound\\), got 100,001"):
        check_draws("n_boot", MAX_BOOTSTRAP_DRAWS + 1)


def test_nonnegative_and_list_arguments():
    assert check_nonnegative("λ", 0) == 0.0 and check_nonnegative("λ", np.inf) == np.inf
    for bad in (-0.1, np.nan, "1", True):
        with pytest.raises(FairpathInputError, match="λ must be a number ≥ 0"):
            check_nonnegative("λ", bad)
    assert check_list_arg("scorers", "vader") == ["vader"]
    assert check_columns_arg("resolving", {"w", "z"}) == ["w", "z"]
    with pytest.raises(FairpathInputError, match="scorers must be a name or a list of them, got 5 \\(int\\)"):
        check_list_arg("scorers", 5)


@pytest.mark.parametrize("value", [1e308, -1e60])
def test_huge_finite_values_are_refused_before_they_overflow(value):
    frame = pd.DataFrame({"age": [20.0, 30.0, value, 40.0]})
    with pytest.raises(FairpathInputError, match=r"column 'age' holds 1 value\(s\) beyond ±1e\+50 .*first in row 2 \(data row 3, line 4 .*rescale"):
        check_finite(frame)
    check_finite(frame.assign(age=[20.0, 30.0, 1e50, 40.0]))  # the bound itself is fine


def test_a_numeric_role_refuses_any_text_naming_the_role():
    frame = pd.DataFrame({"score": [0.1, 0.5, "high", 0.7]}, index=["r1", "r2", "r3", "r4"])
    with pytest.raises(FairpathInputError, match=r"predictor column 'score' is not numeric: 1 of 4 non-missing cells are not numbers, "
                                                 r"token\(s\) 'high' \(1x\), the first in row 'r3'; encode it as 0/1"):
        check_finite(frame, {"score": "predictor"})


@pytest.mark.parametrize("y, p, scale", [
    ([-1, 1, 1, -1], [0.2, 0.9, 0.6, 0.1], r"values \{-1, 1\}"),
    ([0, 100, 100, 0], [0.2, 0.9, 0.6, 0.1], r"values \{0, 100\}"),
    ([0, 1, 1, 0], [0, 100, 100, 0], r"values \{0, 1\}"),
    ([0.0, 2.0, 5.0, 1.0], [10.0, 30.0, 50.0, 20.0], r"range \[0, 5\]"),
])
def test_outcome_and_predictor_on_different_scales(y, p, scale):
    with pytest.raises(FairpathInputError, match=rf"predictor column 'yhat' \(range \[.*\]\) is not on the scale of outcome column 'y' \({scale}\); "
                                                  "their causal effects are compared, so put both on one scale"):
        check_comparable_scales("y", y, "yhat", p)


@pytest.mark.parametrize("y, p", [([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.1]), ([0, 1, 1, 0], [0, 1, 1, 1]), ([-1, 1, 1, -1], [-1, 1, -1, -1]),
                                  ([0.0, 2.0, 5.0, 1.0], [0.5, 2.5, 4.0, 1.5]), ([0, 1, 1, 0], [-0.1, 1.2, 0.8, 0.3])])
def test_outcome_and_predictor_on_one_scale(y, p):
    check_comparable_scales("y", y, "yhat", p)


def test_figure_file_needs_a_format_suffix(tmp_path):
    assert check_figure_file(tmp_path / "fig.PNG", "--plot file").name == "fig.PNG"
    with pytest.raises(FairpathInputError, match=r"--plot file '.*fig' has no figure format as its suffix; end it with one of .*\.pdf.*\.png.*, e.g. fig\.png"):
        check_figure_file(tmp_path / "fig", "--plot file")


def test_group_sizes_name_numpy_levels_as_written():
    # found by tests/test_fuzz.py: a 0/1 column's levels are NumPy integers, whose repr is np.int64(1) in NumPy 2
    with pytest.raises(FairpathInputError, match=r"^group x=1 has 1 rows; at least 2 are needed; use more data or merge levels$"):
        check_group_sizes({np.int64(0): 300, np.int64(1): 1}, "x", 2)
