"""Outputs of the commands: a record folder holding another run's record is refused before any computation unless
--force, every output target is checked first, files are saved before anything is printed (a reader that closes
stdout early loses none, and sees no traceback), and a rerun into a folder leaves no file of the previous run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from fairpath.cli import main
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm

SRC = Path(__file__).resolve().parents[2] / "src"
RECORD_FILES = ("result.json", "result.csv", "table.csv", "scores.parquet", "report.html", "tradeoffs_country.png", "tradeoffs_occupation.png")


def _fake_record(folder: Path, settings: dict) -> dict[str, bytes]:
    """The files of a record (reproductions/huang's names), its result.json holding ``settings``."""
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps({"models": [], "settings": settings}))
    for name in RECORD_FILES[1:]:
        (folder / name).write_bytes(b"the full run's " + name.encode())
    return {name: (folder / name).read_bytes() for name in RECORD_FILES}


def _full_settings() -> dict:
    from fairpath.reproduce import HuangSettings

    return {**json.loads(json.dumps(asdict(HuangSettings()))), "model": "default", "wall_seconds": 3465.0, "dtype": "bfloat16"}


@pytest.fixture
def study_never_runs(monkeypatch):
    import fairpath.reproduce

    def run(*args, **kwargs):
        raise AssertionError("the study started")

    monkeypatch.setattr(fairpath.reproduce, "reproduce_huang", run)


def test_a_quick_run_never_replaces_a_full_record(tmp_path, capsys, study_never_runs):
    record = tmp_path / "reproductions" / "huang"
    before = _fake_record(record, _full_settings())
    code = main(["reproduce", "huang", "--quick", "--out", str(tmp_path / "run"), "--record", str(record)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"fairpath: error: record folder {str(record)!r} holds the record of another run (lambdas [30.0] there, " \
           "[100.0] here; steps 40 there, 3 here;" in err
    assert "that run took 58 minutes); choose another folder, or pass --force to replace it" in err
    assert {name: (record / name).read_bytes() for name in RECORD_FILES} == before
    assert not (tmp_path / "run").exists()


def test_a_record_folder_without_a_readable_summary_is_refused_too(tmp_path, capsys, study_never_runs):
    record = tmp_path / "record"
    _fake_record(record, {})
    (record / "result.json").write_text("{not json")
    assert main(["reproduce", "huang", "--quick", "--out", str(tmp_path / "run"), "--record", str(record)]) == 2
    assert "holds record files (report.html, result.csv, result.json, scores.parquet, table.csv, tradeoffs_country.png, " \
           "tradeoffs_occupation.png) without a readable result.json: not this run's record; choose another folder, or pass " \
           "--force" in capsys.readouterr().err


def test_record_pointing_at_a_file_is_refused_at_once(tmp_path, capsys, study_never_runs):
    (tmp_path / "record.json").write_text("{}")
    assert main(["reproduce", "huang", "--quick", "--out", str(tmp_path / "run"), "--record", str(tmp_path / "record.json")]) == 2
    assert f"fairpath: error: record folder {str(tmp_path / 'record.json')!r} is an existing file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["force", "same study", "empty folder"])
def test_force_the_same_study_or_a_fresh_folder_go_on_to_the_study(case, tmp_path, capsys, monkeypatch):
    import fairpath.reproduce
    from fairpath._exceptions import FairpathInputError

    def run(*args, **kwargs):
        raise FairpathInputError("the study would run now")

    monkeypatch.setattr(fairpath.reproduce, "reproduce_huang", run)
    record = tmp_path / "record"
    argv = ["reproduce", "huang", "--out", str(tmp_path / "run"), "--record", str(record)]
    if case == "force":
        _fake_record(record, _full_settings())
        argv += ["--quick", "--force"]
    elif case == "same study":  # a rerun of the full study refreshes its own record (another device's dtype too)
        _fake_record(record, {**_full_settings(), "dtype": "float32"})
    else:
        record.mkdir()
        (record / "notes.txt").write_text("mine")
    assert main(argv) == 2
    assert "fairpath: error: the study would run now" in capsys.readouterr().err


def test_save_refuses_another_runs_record_in_the_api(tmp_path):
    from fairpath._exceptions import FairpathInputError
    from fairpath.reproduce import HuangResult

    record = tmp_path / "record"
    _fake_record(record, _full_settings())
    quick = HuangResult.__new__(HuangResult)
    object.__setattr__(quick, "settings", {**_full_settings(), "steps": 3})
    with pytest.raises(FairpathInputError, match=r"holds the record of another run \(steps 40 there, 3 here; that run took 58 "
                                                 r"minutes\); choose another folder, or pass force=True to replace it"):
        quick.save(record)


@pytest.fixture(scope="module")
def binary_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("outputs") / "data.csv"
    make_binary_sfm(300, seed=0).data.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def larger_file(tmp_path_factory):
    """Rows enough for repair's held-out verdict (5 folds per group in its 30%)."""
    path = tmp_path_factory.mktemp("outputs") / "larger.csv"
    make_binary_sfm(1000, seed=0).data.to_csv(path, index=False)
    return path


CLOSED_PIPE_COMMANDS = {
    "decompose": ["--n-rep", "1", "--json", "{tmp}/r.json"],
    "repair": ["--bn", "SE", "--engine", "linear", "--n-boot", "20", "--audit-learner", "linear"],
    "frontier": ["--bn-sets", "none,Z", "--repeats", "1", "--engine", "linear", "--no-constrained"],
}


@pytest.mark.parametrize("command", CLOSED_PIPE_COMMANDS)
def test_a_command_into_a_closed_pipe_saves_every_file_first_and_prints_no_traceback(command, larger_file, tmp_path):
    # the hostile pass found repair (and frontier, text audit) printing its summary before saving: a reader that left
    # early (| head -0) lost report.html
    out = tmp_path / "out"
    extra = [part.format(tmp=tmp_path) for part in CLOSED_PIPE_COMMANDS[command]]
    process = subprocess.Popen(
        [sys.executable, "-m", "fairpath.cli", command, str(larger_file), "--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2",
         "--w", "w1,w2", "--y", "y", "--quiet", "--out", str(out), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(SRC)})
    process.stdout.close()  # the reader left before the first line (| head -0)
    err = process.stderr.read().decode()
    assert process.wait() == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err and "error" not in err
    assert {path.name for path in out.iterdir()} >= {"report.html", "result.json", "result.csv"}
    saved = json.loads((out / "result.json").read_text())
    assert command != "decompose" or (saved["sfm"]["x1"] == 1 and (tmp_path / "r.json").exists())


def test_a_rerun_into_the_same_folder_leaves_no_output_of_the_previous_run(tmp_path, capsys):
    sample = make_multilevel_sfm(900, seed=3, levels=3)
    rng = np.random.default_rng(0)
    data = sample.data.assign(x=sample.data["x"].map({0: "white", 1: "black", 2: "asian"}),
                              score=(sample.data["y"] + rng.normal(0, 0.3, len(sample.data))).clip(0, 1))
    path = tmp_path / "levels.csv"
    data.to_csv(path, index=False)
    out = tmp_path / "out"
    audit = ["audit", str(path), "--x", "x", "--x0", "white", "--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--predictor", "score",
             "--bn", "SE", "--n-rep", "1", "--bootstrap", "20", "--quiet", "--out", str(out)]
    assert main(audit) == 0
    assert sorted(p.name for p in (out / "contrasts").iterdir()) == ["01-asian", "02-black"]
    (out / "contrasts" / "02-black" / "my-notes.txt").write_text("mine")  # a user's file is never removed
    (out / "data.csv").write_bytes(path.read_bytes())
    # two levels left: one contrast, saved as a binary audit is (no contrast folder), the user's notes and data kept
    assert main([*audit[:-2], "--drop-levels", "asian", "--out", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in (out / "contrasts").iterdir()) == ["02-black"]
    assert [p.name for p in (out / "contrasts" / "02-black").iterdir()] == ["my-notes.txt"]
    assert list(json.loads((out / "result.json").read_text())["contrasts"]) == ["black"]
    assert (out / "ppm_bins.csv").exists()
    # a binary run after it leaves the same files
    assert main([*audit[:-2], "--x1", "black", "--out", str(out)]) == 0
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")) == [
        "contrasts/02-black/my-notes.txt", "cookbook.csv", "data.csv", "ppm_bins.csv", "report.html", "result.csv", "result.json"]
    shutil.rmtree(out)


def test_record_and_out_naming_one_folder_are_refused_before_the_study(tmp_path, capsys, study_never_runs):
    # the hostile pass: --record study --out study started the study (a model conversion) before any check
    folder = str(tmp_path / "study")
    assert main(["reproduce", "huang", "--quick", "--out", folder, "--record", folder]) == 2
    assert f"fairpath: error: --record and --out name the same folder {folder!r}" in capsys.readouterr().err


def test_json_and_plot_naming_one_file_are_refused(binary_file, tmp_path, capsys):
    target = str(tmp_path / "fig.png")
    code = main(["decompose", str(binary_file), "--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y",
                 "--json", target, "--plot", target])
    assert code == 2 and f"fairpath: error: --json and --plot name the same file {target!r}" in capsys.readouterr().err
