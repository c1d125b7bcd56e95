"""Audit settings from TOML/YAML files and flags."""

import pandas as pd
import pytest

from fairpath.parity import AuditConfig, load_config
from fairpath._levels import match_level

TOML = """
data = "scores.csv"
x = "race"
x0 = "Majority"
x1 = "Minority"
z = ["age", "sex"]
w = "priors,charge"
y = "two_year_recid"
predictors = ["northpointe"]
bn = "SE"
out = "report"
margin = 0.02
n_bins = 8
"""

YAML = """
data: scores.csv
x: race
x0: Majority
x1: Minority
z: [age, sex]
w: [priors, charge]
y: two_year_recid
predictors: [northpointe]
bn: [SE]
out: report
margin: 0.02
n_bins: 8
"""


@pytest.mark.parametrize("suffix, text", [(".toml", TOML), (".yaml", YAML)])
def test_toml_and_yaml_give_the_same_settings(tmp_path, suffix, text):
    path = tmp_path / f"audit{suffix}"
    path.write_text(text)
    config = load_config(path)
    assert config.z == ["age", "sex"] and config.w == ["priors", "charge"]
    assert config.bn == ("SE",)
    assert config.margin == 0.02 and config.n_bins == 8 and config.n_boot == 200
    assert config.require() is config


def test_flags_override_the_file_and_none_keeps_it(tmp_path):
    path = tmp_path / "audit.toml"
    path.write_text(TOML)
    config = load_config(path).updated({"bn": "DE,IE,SE", "n_bins": None, "predictors": ["a", "b"]})
    assert config.bn == ("DE", "IE", "SE") and config.n_bins == 8 and config.predictors == ["a", "b"]


def test_audit_options_hold_every_non_role_setting():
    options = AuditConfig().audit_options()
    assert set(options) == {"method", "learner", "n_folds", "seed", "level", "alpha", "margin", "n_bins", "n_boot",
                            "eps", "trim", "nboot1", "n_rep", "contrasts"}


def test_audit_options_default_to_audit_s_own_defaults():
    # one source of truth: a config without a setting runs audit() as a call without that keyword would
    import inspect

    from fairpath.parity import audit

    defaults = {name: p.default for name, p in inspect.signature(audit).parameters.items() if p.default is not p.empty}
    assert AuditConfig().audit_options() == {name: defaults[name] for name in AuditConfig().audit_options()}


def test_match_level_matches_strings_to_numeric_levels():
    column = pd.Series([0, 1, 1], name="x")
    assert match_level(column, "1") == 1
    assert match_level(column, 0) == 0
    assert match_level(pd.Series(["a", "b"], name="g"), "b") == "b"
