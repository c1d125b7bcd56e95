"""Importing fairpath changes nothing outside it: the matplotlib backend stays the user's, and the
text specifications and metrics load without torch; ``fairpath --help`` loads none of the heavy libraries.
Each check runs in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fairpath

SOURCE_ROOT = str(Path(fairpath.__file__).resolve().parents[1])


HEAVY = ("numpy", "pandas", "scipy", "sklearn", "lightgbm", "matplotlib", "torch", "transformers")
# Modules loaded by `fairpath --help` (84 with Python 3.11: the interpreter's own, argparse and its helpers, and
# fairpath, fairpath.cli and three small core modules); one heavy library alone loads over a hundred.
MAX_HELP_MODULES = 120


def _run(code: str, *options: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [SOURCE_ROOT, os.environ.get("PYTHONPATH")]))}
    env.pop("MPLBACKEND", None)
    done = subprocess.run([sys.executable, *options, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("module", ["fairpath.parity", "fairpath.repair", "fairpath.report", "fairpath.reproduce", "fairpath.cli"])
def test_importing_leaves_the_matplotlib_backend_alone(module):
    code = f"import matplotlib; matplotlib.use('svg'); import {module}; print(matplotlib.get_backend())"
    assert _run(code) == "svg"


def test_the_command_line_leaves_the_backend_alone_when_a_command_runs():
    # (was: it set Agg for the figures still drawn through pyplot; every figure is a plain Figure now)
    code = ("import matplotlib; matplotlib.use('svg'); from fairpath.cli import main\n"
            "print(main(['reproduce']), matplotlib.get_backend())")
    assert _run(code).splitlines()[-1].lower() == "2 svg"


@pytest.mark.parametrize(("argv", "status"), [(["--help"], 0), (["--version"], 0), (["no-such-command"], 2)])
def test_the_command_list_loads_no_heavy_library(argv, status):
    """``python -m fairpath --help`` lists the commands without importing their modules (or numpy, pandas ...)."""
    code = ("import json, runpy, sys\n"
            f"sys.argv = ['fairpath', *{argv!r}]\n"
            "try:\n    runpy.run_module('fairpath', run_name='__main__', alter_sys=True)\nexcept SystemExit as done:\n    code = done.code\n"
            "print(json.dumps([code, sorted(sys.modules)]))")
    code, modules = json.loads(_run(code).splitlines()[-1])
    assert code == status
    assert [name for name in modules if name.split(".")[0] in HEAVY] == []
    assert "fairpath.cli" in modules and [name for name in modules if name.startswith("fairpath.cli._")] == []
    assert len(modules) <= MAX_HELP_MODULES


def test_text_specifications_and_metrics_import_without_torch():
    code = ("import sys, fairpath.text as text\n"
            "spec = text.FairnessSpec.builtin('country'); value = text.wasserstein1([0.1, 0.2], [0.3, 0.4])\n"
            "print('torch' in sys.modules, round(value, 6))")
    assert _run(code) == "False 0.2"


def test_the_settings_dataclasses_import_without_torch():
    # the command line reads its text flags' defaults and choices from them when it builds its parser
    code = ("import sys\nfrom fairpath.text import GenerationSettings\nfrom fairpath.text.debias import DebiasConfig\n"
            "print('torch' in sys.modules, GenerationSettings().n_samples, DebiasConfig.__dataclass_fields__['steps'].default)")
    assert _run(code) == "False 20 100"


def test_torch_dependent_text_names_load_on_first_access():
    code = "import sys, fairpath.text as text\ngenerator = text.HFGenerator\nprint('torch' in sys.modules, generator.__module__)"
    assert _run(code) == "True fairpath.text._generation"
    import fairpath.text

    with pytest.raises(AttributeError, match="module 'fairpath.text' has no attribute 'NoSuchName'"):
        fairpath.text.NoSuchName  # noqa: B018


# The libraries a fit or a figure needs: over a second to import together (Jinja2, 16 ms, is not among them).
LEARNING = ("sklearn", "lightgbm", "scipy.stats", "matplotlib")


def _loaded(code: str) -> list[str]:
    """The LEARNING libraries loaded after ``code`` ran in a fresh interpreter."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(name for name in {LEARNING!r} if name in sys.modules)))"
    return json.loads(_run(probe).splitlines()[-1])


def test_the_decomposition_package_loads_its_learners_on_first_use():
    assert _loaded("import fairpath.causal") == []
    assert _loaded("import fairpath.causal as causal\nlearner = causal.StackedLearner()") == ["lightgbm", "scipy.stats", "sklearn"]
    import fairpath.causal

    with pytest.raises(AttributeError, match="module 'fairpath.causal' has no attribute 'NoSuchLearner'"):
        fairpath.causal.NoSuchLearner  # noqa: B018


def test_decompose_help_and_an_input_error_load_no_learner(tmp_path):
    """``fairpath decompose --help`` and a refused column answer before scikit-learn or LightGBM is imported."""
    table = tmp_path / "t.csv"
    table.write_text("x,z,y\n0,1,1\n1,0,0\n")
    run = ("from fairpath.cli import main\n"
           "try:\n    main(['decompose', '--help'])\nexcept SystemExit:\n    pass\n"
           f"assert main(['decompose', {str(table)!r}, '--x', 'x', '--x0', '0', '--x1', '1', '--z', 'z', '--w', 'w', '--y', 'y']) == 2")
    assert _loaded(run) == []
