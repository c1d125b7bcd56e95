"""Reading tables and text files: missing values, empty-string categories, bad headers and encodings."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._io import read_table, read_text
from fairpath.causal import SFM, decompose
from fairpath.datasets import load_gov_census

CSV = "x,z,y,priors\na,1.5,1,0\nb,2.5,0,{blank}\na,0.5,1,10\nb,1.0,0,2\n"


@pytest.mark.parametrize("marker", ["", "NA", "N/A", "nan", "null", "NULL", "None"])
def test_missing_markers_keep_a_numeric_column_numeric(tmp_path, marker):
    path = tmp_path / "d.csv"
    path.write_text(CSV.format(blank=marker))
    data = read_table(path)
    assert data["priors"].dtype == float
    assert data["priors"].isna().sum() == 1
    assert data["priors"].dropna().tolist() == [0.0, 10.0, 2.0]


def test_blank_numeric_cell_is_an_error_naming_the_column_and_count(tmp_path):
    rows = ["x,z,y,priors"] + [f"{'ab'[i % 2]},{i % 7},{i % 3 == 0:d},{'' if i in (3, 8) else i % 5}" for i in range(60)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    sfm = SFM(x="x", x0="a", x1="b", z=["z"], w=["priors"], y="y")
    with pytest.raises(FairpathInputError, match=r"missing values \(NaN\) in used columns \('priors': 2\); impute or drop"):
        decompose(read_table(path), sfm, learner="linear", n_folds=2)


def test_empty_string_in_a_text_column_is_missing_unless_named_a_category(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('g,industry,y\na,"",1\nb,"6111",0\na,"928P",1\n')
    assert read_table(path)["industry"].isna().sum() == 1
    kept = read_table(path, empty_category=["industry"])
    assert kept["industry"].tolist() == ["", "6111", "928P"]
    # Only the empty string becomes a category; the other markers stay missing in that column.
    path.write_text('g,industry,y\na,"",1\nb,NA,0\n')
    assert read_table(path, empty_category="industry")["industry"].isna().tolist() == [False, True]


def test_empty_category_must_name_a_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("g,y\na,1\n")
    with pytest.raises(FairpathInputError, match=r"empty-category column\(s\) \['industry'\] are not columns of"):
        read_table(path, empty_category=["industry"])


def test_census_keeps_its_empty_industry_through_the_explicit_option(shared_dir, tmp_path):
    source = shared_dir / "data" / "census_20k.csv"
    lines = source.read_text().splitlines()
    header = lines[0].split(",")
    column = header.index('"industry"')
    row = lines[1].split(",")
    row[column] = '""'
    path = tmp_path / "census.csv"
    path.write_text("\n".join([lines[0], *lines[1:50], ",".join(row)]) + "\n")
    census = load_gov_census(path)
    assert (census.data["industry"] == "").sum() == 1 and census.data["industry"].notna().all()
    assert read_table(path)["industry"].isna().sum() == 1  # without the option it is a missing value
    full = load_gov_census(source)
    assert full.data.shape == (20000, 17) and full.data.notna().all().all()


def test_duplicated_header_is_an_error_naming_the_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,age,y,age\na,1,0,2\n")
    with pytest.raises(FairpathInputError, match=r"d\.csv' has duplicated column name\(s\) \['age'\]; rename them"):
        read_table(path)


def test_table_that_is_not_utf8_names_the_file_and_the_likely_encoding(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("x,city,y\na,Bogotá,1\nb,Zürich,0\n".encode("cp1252"))
    with pytest.raises(FairpathInputError, match=r"latin\.csv' is not UTF-8 \(byte 0xe1 at position \d+\); it looks like cp1252"):
        read_table(path)


def test_header_that_is_not_utf8(tmp_path):
    path = tmp_path / "header.csv"
    path.write_bytes("año,y\n1,0\n".encode("latin-1"))
    with pytest.raises(FairpathInputError, match=r"header\.csv' is not UTF-8.*iconv -f cp1252 -t utf-8"):
        read_table(path)


def test_utf16_text_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("one passage\n".encode("utf-16"))
    with pytest.raises(FairpathInputError, match=r"corpus file .*corpus\.txt' is not UTF-8.*it looks like utf-16"):
        read_text(path, "corpus file")


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(FairpathInputError, match=r"data file .*nope\.csv' does not exist"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(FairpathInputError, match="does not exist or is not a file"):
        read_table(tmp_path)


def test_parquet_empty_string_is_missing_unless_a_category(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"g": ["a", "b"], "industry": ["", "6111"], "y": [1.0, np.inf]}).to_parquet(path)
    assert read_table(path)["industry"].isna().tolist() == [True, False]
    assert read_table(path, empty_category=["industry"])["industry"].tolist() == ["", "6111"]


# -- writing: never through a link, a pipe or a device; one run per folder -------------------------

def test_atomic_write_refuses_a_symlink_and_keeps_its_target(tmp_path):
    from fairpath._io import atomic_write_text

    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "report.html"
    link.symlink_to(target)
    with pytest.raises(FairpathInputError, match=r"output file '.*report\.html' is a symbolic link, not a regular file; fairpath "
                                                 r"writes only regular files: choose another path"):
        atomic_write_text("new", link)
    assert link.is_symlink() and target.read_text() == "keep me"


def test_atomic_write_refuses_a_fifo_without_blocking(tmp_path):
    from fairpath._io import write_csv

    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    with pytest.raises(FairpathInputError, match=r"'.*out\.csv' is a named pipe \(FIFO\), not a regular file"):
        write_csv(pd.DataFrame({"a": [1]}), fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_atomic_write_refuses_a_device(tmp_path):
    from fairpath._io import atomic_write_text

    device = tmp_path / "null"  # a node of its own: a failing check must not replace the system's /dev/null
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    with pytest.raises(FairpathInputError, match=r"output file '.*null' is a device, not a regular file"):
        atomic_write_text("x", device)
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_output_folder_that_is_a_symlink_is_refused(tmp_path):
    from fairpath._validation import check_output_dir

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    with pytest.raises(FairpathInputError, match=r"--out folder '.*link' is a symbolic link, not a folder"):
        check_output_dir(tmp_path / "link", "--out folder")


def test_output_file_that_is_an_input_is_refused(tmp_path):
    from fairpath._validation import check_output_file

    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    with pytest.raises(FairpathInputError, match=r"--json file '.*data\.csv' is the input file '.*data\.csv'; writing it "
                                                 r"would replace your data: choose another path"):
        check_output_file(tmp_path / "." / "data.csv", "--json file", inputs=[data])


def test_a_locked_folder_refuses_a_second_run_naming_the_holder(tmp_path):
    from fairpath._io import LOCK_NAME, locked_folder

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom fairpath._io import locked_folder\n"
                               f"with locked_folder({str(out)!r}):\n    print('held', flush=True)\n    sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")})
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FairpathInputError, match=rf"output folder '.*out' is in use by another fairpath run \(PID {holder.pid}\); "
                                                     "wait for it to finish or choose another folder"):
            with locked_folder(out):
                pass
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0 and not out.exists()  # the holder created it, wrote nothing, removed it
    with locked_folder(out) as held, locked_folder(out):  # free again; nested holds in one process share the lock
        assert (held / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    assert not out.exists()


def test_protected_input_is_never_replaced_by_an_atomic_write(tmp_path):
    from fairpath._io import atomic_write_text, protected_inputs

    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    with protected_inputs([data, tmp_path / "absent.csv"]):
        with pytest.raises(FairpathInputError, match=r"output file '.*data\.csv' is an input of this run; writing it would replace"):
            atomic_write_text("results", tmp_path / "." / "data.csv")
        atomic_write_text("results", tmp_path / "other.json")
    assert data.read_text() == "a\n1\n"
    atomic_write_text("replaced", data)  # outside the run, an ordinary file
    assert data.read_text() == "replaced"
