"""Bad audit config files and settings."""

import re

import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.parity import AuditConfig, load_config
from fairpath._levels import match_level


def test_unknown_key_is_named(tmp_path):
    path = tmp_path / "audit.toml"
    path.write_text('x = "race"\npredictor_columns = ["a"]\n')
    with pytest.raises(FairpathInputError, match=r"unknown key 'predictor_columns' in config file .*audit\.toml"):
        load_config(path)


def test_unparsable_file(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("x: [unclosed\n")
    with pytest.raises(FairpathInputError, match=r"could not parse config file .*audit\.yaml"):
        load_config(path)


def test_missing_file_and_wrong_suffix(tmp_path):
    with pytest.raises(FairpathInputError, match="does not exist"):
        load_config(tmp_path / "nope.toml")
    (tmp_path / "audit.json").write_text("{}")
    with pytest.raises(FairpathInputError, match=r"must end in \.toml, \.yaml or \.yml"):
        load_config(tmp_path / "audit.json")


def test_top_level_must_be_a_mapping(tmp_path):
    path = tmp_path / "audit.yml"
    path.write_text("- a\n- b\n")
    with pytest.raises(FairpathInputError, match="key = value settings at its top level"):
        load_config(path)


def test_missing_required_settings_are_listed():
    with pytest.raises(FairpathInputError, match=r"missing setting\(s\): the data file.*--bn.*--predictor"):
        AuditConfig(x="race").require()


def test_bad_bn_and_list_values():
    with pytest.raises(FairpathInputError, match="'XX' is not a pathway"):
        AuditConfig.from_mapping({"bn": "SE,XX"})
    with pytest.raises(FairpathInputError, match="setting 'z' must be a list of column names"):
        AuditConfig.from_mapping({"z": 3})


def test_unknown_level():
    with pytest.raises(FairpathInputError, match=r"level 'Other' does not occur in column 'race'"):
        match_level(pd.Series(["Majority", "Minority"], name="race"), "Other")


# -- issue 11: typed settings -----------------------------------------------------------------------

@pytest.mark.parametrize("line, message", [
    ('trim = "false"', r"setting 'trim' in config file .*audit\.toml' must be true or false, got 'false' \(str\) \(a string: write it without quotes\)"),
    ('n_folds = "five"', r"setting 'n_folds' in config file .* must be an integer, got 'five' \(str\)"),
    ("seed = 1.5", r"setting 'seed' in config file .* must be an integer, got 1\.5 \(float\)"),
    ("seed = -3", r"setting 'seed' in config file .* must be an integer ≥ 0, got -3"),
    ("n_boot = 1_000_000", r"setting 'n_boot' .* must be an integer ≤ 100,000 \(fairpath's bound\), got 1,000,000"),
    ("n_folds = 5.0", r"setting 'n_folds' .* must be an integer, got 5\.0 \(float\); pass 5"),
    ("level = 1.5", r"setting 'level' .* must lie in \(0, 1\), got 1\.5"),
    ("alpha = true", r"setting 'alpha' .* must be a number, got True \(bool\)"),
    ('learner = "magic"', r"unknown setting 'learner' in config file .*; use one of stack, gbm, rf, linear"),
    ('method = "fast"', r"unknown setting 'method' .*; use one of debiasing, medDML"),
    ("x = 3", r"setting 'x' .* must be a non-empty text \(a name or a path\), got 3 \(int\)"),
    ("x0 = [1, 2]", r"setting 'x0' .* must be one level of the protected attribute"),
    ("predictors = [1, 2]", r"setting 'predictors' .* must list column names \(texts\), got 1 \(int\)"),
])
def test_typed_settings(tmp_path, line, message):
    path = tmp_path / "audit.toml"
    path.write_text(line + "\n")
    with pytest.raises(FairpathInputError, match=message):
        load_config(path)


def test_booleans_stay_booleans(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("trim: false\nn_folds: 3\nseed: 7\nempty_category: industry\n")
    config = load_config(path)
    assert config.trim is False and config.n_folds == 3 and config.seed == 7 and config.empty_category == ["industry"]


def test_config_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_bytes("x: raza\ny: año\n".encode("latin-1"))
    with pytest.raises(FairpathInputError, match=r"config file .*audit\.yaml' is not UTF-8 \(byte 0xf1 at position \d+\); it looks like cp1252"):
        load_config(path)


def test_reading_keys_na_values_and_categorical():
    config = AuditConfig.from_mapping({"na_values": "?", "categorical": "zip,priors"})
    assert config.na_values == ["?"] and config.categorical == ["zip", "priors"]
    assert "na_values" not in config.audit_options() and "categorical" not in config.audit_options()
    with pytest.raises(FairpathInputError, match=r"setting 'na_values' must hold missing-value tokens \(strings\), got 1 \(int\)"):
        AuditConfig.from_mapping({"na_values": ["?", 1]})
    with pytest.raises(FairpathInputError, match=r"setting 'n_boot' must be an integer ≥ 2, got 1"):
        AuditConfig.from_mapping({"n_boot": 1})
def test_yaml_aliases_and_deep_toml_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("z: &cols [a, b]\nw: *cols\n")
    with pytest.raises(FairpathInputError, match=r"config file '.*audit\.yaml' uses a YAML anchor or alias \(line 1\)"):
        load_config(path)
    path = tmp_path / "audit.toml"
    path.write_text("z = " + "[" * 40 + "]" * 40 + "\n")
    with pytest.raises(FairpathInputError, match=r"config file '.*audit\.toml' nests deeper than 32 levels"):
        load_config(path)


def test_a_bad_business_necessity_set_names_the_setting_and_the_file(tmp_path):
    # found by tests/test_fuzz.py: `bn: [null]` was refused without saying which setting or file held it
    path = tmp_path / "audit.yaml"
    path.write_text("bn: [null]\n")
    with pytest.raises(FairpathInputError, match=r"^setting 'bn' in config file '.*audit\.yaml': business-necessity entry None is not a pathway"):
        load_config(path)


@pytest.mark.parametrize(("name", "text"), [("audit.toml", "[bn]\nSE = false\n"), ("audit.toml", "[bn]\nSE = true\nIE = false\n"),
                                            ("audit.yaml", "bn:\n  SE: false\n")])
def test_a_table_of_pathways_is_refused_not_read_by_its_keys(tmp_path, name, text):
    # a [bn] table with SE = false gave BN = {SE}: its keys were read as the pathways, whatever their values said
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(FairpathInputError, match=r"^setting 'bn' in config file '.*audit\.(toml|yaml)': the business-necessity set must "
                                                 r"be a text such as 'SE' or 'IE,SE' or a list of pathways such as \['IE', 'SE'\], "
                                                 r"got \{'SE': .*\}; list the pathways kept \(TOML: bn = \[\"SE\"\], YAML: bn: \[SE\]\)"):
        load_config(path)


def test_the_accepted_forms_of_bn_in_a_config_file(tmp_path):
    for name, text in [("audit.toml", 'bn = ["SE"]\n'), ("audit.toml", 'bn = "SE"\n'), ("audit.yaml", "bn: [SE]\n")]:
        (tmp_path / name).write_text(text)
        assert load_config(tmp_path / name).bn == ("SE",)


@pytest.mark.parametrize("line, text, read", [("x0: true", "true", "True (bool)"), ("x0: yes", "yes", "True (bool)"),
                                              ("x0: 010", "010", "8 (int)"), ("x0: 01", "01", "1 (int)"),
                                              ("drop_levels: [a, on]", "on", "True (bool)"), ("merge: {01: other}", "01", "1 (int)"),
                                              ("merge: {a: off}", "off", "False (bool)")])
def test_a_yaml_level_read_otherwise_than_written_is_refused(tmp_path, line, text, read):
    """YAML x0: true would have named the level 1 of a 0/1 column (True == 1), x0: 010 the level 8: refused, saying to quote it."""
    path = tmp_path / "audit.yaml"
    path.write_text(f"x: race\n{line}\n")
    key = line.split(":")[0]
    with pytest.raises(FairpathInputError, match=re.escape(
            f"setting {key!r} in config file {str(path)!r} (line 2) writes the level {text} unquoted, which YAML reads as {read}, not "
            f"as the text {text!r}; levels are matched to the cells' text exactly: quote it, e.g. {key}: '{text}'")):
        load_config(path)


def test_quoted_yaml_levels_and_plain_integers_are_their_text(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("x: race\nx0: 'true'\nx1: 0\ndrop_levels: ' base,None'\nmerge: {'01': other}\n")
    config = load_config(path)
    assert (config.x0, config.x1, config.drop_levels, config.merge) == ("true", 0, [" base", "None"], {"01": "other"})
    column = pd.Series(["true", "True", "0"], name="race")
    assert match_level(column, config.x0) == "true" and match_level(column, config.x1) == "0"


def test_a_toml_boolean_or_decimal_level_is_refused(tmp_path):
    path = tmp_path / "audit.toml"
    for line, value, text in (("x0 = true", "True (bool)", "true"), ("x1 = 1.0", "1.0 (float)", "1.0")):
        path.write_text(f'x = "race"\n{line}\n')
        with pytest.raises(FairpathInputError, match=re.escape(
                f"setting {line[:2]!r} in config file {str(path)!r}: a level is named by its cells' text, got {value}; write the "
                f"level exactly as the data write it, quoted in a settings file (e.g. x0: '{text}' in YAML")):
            load_config(path)
