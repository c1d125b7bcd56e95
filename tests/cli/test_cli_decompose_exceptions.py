"""``fairpath decompose`` with bad input exits with code 2 and a message naming the problem."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath.cli import main

ARGS = ["--x", "x", "--x0", "a", "--x1", "b", "--y", "y"]


def test_missing_file(tmp_path, capsys):
    assert main(["decompose", str(tmp_path / "nope.csv"), *ARGS]) == 2
    assert "nope.csv' does not exist" in capsys.readouterr().err


def test_unparseable_file(tmp_path, capsys):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not a parquet file")
    assert main(["decompose", str(path), *ARGS]) == 2
    assert "could not parse data file" in capsys.readouterr().err


def test_unknown_level_and_column(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("x,y\na,1\nb,0\n")
    assert main(["decompose", str(path), "--x", "x", "--x0", "a", "--x1", "c", "--y", "y"]) == 2
    assert "level 'c' does not occur in column 'x'" in capsys.readouterr().err
    assert main(["decompose", str(path), "--x", "race", "--x0", "a", "--x1", "b", "--y", "y"]) == 2
    assert "column 'race' not found" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["--method", "magic"], ["--learner", "magic"]])
def test_unknown_choices_are_refused_by_the_parser(flag, tmp_path):
    with pytest.raises(SystemExit):
        main(["decompose", str(tmp_path / "d.csv"), *ARGS, *flag])


def test_out_that_is_a_file_is_refused_before_any_computation(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    assert main(["decompose", str(tmp_path / "nope.csv"), *ARGS, "--out", str(taken)]) == 2
    assert f"--out folder '{taken}' is an existing file, not a folder" in capsys.readouterr().err


# -- a part of an intersection X in another role (issue 41) -------------------------------------------

@pytest.fixture(scope="module")
def people_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 600
    path = tmp_path_factory.mktemp("people") / "people.csv"
    pd.DataFrame({"race": rng.choice(["a", "b", "c"], n), "sex": rng.choice(["f", "m"], n), "age": rng.normal(size=n),
                  "w": rng.normal(size=n), "y": rng.integers(0, 2, n), "score": rng.random(n)}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("command, flags, role", [
    ("decompose", ["--z", "sex,age", "--w", "w", "--y", "y"], "Z (a confounder)"),
    ("decompose", ["--z", "age", "--w", "w,sex", "--y", "y"], "W (a mediator)"),
    ("decompose", ["--z", "age", "--w", "w", "--y", "sex"], "Y (the outcome)"),
    ("decompose", ["--z", "age", "--w", "w", "--y", "y", "--predictor", "score,sex"], "a predictor"),
    ("audit", ["--z", "sex,age", "--w", "w", "--y", "y", "--predictor", "score", "--bn", "SE", "--fail-on", "violation"], "Z (a confounder)"),
    ("audit", ["--z", "age", "--w", "w", "--y", "y", "--predictor", "sex", "--bn", "SE", "--fail-on", "violation"], "a predictor"),
])
def test_a_part_of_x_in_another_role_is_refused(people_file, command, flags, role, tmp_path, capsys):
    """--x race,sex with sex in Z had passed every check, and audit --fail-on violation had exited 0 (SUCCESS)."""
    code = main([command, str(people_file), "--x", "race,sex", "--x0", "a/f", *flags, "--folds", "2", "--quiet",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("fairpath: error:") == 1 and "Traceback" not in err
    assert f"column 'sex' is part of X ('race/sex', the intersection of ['race', 'sex']) and also {role}; each column may play one role" in err
    assert not (tmp_path / "out").exists()
