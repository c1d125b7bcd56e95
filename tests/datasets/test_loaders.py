"""Loaders: COMPAS in the paper's preparation and the Census file."""

from __future__ import annotations

import pandas as pd
import pytest

from fairpath import FairpathInputError
from fairpath.datasets import compas_from_raw, load_compas, load_gov_census


def test_compas_from_the_installed_copy():
    dataset = load_compas()
    data = dataset.data
    assert data.shape[0] == 7214
    assert set(data["race"]) == {"Majority", "Minority"}
    assert (data["race"] == "Majority").sum() == 2454
    assert ((data["decile_score"] > 4).astype(int) == data["northpointe"]).all()
    assert dataset.sfm.w == ("juv_fel", "juv_misd", "juv_other", "priors", "charge")


def test_compas_bad_inputs(tmp_path):
    with pytest.raises(FairpathInputError, match="does not exist"):
        load_compas(tmp_path / "nope.csv")
    with pytest.raises(FairpathInputError, match=r"lacks column\(s\)"):
        compas_from_raw(pd.DataFrame({"age": [1]}))


def test_gov_census_keeps_empty_industry(shared_dir):
    dataset = load_gov_census(shared_dir / "data" / "census_20k.csv")
    assert dataset.data.shape == (20000, 17)
    assert dataset.data["industry"].isna().sum() == 0
    with pytest.raises(FairpathInputError, match="does not exist"):
        load_gov_census("missing.csv")
