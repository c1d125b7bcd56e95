"""Atomic writes: a result file is replaced whole or not at all."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from fairpath._io import atomic_path, atomic_write_text, read_table, save_figure, write_csv
from fairpath._results import write_json


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "result.json"
    write_json({"a": float("nan"), "b": 1}, path)
    assert path.read_text() == '{\n  "a": null,\n  "b": 1\n}'
    atomic_write_text("second", path)
    assert path.read_text() == "second"
    assert sorted(p.name for p in path.parent.iterdir()) == ["result.json"]
    mode = stat.S_IMODE(os.stat(path).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # not mkstemp's private 0600


def test_a_failing_writer_keeps_the_old_file(tmp_path):
    path = tmp_path / "table.csv"
    write_csv(pd.DataFrame({"a": [1, 2]}), path)
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_path(path) as temporary:
            temporary.write_text("a\n1\n")  # half of the new content
            raise RuntimeError("disk full")
    assert path.read_text() == "a\n1\n2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_figures_keep_their_format_through_the_temporary_name(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = save_figure(fig, tmp_path / "figure.png", dpi=50)
    plt.close(fig)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_csv_cells_a_spreadsheet_would_run_are_neutralised_and_numbers_are_not(tmp_path):
    frame = pd.DataFrame({"=HYPERLINK(\"http://x\")": [1, 2, 3, 4, 5, 6],
                          "text": ["=1+2", "+cmd|' /C calc'!A0", "@SUM(A1)", "-2+3", "\tx", "plain"],
                          "numbers as text": ["-0.0063", "+1.5", "-", "-inf", "1e-3", "a-b"],
                          "estimate": [-0.0063, 0.5, -1.0, 2.0, -3.5, 0.0]})
    path = write_csv(frame, tmp_path / "table.csv")
    back = pd.read_csv(path, keep_default_na=False)
    assert list(back.columns) == ["'=HYPERLINK(\"http://x\")", "text", "numbers as text", "estimate"]
    assert back["text"].tolist() == ["'=1+2", "'+cmd|' /C calc'!A0", "'@SUM(A1)", "'-2+3", "'\tx", "plain"]
    assert back["numbers as text"].tolist() == ["-0.0063", "+1.5", "-", "-inf", "1e-3", "a-b"]
    assert back["estimate"].tolist() == [-0.0063, 0.5, -1.0, 2.0, -3.5, 0.0]  # numbers stay numbers
    assert frame["text"].iloc[0] == "=1+2"  # the caller's frame is not changed
    numbers = pd.DataFrame({"=x": [-1.5], 0: [2]})  # no text column; a formula-like and a non-string name
    assert write_csv(numbers, tmp_path / "numbers.csv").read_text() == "'=x,0\n-1.5,2\n"
    assert list(numbers.columns) == ["=x", 0]


# -- levels: the cells' exact text (issue 41) ------------------------------------------------------

LEVEL_TEXTS = ["0", "00", "01", "1", "1.0", "true", "True", "None", " base", "base", "c vs b"]


def _levels_csv(tmp_path, texts):
    path = tmp_path / "levels.csv"
    pd.DataFrame({"x": texts, "y": range(len(texts))}).to_csv(path, index=False)
    return path


def test_a_protected_attribute_is_read_as_its_cells_text(tmp_path):
    texts = [text for text in LEVEL_TEXTS for _ in range(2)]
    path = _levels_csv(tmp_path, texts)
    expected = pd.read_csv(path, dtype=str, keep_default_na=False)["x"].value_counts().to_dict()
    for options in ({"levels": ["x"]}, {"categorical": ["x"]}, {"levels": ["x"], "categorical": ["x"]}):
        read = read_table(path, **options)["x"]
        assert read.astype(str).value_counts().to_dict() == expected, options
        assert len(expected) == len(LEVEL_TEXTS) and expected[" base"] == 2 and expected["None"] == 2


def test_a_column_of_levels_keeps_its_numbers_where_they_are_its_text(tmp_path):
    clean = read_table(_levels_csv(tmp_path, ["0", "1", "2", "10"]), levels=["x"])["x"]
    assert clean.dtype == "int64" and clean.tolist() == [0, 1, 2, 10]  # as before: --x0 0 names 0, levels sort as numbers
    assert read_table(_levels_csv(tmp_path, ["0.5", "1.5"]), levels=["x"])["x"].tolist() == [0.5, 1.5]
    for texts in (["1", "01"], ["1", "1.0"], ["1", "1e3"], ["true", "false"], ["-0", "1"]):
        assert read_table(_levels_csv(tmp_path, texts), levels="x")["x"].tolist() == texts, texts


def test_categorical_is_read_as_text_in_numeric_order_where_every_text_is_a_number(tmp_path):
    codes = read_table(_levels_csv(tmp_path, ["10", "2", "1", "2"]), categorical=["x"])["x"]
    assert list(codes.cat.categories) == ["1", "2", "10"]  # the order numeric categories had, so the encoding is unchanged
    zips = read_table(_levels_csv(tmp_path, ["02139", "2139", "10001"]), categorical=["x"])["x"]
    assert list(zips.cat.categories) == ["02139", "2139", "10001"] and zips.tolist() == ["02139", "2139", "10001"]
    words = read_table(_levels_csv(tmp_path, ["b", "10", "a"]), categorical=["x"])["x"]
    assert list(words.cat.categories) == ["10", "a", "b"]


def test_none_is_a_value_and_the_missing_markers_stay_missing(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\nNone,1\nNA,2\n,3\nnull,4\nnan,5\nN/A,6\na,7\n")
    assert read_table(path)["x"].tolist()[::6] == ["None", "a"] and read_table(path)["x"].isna().sum() == 5
    assert read_table(path, na_values=["None"])["x"].isna().sum() == 6  # where None means missing, it is declared


def test_a_partitioned_table_reads_levels_and_categories_as_text(tmp_path):
    pytest.importorskip("dask.dataframe")
    from fairpath._io import read_partitioned

    path = _levels_csv(tmp_path, LEVEL_TEXTS)
    expected = pd.read_csv(path, dtype=str, keep_default_na=False)["x"].tolist()
    assert read_partitioned(path, levels=["x"]).compute()["x"].tolist() == expected
    assert read_partitioned(path, categorical=["x"]).compute()["x"].astype(str).tolist() == expected
