"""The command line's error boundary: bad input is one ``fairpath: error: …`` line with exit status 2 and
no traceback, on every command; a bug prints its traceback and asks to be reported (exit status 1)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runs import run_cli as run

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm

SFM_ARGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    make_binary_sfm(200, seed=0).data.to_csv(path, index=False)
    return path


def _commands(data, out):
    data = str(data)
    return {
        "decompose": ["decompose", data, *SFM_ARGS],
        "audit": ["audit", data, *SFM_ARGS, "--predictor", "y", "--bn", "SE", "--out", str(out)],
        "demo": ["demo", "--out", str(out)],
        "repair": ["repair", data, *SFM_ARGS, "--out", str(out)],
        "frontier": ["frontier", data, *SFM_ARGS, "--out", str(out)],
        "reproduce": ["reproduce", "theorem1", "--quick", "--out", str(out)],
        "text audit": ["text", "audit", "--attribute", "country", "--out", str(out)],
        "text debias": ["text", "debias", "--attribute", "country", "--out", str(out)],
    }


@pytest.mark.parametrize("command", ["decompose", "audit", "demo", "repair", "frontier", "reproduce", "text audit", "text debias"])
@pytest.mark.parametrize("seed, message", [("-1", "--seed must be an integer ≥ 0, got -1"),
                                           ("1.5", "--seed must be an integer, got '1.5'")])
def test_negative_or_float_seed_on_every_command(command, seed, message, data_file, tmp_path, capsys):
    code, err = run([*_commands(data_file, tmp_path / "out")[command], "--seed", seed], capsys)
    assert code == 2
    assert f"fairpath: error: argument --seed: {message}" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag, value, message", [
    ("--folds", "1", "--folds must be an integer ≥ 2, got 1"),
    ("--folds", "five", "--folds must be 'auto' or an integer, got 'five'"),
    ("--bootstrap", "-3", "--bootstrap must be an integer ≥ 0, got -3"),
    ("--n-rep", "many", "--n-rep must be 'auto' or an integer, got 'many'"),
])
def test_counts_are_checked_by_the_parser(flag, value, message, data_file, capsys):
    code, err = run(["decompose", str(data_file), *SFM_ARGS, flag, value], capsys)
    assert code == 2 and re.search(rf"fairpath: error: argument {flag}(/--[\w-]+)?: {re.escape(message)}", err)


def test_repeats_zero(data_file, tmp_path, capsys):
    code, err = run(["frontier", str(data_file), *SFM_ARGS, "--repeats", "0", "--out", str(tmp_path / "f")], capsys)
    assert code == 2 and "argument --repeats: --repeats must be an integer ≥ 1, got 0" in err


@pytest.mark.parametrize("flag", ["--json", "--plot"])
def test_decompose_output_file_checked_before_the_computation(flag, data_file, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    code, err = run(["decompose", str(data_file), *SFM_ARGS, flag, str(blocker / "result.out")], capsys)
    assert code == 2 and f"cannot create {flag} file" in err and "is a file, not a folder" in err
    code, err = run(["decompose", str(data_file), *SFM_ARGS, flag, str(tmp_path)], capsys)
    assert code == 2 and f"{flag} file {str(tmp_path)!r} is an existing folder" in err


@pytest.mark.parametrize("command", ["audit", "demo", "repair", "frontier", "reproduce", "text audit", "text debias"])
def test_output_folder_that_is_a_file(command, data_file, tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("not a folder")
    code, err = run(_commands(data_file, out)[command], capsys)
    assert code == 2 and "taken' is an existing file, not a folder; choose a folder path" in err
    assert out.read_text() == "not a folder"


def test_non_utf8_data_file(tmp_path, capsys):
    path = tmp_path / "latin.csv"
    path.write_bytes("x,z1,y\nSão Paulo,1,0\n".encode("cp1252"))
    code, err = run(["decompose", str(path), "--x", "x", "--x0", "a", "--x1", "b", "--y", "y"], capsys)
    assert code == 2 and "latin.csv' is not UTF-8" in err and "it looks like cp1252" in err


def test_non_utf8_config_file(tmp_path, capsys):
    path = tmp_path / "audit.toml"
    path.write_bytes('x = "raza"\ny = "año"\n'.encode("latin-1"))
    code, err = run(["audit", "--config", str(path)], capsys)
    assert code == 2 and "config file" in err and "audit.toml' is not UTF-8" in err


def test_non_utf8_spec_file(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_bytes("attribute: país\nvalues: [Perú, Chile]\ntemplates: ['{país} es']\n".encode("cp1252"))
    code, err = run(["text", "audit", "--attribute", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "specification file" in err and "spec.yaml' is not UTF-8" in err


def test_non_utf8_corpus_file(tmp_path, capsys):
    path = tmp_path / "corpus.txt"
    path.write_bytes("Une phrase très courte.\n".encode("cp1252"))
    code, err = run(["text", "audit", "--attribute", "country", "--scorers", "vader", "--corpus", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "corpus file" in err and "corpus.txt' is not UTF-8" in err


def test_blank_numeric_cell_names_the_column_and_the_rows(tmp_path, capsys):
    data = make_binary_sfm(200, seed=0).data
    path = tmp_path / "blank.csv"
    text = data.to_csv(index=False).splitlines()
    for i in (5, 9, 11):  # blank the w1 cell of three rows
        cells = text[i].split(",")
        cells[3] = ""
        text[i] = ",".join(cells)
    path.write_text("\n".join(text) + "\n")
    code, err = run(["decompose", str(path), *SFM_ARGS, "--learner", "linear", "--folds", "2"], capsys)
    assert code == 2 and "fairpath: error: missing values (NaN) in used columns ('w1': 3)" in err


def test_empty_string_category_needs_the_flag(tmp_path, capsys):
    data = make_binary_sfm(200, seed=0).data
    data["sector"] = ["", "public", "private", "public"] * 50
    path = tmp_path / "sector.csv"
    data.to_csv(path, index=False)
    args = ["decompose", str(path), "--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,sector", "--w", "w1", "--y", "y",
            "--learner", "linear", "--folds", "2"]
    code, err = run(args, capsys)
    assert code == 2 and "('sector': 50)" in err and "--empty-category COLUMN" in err
    code, _ = run([*args, "--empty-category", "sector"], capsys)
    assert code == 0


def test_missing_column_in_the_model(data_file, capsys):
    code, err = run(["decompose", str(data_file), *SFM_ARGS[:-2], "--y", "outcome"], capsys)
    assert code == 2 and "column(s) ['outcome'] not found in data file" in err


def test_a_bug_prints_the_traceback_and_asks_for_a_report(data_file, monkeypatch, capsys):
    import fairpath.cli._decompose as command

    def broken(args):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(command, "run", broken)
    assert main(["decompose", str(data_file), *SFM_ARGS]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ZeroDivisionError" in err
    assert "This is a bug in fairpath" in err and "please report it" in err


def test_exit_status_in_a_real_process(tmp_path):
    result = subprocess.run([sys.executable, "-m", "fairpath.cli", "decompose", str(tmp_path / "none.csv"), "--x", "x", "--x0", "a",
                             "--x1", "b", "--y", "y"], capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("fairpath: error: data file") and "none.csv' does not exist" in result.stderr


def test_an_output_file_that_cannot_be_written_is_an_input_error(data_file, tmp_path, capsys):
    path = tmp_path / ("r" * 300 + ".json")  # longer than any file system allows a name to be
    code, err = run(["decompose", str(data_file), *SFM_ARGS, "--learner", "linear", "--folds", "2", "--json", str(path)], capsys)
    assert code == 2 and "fairpath: error: File name too long: " in err and "rrrr.json'" in err


@pytest.fixture(scope="module")
def dirty_file(tmp_path_factory):
    """The data with ``?`` in the w1 cells of data rows 6 and 10 (file lines 7 and 11)."""
    data = make_binary_sfm(200, seed=0).data.astype({"w1": object})
    data.loc[[5, 9], "w1"] = "?"
    data["score"] = data["y"]  # a predictor for audit
    path = tmp_path_factory.mktemp("cli") / "dirty.csv"
    data.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("command", ["decompose", "audit", "repair", "frontier"])
def test_unrecognised_missing_token_and_the_na_values_flag_on_every_table_command(command, dirty_file, tmp_path, capsys):
    argv = _commands(dirty_file, tmp_path / "out")[command]
    if command == "audit":  # the shared audit line names Y as its predictor, which the audit refuses first
        argv[argv.index("--predictor") + 1] = "score"
    code, err = run(argv, capsys)
    assert code == 2
    assert ("fairpath: error: column 'w1' holds numbers in 198 of 200 non-missing cells and the non-numeric token(s) '?' (2x), "
            "the first in row 5 (data row 6, line 7 of a CSV file with a header)") in err
    assert "--na-values TOKEN" in err and "--categorical w1" in err
    code, err = run([*argv, "--na-values", "?"], capsys)  # declared missing: now reported as missing values
    assert code == 2 and "fairpath: error: missing values (NaN) in used columns ('w1': 2)" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["decompose", "audit", "demo", "repair", "frontier", "reproduce", "text audit", "text debias"])
def test_seed_beyond_numpy_on_every_command(command, data_file, tmp_path, capsys):
    code, err = run([*_commands(data_file, tmp_path / "out")[command], "--seed", str(2**32)], capsys)
    assert code == 2 and "fairpath: error: argument --seed: --seed must be an integer ≤ 4294967295, got 4294967296: NumPy's seeds lie in [0, 2**32 − 1]" in err


@pytest.mark.parametrize("command", ["decompose", "audit"])
def test_one_bootstrap_draw_is_refused(command, data_file, tmp_path, capsys):
    code, err = run([*_commands(data_file, tmp_path / "out")[command], "--bootstrap", "1"], capsys)
    assert code == 2 and re.search(r"fairpath: error: argument --bootstrap: --bootstrap must be (0 \(no interval\) or )?an integer ≥ 2", err)


def test_plot_without_a_format_suffix_is_refused_before_computing(data_file, tmp_path, capsys):
    code, err = run(["decompose", str(data_file), *SFM_ARGS, "--plot", str(tmp_path / "fig")], capsys)
    assert code == 2 and "fairpath: error: --plot file" in err and "has no figure format as its suffix; end it with one of" in err and ".png" in err


def test_repair_refuses_the_outcome_as_a_resolving_variable(data_file, tmp_path, capsys):
    code, err = run([*_commands(data_file, tmp_path / "out")["repair"], "--resolving", "y"], capsys)
    assert code == 2 and "fairpath: error: the outcome 'y' cannot be a resolving variable" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("study", ["compas", "census", "huang"])
def test_seed_of_the_paper_studies_is_checked_by_the_parser(study, tmp_path, capsys):
    for seed, message in (("-1", "--seed must be an integer ≥ 0, got -1"), (str(2**32), "--seed must be an integer ≤ 4294967295")):
        code, err = run(["reproduce", study, "--out", str(tmp_path / "out"), "--seed", seed], capsys)
        assert code == 2 and f"fairpath: error: argument --seed: {message}" in err
    assert not (tmp_path / "out").exists()


# -- outputs never replace an input, a link, a pipe or a running run's folder -----------------------

def test_output_file_that_is_the_input_is_refused_and_the_input_kept(data_file, capsys):
    before = data_file.read_bytes()
    code, err = run(["decompose", str(data_file), *SFM_ARGS, "--json", str(data_file)], capsys)
    assert code == 2 and (f"fairpath: error: --json file {str(data_file)!r} is the input file {str(data_file)!r}; "
                          "writing it would replace your data: choose another path") in err
    assert data_file.read_bytes() == before


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_output_file_that_is_a_link_or_a_pipe_is_refused_before_the_computation(kind, data_file, tmp_path, capsys):
    target = tmp_path / "result.json"
    if kind == "symlink":
        (tmp_path / "elsewhere.json").write_text("keep")
        target.symlink_to(tmp_path / "elsewhere.json")
    else:
        os.mkfifo(target)  # a write would block until a reader came: refused without opening it
    code, err = run(["decompose", str(data_file), *SFM_ARGS, "--json", str(target)], capsys)
    described = "a symbolic link" if kind == "symlink" else "a named pipe (FIFO)"
    assert code == 2 and f"--json file {str(target)!r} is {described}, not a regular file" in err
    assert "decompose" not in capsys.readouterr().out  # nothing was computed
    if kind == "symlink":
        assert target.is_symlink() and (tmp_path / "elsewhere.json").read_text() == "keep"


def test_output_folder_that_is_a_symlink_is_refused(data_file, tmp_path, capsys):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    code, err = run(["repair", str(data_file), *SFM_ARGS, "--out", str(tmp_path / "link")], capsys)
    assert code == 2 and f"--out folder {str(tmp_path / 'link')!r} is a symbolic link, not a folder" in err
    assert list((tmp_path / "real").iterdir()) == []


def test_second_frontier_run_into_the_same_folder_is_refused(data_file, tmp_path, capsys):
    out = tmp_path / "frontier"
    command = ["frontier", str(data_file), *SFM_ARGS, "--engine", "linear", "--bn-sets", "none,Z,W,ZW", "--repeats", "50",
               "--no-constrained", "--quiet", "--out", str(out)]
    first = subprocess.Popen([sys.executable, "-m", "fairpath.cli", *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")})
    try:
        deadline = time.monotonic() + 120
        while not (out / ".fairpath.lock").exists() or not (out / ".fairpath.lock").read_text():
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read() if first.poll() is not None else "timeout"
            time.sleep(0.05)
        started = time.monotonic()
        code, err = run(command, capsys)
        assert code == 2 and (f"fairpath: error: --out folder {str(out)!r} is in use by another fairpath run (PID {first.pid}); "
                              "wait for it to finish or choose another folder") in err
        assert time.monotonic() - started < 10  # refused at once, not after computing
        assert first.poll() is None  # the first run goes on
    finally:
        first.kill()
        first.communicate(timeout=60)


def test_result_named_like_the_input_in_the_out_folder_never_replaces_it(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    data = out / "scores.csv"  # repair writes OUT/scores.csv
    make_binary_sfm(600, seed=0).data.to_csv(data, index=False)
    before = data.read_bytes()
    code, err = run(["repair", str(data), *SFM_ARGS, "--bn", "SE", "--engine", "linear", "--quiet", "--out", str(out)], capsys)
    assert code == 2 and (f"fairpath: error: output file {str(data)!r} is an input of this run; writing it would replace your "
                          "data: move the input or choose another output folder") in err
    assert data.read_bytes() == before


@pytest.mark.parametrize("command", ["decompose", "audit", "frontier"])
@pytest.mark.parametrize("address", ["not a url", "http://10.0.0.5:8786", ""])
def test_a_malformed_scheduler_is_refused_by_the_parser(command, address, data_file, tmp_path, capsys):
    code, err = run([*_commands(data_file, tmp_path / "out")[command], "--scheduler", address], capsys)
    assert code == 2
    assert ("fairpath: error: argument --scheduler: --scheduler must be a Dask scheduler's address, tcp://HOST:PORT "
            "(e.g. tcp://10.0.0.5:8786;") in err and f"got {address!r} (str)" in err and "--workers N runs a local cluster" in err
    assert not (tmp_path / "out").exists()
