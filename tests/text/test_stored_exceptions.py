import json

import numpy as np
import pandas as pd
import pytest
from toy_spec import SPEC  # tests/text is on the import path (no __init__.py)

from fairpath._exceptions import FairpathInputError
from fairpath.text import (
    GenerationSettings,
    PoolGenerator,
    SampleStore,
    audit_samples,
    generate_samples,
    read_generations,
)


def _complete() -> pd.DataFrame:
    prompts = SPEC.prompts()
    return pd.DataFrame({"template": prompts["template"], "value": prompts["value"], "prompt": prompts["prompt"],
                         "continuation": "It was fine."})


def _audit(frame, source="'g.csv'"):
    return audit_samples(frame, SPEC, scorers=["vader"], n_permutations=19, quality=False, source=source)


def test_missing_cells_are_named_with_the_file():
    frame = _complete()
    frame = frame[~((frame["template"] == "{country} is") & frame["value"].isin(["B", "D"]))]
    with pytest.raises(FairpathInputError, match=r"generations 'g.csv' lack 2 of 20 template x value cells: "
                                                 r"template t02 \('\{country\} is'\) x value 'B', "
                                                 r"template t02 \('\{country\} is'\) x value 'D'; every template needs"):
        _audit(frame)


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.drop(columns=["continuation"]), r"lack the columns \['continuation'\]"),
    (lambda f: f.assign(value=f["value"].replace("A", "Z")), r"values that the specification does not define: \['Z'\]"),
    (lambda f: f.assign(template=f["template"].replace("{country} is", "{country} was")),
     r"templates that the specification does not define: \['\{country\} was'\]"),
    (lambda f: f.assign(continuation=[None] + ["x"] * (len(f) - 1)), r"1 rows without a text continuation \(rows \[0\]\)"),
    (lambda f: f.assign(prompt=["I am from Z."] + list(f["prompt"][1:])),
     r"1 prompts that are not their template filled with their value \(rows \[0\]; row 0 has 'I am from Z.', "
     r"the specification gives 'I am from A.'\)"),
    (lambda f: pd.concat([f, f], ignore_index=True).assign(sample_index=0), r"repeat a sample_index within a template x value cell"),
    (lambda f: f.assign(sample_index=-1), r"sample_index values that are not non-negative integers \(rows \[0, 1,"),
    (lambda f: f.assign(continuation=" "), r"generations 'g.csv': all 20 continuations are empty, so every score is the score of no text"),
])
def test_bad_generations(change, message):
    with pytest.raises(FairpathInputError, match=message):
        _audit(change(_complete()))


def test_unreadable_and_missing_files(tmp_path):
    with pytest.raises(FairpathInputError, match="does not exist"):
        read_generations(tmp_path / "absent.csv")
    (tmp_path / "g.txt").write_text("x")
    with pytest.raises(FairpathInputError, match=r"is not .csv, .jsonl or .parquet"):
        read_generations(tmp_path / "g.txt")
    (tmp_path / "g.jsonl").write_text("{not json\n")
    with pytest.raises(FairpathInputError, match=r"could not read generations file .*g.jsonl"):
        read_generations(tmp_path / "g.jsonl")
    with pytest.raises(FairpathInputError, match="has no 'model' column to choose model 'm' from"):
        _complete().to_csv(tmp_path / "g.csv", index=False) or read_generations(tmp_path / "g.csv", model="m")


def test_a_store_with_several_runs_needs_a_choice(tmp_path):
    store = SampleStore(tmp_path / "samples")
    prompts = SPEC.prompts()[["prompt", "template_id", "attribute", "value"]]
    for seed in (0, 1):
        generate_samples(PoolGenerator(SPEC), prompts, GenerationSettings(n_samples=2, seed=seed), store, progress=False)
    with pytest.raises(FairpathInputError, match=r"holds 2 runs \(model .* settings .*\); choose one with --model and --settings-hash"):
        read_generations(store.path)
    chosen = read_generations(store.path, settings_hash=GenerationSettings(n_samples=2, seed=1).settings_hash)
    assert len(chosen) == 40 and {"template", "continuation"} <= set(chosen.columns)
    with pytest.raises(FairpathInputError, match="holds no samples of model 'other'"):
        read_generations(store.path, model="other")


def test_text_score_refuses_an_output_path_that_is_a_file_before_scoring(tmp_path, capsys):
    from fairpath.cli import main

    source, out = tmp_path / "g.csv", tmp_path / "taken"
    _complete().to_csv(source, index=False)
    out.write_text("a user's file")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC.to_dict()))
    assert main(["text", "score", str(source), "--attribute", str(spec_file), "--scorers", "vader", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert f"fairpath: error: --out folder {str(out)!r} is an existing file, not a folder; choose a folder path" in captured.err
    assert "Traceback" not in captured.err and "continuations from" not in captured.err  # refused before reading
    assert out.read_text() == "a user's file"


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path, suffix):
    # found by tests/test_fuzz.py: a JSONL file saved with a BOM could not be read at all (pandas' CSV parser
    # already dropped the mark; the CSV case guards that the first column keeps its name)
    frame = _complete()
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"marked{suffix}"
    if suffix == ".csv":
        frame.to_csv(plain, index=False)
    else:
        frame.to_json(plain, orient="records", lines=True)
    marked.write_bytes("\ufeff".encode() + plain.read_bytes())
    pd.testing.assert_frame_equal(read_generations(marked), read_generations(plain))
    assert list(read_generations(marked).columns)[0] == "template"


def _spec_file(tmp_path):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC.to_dict()))
    return spec_file


def _score(tmp_path, source, *options) -> list[str]:
    from fairpath.cli import main

    return ["text", "score", str(source), "--attribute", str(_spec_file(tmp_path)), "--scorers", "vader", "--no-quality",
            "--permutations", "99", "--out", str(tmp_path / "out"), *options], main


def _two_models() -> pd.DataFrame:
    """Every cell twice: once from model m1, once (with other continuations) from m2, numbered within each model."""
    return pd.concat([_complete().assign(model="m1", sample_index=0),
                      _complete().assign(model="m2", sample_index=0, continuation="It was awful.")], ignore_index=True)


@pytest.mark.parametrize("sample_index", [True, False])
def test_generations_of_several_models_are_refused_naming_each_with_its_rows(tmp_path, capsys, sample_index):
    # were pooled into one audit (without sample_index; with it, refused as repeated indices, naming neither model)
    frame = _two_models() if sample_index else _two_models().drop(columns="sample_index")
    with pytest.raises(FairpathInputError, match=r"^generations 'g.csv' hold the continuations of 2 models \('m1': 20 rows, 'm2': 20 rows\); "
                                                 r"an audit is of one model .*choose one with --model NAME \(read_generations\(\.\.\., model=\.\.\.\)\)"):
        _audit(frame)
    source = tmp_path / "g.jsonl"
    frame.to_json(source, orient="records", lines=True)
    argv, main = _score(tmp_path, source)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"fairpath: error: generations {str(source)!r} hold the continuations of 2 models ('m1': 20 rows, 'm2': 20 rows)" in err
    assert "Traceback" not in err and not (tmp_path / "out" / "result.json").exists()
    argv, main = _score(tmp_path, source, "--model", "m2")
    assert main(argv) == 0
    scored = json.loads((tmp_path / "out" / "result.json").read_text())
    assert scored["model"] == "m2"
    assert "TextAuditResult(attribute='country', model='m2', samples=20" in capsys.readouterr().out


def test_a_missing_model_is_one_of_the_models_counted(tmp_path):
    frame = _two_models().drop(columns="sample_index")
    frame.loc[frame["model"] == "m2", "model"] = None
    with pytest.raises(FairpathInputError, match=r"hold the continuations of 2 models \('m1': 20 rows, \(none\): 20 rows\)"):
        _audit(frame)


def test_a_model_or_settings_hash_chosen_in_a_file(tmp_path):
    path = tmp_path / "g.csv"
    _two_models().to_csv(path, index=False)
    with pytest.raises(FairpathInputError, match=r"g\.csv' has no rows of model 'm3'; its 'model' column holds 'm1': 20 rows, 'm2': 20 rows$"):
        read_generations(path, model="m3")
    # --settings-hash was ignored for a file: it filters the file's settings_hash column, or is refused without one
    with pytest.raises(FairpathInputError, match=r"g\.csv' has no 'settings_hash' column to choose settings 'abc' from \(its columns: "
                                                 r"\['template', 'value', 'prompt', 'continuation', 'model', 'sample_index'\]\); "
                                                 "leave the choice out, or give a file with that column"):
        read_generations(path, settings_hash="abc")
    _two_models().assign(settings_hash=["abc"] * 20 + ["def"] * 20).to_csv(path, index=False)
    chosen = read_generations(path, settings_hash="def")
    assert len(chosen) == 20 and set(chosen["model"]) == {"m2"} and set(chosen["settings_hash"]) == {"def"}
    with pytest.raises(FairpathInputError, match=r"has no rows of settings 'xyz'; its 'settings_hash' column holds 'abc': 20 rows, 'def': 20 rows"):
        read_generations(path, settings_hash="xyz")


def test_an_infinite_sample_index_is_refused_naming_the_row():
    frame = _complete().assign(sample_index=range(20)).astype({"sample_index": float})
    frame.loc[3, "sample_index"] = float("inf")
    with pytest.raises(FairpathInputError, match=r"sample_index values that are not non-negative integers \(rows \[3\]; row 3 has 'inf'\)"):
        _audit(frame)


@pytest.mark.parametrize(("value", "shown"), [("inf", "inf"), (1e30, "1e+30"), (1.5, "1.5"), ("two", "two")])
def test_a_sample_index_that_is_no_integer_names_the_row_and_value(tmp_path, capsys, value, shown):
    # inf was a traceback (IntCastingNaNError); 1e30 was accepted
    frame = _complete().assign(sample_index=0).astype({"sample_index": object})
    frame.loc[3, "sample_index"] = value
    source = tmp_path / "g.jsonl"
    frame.to_json(source, orient="records", lines=True)
    argv, main = _score(tmp_path, source)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (f"fairpath: error: generations {str(source)!r} have sample_index values that are not non-negative integers (rows [3]; "
            f"row 3 has {shown!r}); number each continuation of a cell 0, 1, 2, ... or leave the column out") in err
    assert "Traceback" not in err


def test_text_score_reads_a_jsonl_file_with_a_byte_order_mark(tmp_path, capsys):
    source = tmp_path / "g.jsonl"
    _complete().to_json(source, orient="records", lines=True)
    source.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    argv, main = _score(tmp_path, source)
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "out" / "result.json").read_text())["settings"]["samples_source"] == repr(str(source))


def test_generations_of_several_sampling_settings_are_refused_naming_each():
    # a settings_hash column with two runs of one model was pooled when --settings-hash was not given (hostile pass)
    frame = _two_models().assign(model="m1")
    frame["settings_hash"] = np.where(np.arange(len(frame)) < 20, "aaa", "bbb")
    with pytest.raises(FairpathInputError, match=r"^generations 'g.csv' hold the continuations of 2 sampling settings \('aaa': 20 rows, "
                                                 r"'bbb': 20 rows\); .*choose one with --settings-hash HASH"):
        _audit(frame)
