"""The shared argument and table checks: each error names the argument and says what to pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._validation import (
    check_bool, check_choice, check_columns_arg, check_finite, check_frame, check_int, check_output_dir,
    check_output_file, check_probability, check_seed,
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
