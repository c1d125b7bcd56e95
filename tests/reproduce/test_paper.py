"""The paper studies' resumable steps: reused under the same key, refused under any other."""

import json

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.reproduce._paper import StepStore

SETTINGS = {"study": "compas", "repeats": 3, "seed": 0, "input_sha256": "ab" * 32}


def test_a_step_is_computed_once_and_loaded_under_the_same_key(tmp_path):
    calls = []
    first = StepStore(tmp_path, SETTINGS, progress=False).run("step", lambda: calls.append(1) or {"value": 1.5})
    again = StepStore(tmp_path, dict(SETTINGS), progress=False)
    loaded = again.run("step", lambda: calls.append(1) or {"value": 2.5})
    assert calls == [1] and again.ran == [] and loaded == first and loaded["value"] == 1.5


@pytest.mark.parametrize("change, named", [
    ({"seed": 1}, "seed"),
    ({"input_sha256": "cd" * 32}, "input_sha256"),  # another input file
    ({"extra": True}, "extra"),
])
def test_other_settings_or_input_are_refused_naming_what_differs(tmp_path, change, named):
    StepStore(tmp_path, SETTINGS, progress=False).run("step", lambda: {"value": 1.0})
    with pytest.raises(FairpathInputError, match=rf"steps holds steps computed with other settings \(\['{named}'\]\); use another --out"):
        StepStore(tmp_path, {**SETTINGS, **change}, progress=False)


@pytest.mark.parametrize("field, value", [("fairpath", "0.0.1"), ("step_version", 1)])
def test_steps_of_another_code_version_are_refused(tmp_path, field, value):
    StepStore(tmp_path, SETTINGS, progress=False)
    key_file = tmp_path / "steps" / "settings.json"
    key_file.write_text(json.dumps({**json.loads(key_file.read_text()), field: value}))
    with pytest.raises(FairpathInputError, match=rf"other settings \(\['{field}'\]\)"):
        StepStore(tmp_path, SETTINGS, progress=False)
