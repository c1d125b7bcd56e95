import pytest
import yaml

from fairpath.cli import main


def _run(tmp_path, model, attribute, *extra):
    return main(["text", "audit", "--model", str(model), "--attribute", str(attribute), "--samples", "2",
                 "--max-new-tokens", "3", "--permutations", "19", "--no-quality", "--out", str(tmp_path / "out"), *extra])


def test_unknown_scorer(tiny_lm_path, tmp_path, capsys):
    assert _run(tmp_path, tiny_lm_path, "country", "--scorers", "vader,happy") == 2
    assert "unknown scorer 'happy'; valid names are" in capsys.readouterr().err


def test_model_that_is_not_a_causal_lm(tiny_classifier_path, tmp_path, capsys):
    assert _run(tmp_path, tiny_classifier_path, "country") == 2
    error = capsys.readouterr().err
    assert str(tiny_classifier_path) in error


def test_template_without_placeholder(tiny_lm_path, tmp_path, capsys):
    spec = tmp_path / "bad.yaml"
    spec.write_text(yaml.safe_dump({"attribute": "country", "values": ["Chile", "Italy"], "templates": ["People are"]}))
    assert _run(tmp_path, tiny_lm_path, spec) == 2
    assert "has no placeholder {country}" in capsys.readouterr().err


def test_attribute_with_one_value(tiny_lm_path, tmp_path, capsys):
    spec = tmp_path / "one.yaml"
    spec.write_text(yaml.safe_dump({"attribute": "country", "values": ["Chile"], "templates": ["{country} is"]}))
    assert _run(tmp_path, tiny_lm_path, spec) == 2
    assert "needs at least two values" in capsys.readouterr().err


def test_corrupted_samples_file(tiny_lm_path, tmp_path, capsys):
    (tmp_path / "out" / "samples").mkdir(parents=True)
    (tmp_path / "out" / "samples" / "part-1.parquet").write_text("garbage")
    assert _run(tmp_path, tiny_lm_path, "country") == 2
    error = capsys.readouterr().err
    assert "samples file" in error and "part-1.parquet' cannot be read" in error


def test_permutations_and_alpha_out_of_range(tiny_lm_path, tmp_path, capsys):
    for flag, value, message in (("--permutations", "0", "--permutations must be an integer ≥ 1, got 0"),
                                 ("--alpha", "1.5", "--alpha must lie in (0, 1), got 1.5")):
        with pytest.raises(SystemExit) as stop:
            _run(tmp_path, tiny_lm_path, "country", flag, value)
        assert stop.value.code == 2 and f"fairpath: error: argument {flag}: {message}" in capsys.readouterr().err
    assert not (tmp_path / "out" / "samples").exists()  # refused before generating


def test_quality_flags_out_of_range(tiny_lm_path, tmp_path, capsys):
    with pytest.raises(SystemExit):
        _run(tmp_path, tiny_lm_path, "country", "--similarity-threshold", "2")
    assert "--similarity-threshold" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _run(tmp_path, tiny_lm_path, "country", "--quality-per-prompt", "0")
    assert "--quality-per-prompt" in capsys.readouterr().err
