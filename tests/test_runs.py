"""The one resume mechanism (fairpath._runs.RunFolder): steps reused under the same key, refused or restarted
under any other, whole files only after a kill -9, tasks saved as they finish."""

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath._runs import KEY_FILE, RunFolder

KEY = {"study": "compas", "repeats": 3, "seed": 0, "input_sha256": "ab" * 32}


def folder(path, key=KEY, **options):
    return RunFolder(path, kind="test study", version=1, key=key, progress=False, **options)


def test_a_step_is_computed_once_and_loaded_under_the_same_key(tmp_path):
    calls = []
    first = folder(tmp_path).step("step", lambda: calls.append(1) or {"value": 1.5, "pair": (1, 2)})
    again = folder(tmp_path, dict(KEY))
    loaded = again.step("step", lambda: calls.append(1) or {"value": 2.5})
    assert calls == [1] and again.ran == [] and loaded == first == {"value": 1.5, "pair": [1, 2]}  # JSON form both times
    assert set(folder(tmp_path).timings()) == {"step"}


@pytest.mark.parametrize("change, named", [
    ({"seed": 1}, "seed"),
    ({"input_sha256": "cd" * 32}, "input_sha256"),  # another input file
    ({"extra": True}, "extra"),
])
def test_other_settings_or_input_are_refused_naming_what_differs(tmp_path, change, named):
    folder(tmp_path).step("step", lambda: {"value": 1.0})
    with pytest.raises(FairpathInputError, match=rf"holds test study results computed with other {named}; use another output folder"):
        folder(tmp_path, {**KEY, **change})


@pytest.mark.parametrize("field, value", [("fairpath", "0.0.1"), ("step_version", 0)])
def test_steps_of_another_code_version_are_refused(tmp_path, field, value):
    folder(tmp_path)
    key_file = tmp_path / KEY_FILE
    key_file.write_text(json.dumps({**json.loads(key_file.read_text()), field: value}))
    with pytest.raises(FairpathInputError, match=rf"computed with other {field};"):
        folder(tmp_path)


def test_a_folder_with_results_but_no_key_is_of_an_unknown_key(tmp_path):
    (tmp_path / "step.json").write_text("{}")
    with pytest.raises(FairpathInputError, match=r"computed with other fairpath, input_sha256, repeats, seed, step, step_version, study"):
        folder(tmp_path)


def test_restart_computes_again_and_warns_naming_what_changed(tmp_path):
    folder(tmp_path, on_other_key="restart").step("step", lambda: {"value": 1.0})
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "other.json").write_text("{}")
    with pytest.warns(UserWarning, match=r"holds test study results of other seed; they are computed again"):
        again = folder(tmp_path, {**KEY, "seed": 1}, on_other_key="restart")
    assert again.step("step", lambda: {"value": 2.0}) == {"value": 2.0}
    assert sorted(p.name for p in tmp_path.iterdir()) == [KEY_FILE, "step.json", "timings.json"]


def test_a_damaged_step_file_is_computed_again(tmp_path):
    folder(tmp_path).step("step", lambda: {"value": 1.0})
    (tmp_path / "step.json").write_bytes(b'{"value": 1.')
    with pytest.warns(UserWarning, match=r"step\.json cannot be read back .*step step is computed again"):
        assert folder(tmp_path).step("step", lambda: {"value": 3.0}) == {"value": 3.0}
    assert json.loads((tmp_path / "step.json").read_text()) == {"value": 3.0}


def test_an_artefact_keeps_its_own_format(tmp_path):
    save = lambda value, path: path.write_bytes(bytes(value))  # noqa: E731
    load = lambda path: list(path.read_bytes())  # noqa: E731
    assert folder(tmp_path).artefact("blob", lambda: [1, 2, 3], save=save, load=load, suffix=".bin") == [1, 2, 3]
    assert folder(tmp_path).artefact("blob", lambda: [9], save=save, load=load, suffix=".bin") == [1, 2, 3]


def _square(task, offset):
    return {"task": task, "value": task * task + offset}


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_map_saves_each_task_and_runs_only_the_missing_ones(tmp_path, n_jobs):
    tasks = [3, 1, 2, 5]
    name = lambda task: f"task{task}"  # noqa: E731
    results = folder(tmp_path).map(_square, tasks, name=name, shared={"offset": 1}, desc="squares", n_jobs=n_jobs)
    assert results == [{"task": t, "value": t * t + 1} for t in tasks]  # in the order of the tasks
    (tmp_path / "task2.json").unlink()
    (tmp_path / "task5.json").write_text(json.dumps({"task": 5, "value": -1}))  # a saved result is trusted
    again = folder(tmp_path)
    assert again.map(_square, tasks, name=name, shared={"offset": 1}, desc="squares")[2:] == [{"task": 2, "value": 5},
                                                                                                {"task": 5, "value": -1}]
    assert again.ran == ["task2"]


KILLED_RUN = textwrap.dedent("""
    import sys, time
    from fairpath._runs import RunFolder

    def slow(task):
        time.sleep(0.15)
        return {"task": task, "value": [task] * 50_000}  # a large file: a kill often falls inside a write

    run = RunFolder(sys.argv[1], kind="killed study", version=1, key={"seed": 0}, progress=False)
    run.map(slow, range(10), name=lambda t: f"t{t:02d}", desc="slow")
""")


def test_a_run_killed_mid_way_resumes_to_the_numbers_of_an_uninterrupted_one(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(KILLED_RUN)
    killed = subprocess.Popen([sys.executable, str(script), str(tmp_path / "killed")])
    deadline = time.monotonic() + 60
    while len(list((tmp_path / "killed").glob("t[0-9]*.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    kept = sorted(p.name for p in (tmp_path / "killed").glob("t[0-9]*.json"))
    assert 3 <= len(kept) < 10  # stopped mid-way, with whole steps only: each reads back
    assert all(json.loads(p.read_text())["task"] == int(p.stem[1:]) for p in (tmp_path / "killed").glob("t[0-9]*.json"))
    subprocess.run([sys.executable, str(script), str(tmp_path / "killed")], check=True)
    subprocess.run([sys.executable, str(script), str(tmp_path / "whole")], check=True)
    steps = sorted(p.name for p in (tmp_path / "whole").glob("t[0-9]*.json"))
    assert sorted(p.name for p in (tmp_path / "killed").glob("t[0-9]*.json")) == steps and len(steps) == 10
    assert all((tmp_path / "killed" / s).read_text() == (tmp_path / "whole" / s).read_text() for s in steps)
