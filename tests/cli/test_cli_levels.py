"""Every level of X from the command line: --x0 without --x1, --contrasts pairs, --x a,b intersections, --merge and
--drop-levels, and the refusal of small cells."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from fairpath.cli import main
from fairpath.datasets import make_multilevel_sfm

FLAGS = ["--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--n-rep", "1", "--seed", "1"]


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    sample = make_multilevel_sfm(2400, seed=3, levels=3)
    rng = np.random.default_rng(0)
    data = sample.data.assign(x=sample.data["x"].map({0: "white", 1: "black", 2: "asian"}),
                              sex=rng.choice(["female", "male"], len(sample.data)), score=sample.outcome_mean(sample.data))
    data.loc[data.index[:8], "x"] = "NHOPI"  # a level too small to fit
    path = tmp_path_factory.mktemp("data") / "levels.csv"
    data.to_csv(path, index=False)
    return path


def test_decompose_without_x1_compares_every_level_with_the_reference(csv_path, tmp_path, capsys):
    code = main(["decompose", str(csv_path), "--x", "x", "--x0", "white", *FLAGS, "--drop-levels", "NHOPI", "--out", str(tmp_path)])
    assert code == 0
    captured = capsys.readouterr()
    assert "note: dropped 8 rows of column 'x', level(s) 'NHOPI' (8 rows)" in captured.err
    payload = json.loads((tmp_path / "result.json").read_text())
    assert list(payload["contrasts"]) == ["asian", "black"]
    assert payload["contrasts"]["black"]["sfm"]["x1"] == "black" and payload["counts"]["n"] == 2392
    assert "Effects of each level of x against 'white' (2 contrasts)" in captured.out
    assert (tmp_path / "report.html").read_text().count('class="table matrix"') == 1


def test_a_small_level_is_refused_naming_both_remedies(csv_path, capsys):
    code = main(["decompose", str(csv_path), "--x", "x", "--x0", "white", *FLAGS])
    assert code == 2
    err = capsys.readouterr().err
    assert "column 'x' has 1 level with fewer than 50 rows: 'NHOPI' (8 rows)" in err
    assert '--merge "NHOPI=other"' in err and '--drop-levels "NHOPI"' in err


def test_merge_and_pairs(csv_path, tmp_path):
    code = main(["decompose", str(csv_path), "--x", "x", "--x0", "white", *FLAGS, "--merge", "NHOPI=asian", "--contrasts", "pairs",
                 "--json", str(tmp_path / "r.json")])
    assert code == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    assert list(payload["contrasts"]) == ["asian", "black", "black vs asian"]
    counts = pd.read_csv(csv_path)["x"].value_counts()
    assert payload["counts"]["per_level"] == {"white": counts["white"], "asian": counts["asian"] + 8, "black": counts["black"]}


def test_an_intersection_of_two_columns(csv_path, tmp_path):
    code = main(["audit", str(csv_path), "--x", "x,sex", "--x0", "white/male", *FLAGS, "--predictor", "score", "--bn", "DE,IE,SE",
                 "--drop-levels", "NHOPI/female,NHOPI/male", "--bootstrap", "20", "--out", str(tmp_path)])
    assert code == 0
    payload = json.loads((tmp_path / "result.json").read_text())
    assert list(payload["contrasts"]) == ["asian/female", "asian/male", "black/female", "black/male", "white/female"]
    assert payload["sfm"]["x"] == "x/sex" and payload["sfm"]["x1"] is None
    assert len(list((tmp_path / "contrasts").iterdir())) == 5


# -- levels are the file's text, end to end (issue 41) -------------------------------------------------

@pytest.fixture(scope="module")
def coded_file(tmp_path_factory):
    """Occupation-like codes: 0, 00 and 1 (pandas reads 0 and 00 as one number), a level None and one with a leading space."""
    sample = make_multilevel_sfm(1500, seed=3, levels=5)
    data = sample.data.assign(x=sample.data["x"].map({0: "0", 1: "00", 2: "1", 3: "None", 4: " base"}))
    path = tmp_path_factory.mktemp("coded") / "coded.csv"
    data.to_csv(path, index=False)
    return path


def _text_counts(path) -> dict:
    return pd.read_csv(path, dtype=str, keep_default_na=False)["x"].value_counts().to_dict()


@pytest.mark.parametrize("reading", [[], ["--categorical", "x"]], ids=["levels", "categorical"])
def test_codes_with_leading_zeros_stay_apart(coded_file, reading, tmp_path):
    code = main(["decompose", str(coded_file), "--x", "x", "--x0", "00", *FLAGS, "--folds", "2", *reading, "--json", str(tmp_path / "r.json")])
    assert code == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    assert payload["counts"]["per_level"] == _text_counts(coded_file) and len(payload["counts"]["per_level"]) == 5
    assert sorted(payload["contrasts"]) == [" base", "0", "1", "None"] and payload["sfm"]["x0"] == "00"


def test_names_with_spaces_are_matched_as_written(coded_file, tmp_path, capsys):
    code = main(["decompose", str(coded_file), "--x", "x", "--x0", "0", *FLAGS, "--folds", "2", "--drop-levels", " base,None",
                 "--merge", "00=1", "--json", str(tmp_path / "r.json")])
    assert code == 0
    counts = _text_counts(coded_file)
    assert f"level(s) ' base' ({counts[' base']} rows), 'None' ({counts['None']} rows)" in capsys.readouterr().err
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["per_level"] == {"0": counts["0"], "1": counts["00"] + counts["1"]}
    code = main(["decompose", str(coded_file), "--x", "x", "--x0", "0", *FLAGS, "--drop-levels", "base", "--json", str(tmp_path / "r.json")])
    assert code == 2
    assert ("drop_levels names level(s) ['base'] that column 'x' does not have (level names are matched exactly as written, spaces "
            "included: 'base' is not ' base')") in capsys.readouterr().err


def test_a_yaml_level_that_reads_as_a_boolean_is_refused(coded_file, tmp_path, capsys):
    config = tmp_path / "audit.yaml"
    config.write_text(f"data: {coded_file}\nx: x\nx0: true\ny: y\npredictors: [y]\nbn: SE\nout: {tmp_path / 'out'}\n")
    code = main(["audit", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("fairpath: error:") == 1
    assert "writes the level true unquoted, which YAML reads as True (bool), not as the text 'true'" in err
