"""Reading tables and text files: missing values, empty-string categories, bad headers and encodings; settings files' bounds."""

from __future__ import annotations

import csv
import json
import time
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath._io import MAX_SETTINGS_BYTES, MAX_SETTINGS_DEPTH, parse_yaml, read_table, read_text, read_toml, read_yaml
from fairpath.causal import SFM, decompose
from fairpath.datasets import load_gov_census

CSV = "x,z,y,priors\na,1.5,1,0\nb,2.5,0,{blank}\na,0.5,1,10\nb,1.0,0,2\n"


@pytest.mark.parametrize("marker", ["", "NA", "N/A", "nan", "null", "NULL"])
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


# -- the input layer: dirty numeric columns, declared missing tokens and categories ----------------

def _priors_table(tmp_path, token: str, rows=(3, 17)):
    """60 rows; ``priors`` is numeric but holds ``token`` in the given rows (0-based data rows)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": ["a", "b"] * 30, "z": rng.normal(size=60).round(3), "priors": rng.integers(0, 12, 60), "y": rng.integers(0, 2, 60)})
    cells = frame["priors"].astype(str).tolist()
    for row in rows:
        cells[row] = token
    path = tmp_path / "d.csv"
    frame.assign(priors=cells).to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("token", ["?", "-", " ", "na", "1,000"])
def test_unrecognised_token_in_a_numeric_column_names_column_token_count_row_and_remedy(tmp_path, token):
    path, _ = _priors_table(tmp_path, token)
    data = read_table(path)
    sfm = SFM(x="x", x0="a", x1="b", z=["z"], w=["priors"], y="y")
    with pytest.raises(FairpathInputError) as error:
        decompose(data, sfm, learner="linear", progress=False)
    message = str(error.value)
    assert f"column 'priors' holds numbers in 58 of 60 non-missing cells and the non-numeric token(s) {token!r} (2x)" in message
    assert "the first in row 3 (data row 4, line 5 of a CSV file with a header)" in message
    assert next(csv.reader([path.read_text().splitlines()[4]]))[2] == token  # line 5 of the file holds it
    assert "--na-values TOKEN" in message and "na_values=" in message and "--categorical priors" in message


def test_na_values_declares_the_token_missing_and_gives_the_numbers_of_the_clean_rows(tmp_path):
    path, frame = _priors_table(tmp_path, "?")
    data = read_table(path, na_values="?")  # one string is one token
    assert data["priors"].dtype == float
    assert data.index[data["priors"].isna()].tolist() == [3, 17]
    sfm = SFM(x="x", x0="a", x1="b", z=["z"], w=["priors"], y="y")
    options = dict(learner="linear", n_folds=2, n_rep=1, seed=0, progress=False)
    from_file = decompose(data.dropna().reset_index(drop=True), sfm, **options).to_frame()
    clean = decompose(frame.drop(index=[3, 17]).reset_index(drop=True), sfm, **options).to_frame()
    pd.testing.assert_frame_equal(from_file, clean)


def test_categorical_declares_a_numeric_looking_column_a_category(tmp_path):
    path, _ = _priors_table(tmp_path, "?")
    data = read_table(path, categorical=["priors"])
    assert isinstance(data["priors"].dtype, pd.CategoricalDtype)
    assert (data["priors"] == "?").sum() == 2


def test_a_text_column_of_mostly_words_stays_categorical(tmp_path):
    path = tmp_path / "d.csv"
    rows = ["x,charge,y"] + [f"{'ab'[i % 2]},{['F', 'M', '3'][i % 3]},{i % 2}" for i in range(30)]
    path.write_text("\n".join(rows) + "\n")
    from fairpath._validation import check_finite

    check_finite(read_table(path))  # one third numbers: a category with a level "3", not dirty numbers


def test_na_values_and_categorical_must_name_tokens_and_columns(tmp_path):
    path, _ = _priors_table(tmp_path, "?")
    with pytest.raises(FairpathInputError, match=r"na_values must hold missing-value tokens \(strings\), got 1 \(int\)"):
        read_table(path, na_values=["?", 1])
    with pytest.raises(FairpathInputError, match=r"categorical column\(s\) \['nope'\] are not columns of"):
        read_table(path, categorical="nope")


def test_parquet_na_values(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"a": ["1", "?", "3"], "b": ["x", "", "?"]}).to_parquet(path)
    data = read_table(path, empty_category="b", na_values=["?"])
    assert data["a"].isna().tolist() == [False, True, False]
    assert data["b"].tolist()[:2] == ["x", ""] and pd.isna(data["b"].iloc[2])


def _charge_table(tmp_path, token: str, rows=(3, 17)):
    """60 rows; the confounder ``charge`` is a text column (F or M) holding ``token`` in the given rows (0-based data rows)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": ["a", "b"] * 30, "charge": rng.choice(["F", "M"], 60), "z": rng.normal(size=60).round(3),
                          "y": rng.integers(0, 2, 60)})
    cells = frame["charge"].tolist()
    for row in rows:
        cells[row] = token
    path = tmp_path / "d.csv"
    frame.assign(charge=cells).to_csv(path, index=False)
    return path, frame


@pytest.mark.parametrize("token", ["?", "-", " ", "na", "none", " N/a "])
def test_a_missing_like_token_in_a_text_column_names_column_token_count_row_and_both_remedies(tmp_path, token):
    # these became a category of their own silently (the numeric rule above refuses them in a column of numbers)
    path, _ = _charge_table(tmp_path, token)
    data = read_table(path)
    assert (data["charge"] == token).sum() == 2  # read as text: not one of the markers every column reads as missing
    sfm = SFM(x="x", x0="a", x1="b", z=["charge", "z"], w=[], y="y")
    with pytest.raises(FairpathInputError) as error:
        decompose(data, sfm, learner="linear", progress=False)
    message = str(error.value)
    assert message.startswith(f"text column 'charge' holds the token(s) {token!r} (2x), the first in row 3 (data row 4, line 5 of a "
                              "CSV file with a header), which mean a missing value in many files but are not read as one")
    assert next(csv.reader([path.read_text().splitlines()[4]]))[1] == token  # line 5 of the file holds it
    assert "--na-values TOKEN" in message and "na_values=" in message and "--categorical charge" in message


def test_a_missing_like_token_declared_missing_or_a_category_is_read_as_declared(tmp_path):
    path, frame = _charge_table(tmp_path, "?")
    sfm = SFM(x="x", x0="a", x1="b", z=["charge", "z"], w=[], y="y")
    options = dict(learner="linear", n_folds=2, n_rep=1, seed=0, progress=False)
    declared_missing = read_table(path, na_values="?")
    assert declared_missing.index[declared_missing["charge"].isna()].tolist() == [3, 17]
    pd.testing.assert_frame_equal(decompose(declared_missing.dropna().reset_index(drop=True), sfm, **options).to_frame(),
                                  decompose(frame.drop(index=[3, 17]).reset_index(drop=True), sfm, **options).to_frame())
    as_category = read_table(path, categorical=["charge"])
    assert sorted(as_category["charge"].cat.categories) == ["?", "F", "M"]
    decompose(as_category, sfm, **options)  # the user said it is a category: it is one


def test_a_declared_empty_category_and_real_words_are_no_missing_like_tokens(tmp_path):
    from fairpath._validation import check_finite

    path = tmp_path / "d.csv"
    path.write_text('x,industry,grade\na,"",n.a.\nb,6111,na-1\na,"",?x\n')
    check_finite(read_table(path, empty_category=["industry"]))  # "" declared a category; tokens merely containing ? or - are words


def test_the_shared_data_sets_hold_no_missing_like_token(shared_dir):
    """The rule refuses no clean data set: every column of each, as the loaders and the demo read them."""
    from fairpath._validation import check_finite

    for name in ["berkeley.csv", "census_20k.csv", "compas.csv", "compas_sp2pp.csv", "gov_census.csv", "uni_admission.csv"]:
        check_finite(read_table(shared_dir / "data" / name, empty_category=["industry"] if "census" in name else ()))


def test_a_header_with_a_quoted_newline_is_read_whole_for_its_checks(tmp_path):
    # the check read the first physical line only, so a name repeated after a quoted newline was accepted (pandas renamed it x.1)
    path = tmp_path / "d.csv"
    path.write_text('x,"long\nname",y,x\na,1,0,b\nb,2,1,c\n')
    with pytest.raises(FairpathInputError, match=r"d\.csv' has duplicated column name\(s\) \['x'\]; rename them"):
        read_table(path)
    path.write_text('x,"long\nname",y,priors\na,1,0,NA\nb,2,1,3\n')
    data = read_table(path, categorical=["long\nname"])  # a column named after the quoted newline is found
    assert list(data.columns) == ["x", "long\nname", "y", "priors"] and data["priors"].isna().tolist() == [True, False]


def test_a_blank_line_before_the_header_keeps_the_missing_markers(tmp_path):
    # pandas skips the blank line; the markers were built for the header "" and no column read NA as missing
    path = tmp_path / "d.csv"
    path.write_text("\nx,priors\na,NA\nb,2\n")
    data = read_table(path)
    assert data["priors"].dtype == float and data["priors"].isna().tolist() == [True, False]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_with_a_header_and_no_rows_names_the_file(tmp_path, suffix):
    path = tmp_path / f"new{suffix}"
    frame = pd.DataFrame({"x": pd.Series([], dtype=str), "y": pd.Series([], dtype=float)})
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(FairpathInputError, match=rf"^--test file '.*new\{suffix}' has a header but no rows \(2 columns: \['x', 'y'\]\); "
                                                 "give a file with at least one row of data$"):
        read_table(path, what="--test file")


@pytest.mark.parametrize("path", [5, None])
def test_path_must_be_a_path(path):
    with pytest.raises(FairpathInputError, match=rf"data file must be a path \(a string or pathlib\.Path\), got {path!r}"):
        read_table(path)
# -- settings files: bounded parsing --------------------------------------------------------------

# An alias bomb like that of issue 25 (281 bytes there): nine levels of ten aliases each, 10^9 strings once expanded.
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n" for a, b in zip("abcdefgh", "bcdefghi"))


def test_a_yaml_alias_bomb_is_refused_at_once_naming_the_file(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    assert len(ALIAS_BOMB) < 400
    start = time.perf_counter()
    with pytest.raises(FairpathInputError, match=r"settings file '.*bomb\.yaml' uses a YAML anchor or alias \(line 1\); "
                                                 r"fairpath refuses them .*write the values out"):
        read_yaml(path)
    assert time.perf_counter() - start < 1


def test_a_yaml_alias_alone_is_refused_too():
    with pytest.raises(FairpathInputError, match=r"config text uses a YAML anchor or alias \(line 2\)"):
        parse_yaml("a: 1\nb: *a\n", "config text")  # an alias without its anchor is refused before the parser's own error


@pytest.mark.parametrize("text, line", [("[" * (MAX_SETTINGS_DEPTH + 1) + "]" * (MAX_SETTINGS_DEPTH + 1), 1),
                                        ("a:\n" + "".join(f"{' ' * (i + 1)}k{i}:\n" for i in range(MAX_SETTINGS_DEPTH)) + "   x: 1\n", 33)])
def test_deep_yaml_nesting_is_refused(text, line):
    with pytest.raises(FairpathInputError, match=rf"spec text nests deeper than {MAX_SETTINGS_DEPTH} levels \(line {line}\)"):
        parse_yaml(text, "spec text")
    parse_yaml("[" * MAX_SETTINGS_DEPTH + "]" * MAX_SETTINGS_DEPTH, "spec text")  # at the bound: read


def test_deep_toml_nesting_and_invalid_toml_are_refused(tmp_path):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(FairpathInputError, match=rf"config file '.*deep\.toml' nests deeper than {MAX_SETTINGS_DEPTH} levels"):
        read_toml(deep, "config file")
    deep.write_text("a = " + "[" * (MAX_SETTINGS_DEPTH + 1) + "]" * (MAX_SETTINGS_DEPTH + 1) + "\n")
    with pytest.raises(FairpathInputError, match="nests deeper"):
        read_toml(deep, "config file")
    deep.write_text("a = [1,\n")
    with pytest.raises(FairpathInputError, match=r"could not parse config file '.*deep\.toml': it is not valid TOML"):
        read_toml(deep, "config file")


@pytest.mark.parametrize("reader", [read_yaml, read_toml])
def test_an_oversized_settings_file_is_refused_before_reading(tmp_path, reader):
    path = tmp_path / "big.yaml"
    with open(path, "wb") as handle:  # sparse: its size is what counts
        handle.truncate(MAX_SETTINGS_BYTES + 1)
    with pytest.raises(FairpathInputError, match=rf"specification file '.*big\.yaml' holds {MAX_SETTINGS_BYTES + 1:,} bytes; "
                                                 rf"settings files are read up to {MAX_SETTINGS_BYTES:,} bytes"):
        reader(path, "specification file")


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


def test_a_row_short_of_fields_is_an_error_naming_its_line(tmp_path):
    """pandas fills a short row's last cells with NaN and shifts its values: refused, with the line."""
    short = tmp_path / "short.csv"
    short.write_text("a,b,c\n1,2,3\n4,5\n6,7,8\n")
    with pytest.raises(FairpathInputError, match=r"data file '.*short\.csv': line 3 has 2 fields where the header has 3"):
        read_table(short)
    empty_last = tmp_path / "empty_last.csv"
    empty_last.write_text("a,b,c\n1,2,3\n4,5,\n")
    assert read_table(empty_last)["c"].isna().tolist() == [False, True]  # an empty field is a missing value, not a lost one


def test_a_hostile_output_list_never_removes_a_file_outside_the_folder_or_one_fairpath_did_not_write(tmp_path):
    from fairpath._io import MANIFEST_NAME, atomic_write_text, replacing_outputs

    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "linked").symlink_to(outside)
    (folder / MANIFEST_NAME).write_text(json.dumps({"files": ["../precious.txt", str(outside), "linked", "", 3, "sub/../../precious.txt"]}))
    with replacing_outputs(folder):
        atomic_write_text("new", folder / "report.html")
    assert outside.read_text() == "keep" and (folder / "linked").is_symlink()
    (folder / MANIFEST_NAME).write_text("[not json")  # an unreadable list removes nothing either
    with replacing_outputs(folder):
        atomic_write_text("newer", folder / "report.html")
    assert json.loads((folder / MANIFEST_NAME).read_text()) == {"files": ["report.html"]}


def test_a_failed_save_removes_nothing_and_lists_both_saves_files(tmp_path):
    from fairpath._io import MANIFEST_NAME, atomic_write_text, replacing_outputs

    with replacing_outputs(tmp_path):
        atomic_write_text("a", tmp_path / "old" / "report.html")
    with pytest.raises(RuntimeError), replacing_outputs(tmp_path):
        atomic_write_text("b", tmp_path / "new.csv")
        raise RuntimeError("the save failed half way")
    assert (tmp_path / "old" / "report.html").exists()
    assert json.loads((tmp_path / MANIFEST_NAME).read_text()) == {"files": ["new.csv", "old/report.html"]}
    with replacing_outputs(tmp_path):
        atomic_write_text("c", tmp_path / "final.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == [MANIFEST_NAME, "final.json"]


def test_none_in_a_numeric_column_is_a_token_to_declare(tmp_path):
    """None is not a missing-value marker (it is a level's name in real data): in a numeric column it is a token that the
    user declares missing, as ? is."""
    from fairpath._validation import check_finite

    path = tmp_path / "d.csv"
    path.write_text("x,priors\n" + "".join(f"{'ab'[i % 2]},{'None' if i == 3 else i}\n" for i in range(30)))
    with pytest.raises(FairpathInputError, match=r"column 'priors' holds numbers in 29 of 30 non-missing cells and the non-numeric "
                                                 r"token\(s\) 'None' \(1x\), the first in row 3 .*--na-values TOKEN"):
        check_finite(read_table(path))
    assert read_table(path, na_values="None")["priors"].isna().sum() == 1


def test_levels_must_name_a_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x,y\na,1\n")
    with pytest.raises(FairpathInputError, match=r"^protected attribute column 'race' not found in '.*d.csv'; available columns: \['x', 'y'\]$"):
        read_table(path, levels=["x", "race"])
    with pytest.raises(FairpathInputError, match=r"levels must hold column names \(strings\), got 1 \(int\)"):
        read_table(path, levels=[1])
