"""``fairpath decompose`` with bad input exits with code 2 and a message naming the problem."""

from __future__ import annotations

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
