"""Bad audit config files and settings."""

import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.parity import AuditConfig, load_config
from fairpath.causal._data import resolve_level


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
        resolve_level(pd.Series(["Majority", "Minority"], name="race"), "Other")
