"""Bad input to the Business Necessity Cookbook."""

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.causal import SFM, decompose
from fairpath.parity import business_necessity_cookbook, parse_bn


@pytest.fixture(scope="module")
def decomposition():
    rng = np.random.default_rng(1)
    n = 600
    x = rng.integers(0, 2, n)
    w = x + rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-w))).astype(int)
    data = pd.DataFrame({"x": x, "w": w, "y": y, "yhat": 1 / (1 + np.exp(-w))})
    return decompose(data, SFM(x="x", x0=0, x1=1, w=["w"], y="y"), predictors=["yhat"], learner="linear", seed=0)


@pytest.mark.parametrize("bn", ["SE,XE", ["DE", "total"], "ctfde"])
def test_bn_entry_other_than_a_pathway(bn):
    with pytest.raises(FairpathInputError, match="is not a pathway; use any of DE, IE, SE"):
        parse_bn(bn)


def test_unknown_predictor(decomposition):
    with pytest.raises(FairpathInputError, match=r"predictor\(s\) \['other'\] are not in the decomposition"):
        business_necessity_cookbook(decomposition, "SE", predictors=["other"])


def test_decomposition_without_predictors(decomposition):
    only_y = decompose(pd.DataFrame({"x": [0, 1] * 20, "y": [0, 1, 1, 0] * 10}), SFM(x="x", x0=0, x1=1, y="y"),
                       learner="linear", seed=0)
    with pytest.raises(FairpathInputError, match="no predictor to judge"):
        business_necessity_cookbook(only_y, "SE")


@pytest.mark.parametrize("alpha", [0, 1, 1.5])
def test_bad_alpha(decomposition, alpha):
    with pytest.raises(FairpathInputError, match="alpha must lie in"):
        business_necessity_cookbook(decomposition, "SE", alpha=alpha)


@pytest.mark.parametrize("margin", [0, -0.1])
def test_bad_margin(decomposition, margin):
    with pytest.raises(FairpathInputError, match=r"margin must lie in \(0, inf\], got "):
        business_necessity_cookbook(decomposition, "SE", margin=margin)


def test_predictor_on_another_scale_than_the_outcome():
    rng = np.random.default_rng(1)
    n = 600
    x = rng.integers(0, 2, n)
    w = x + rng.normal(size=n)
    y = 2 * (rng.random(n) < 1 / (1 + np.exp(-w))).astype(int) - 1  # coded -1/+1
    data = pd.DataFrame({"x": x, "w": w, "y": y, "yhat": 1 / (1 + np.exp(-w))})
    recoded = decompose(data, SFM(x="x", x0=0, x1=1, w=["w"], y="y"), predictors=["yhat"], learner="linear", seed=0, n_rep=1, progress=False)
    with pytest.raises(FairpathInputError, match=r"predictor column 'yhat' \(range \[0\.\d+, 0\.\d+\]\) is not on the scale of outcome column 'y' \(values \{-1, 1\}\)"):
        business_necessity_cookbook(recoded, "SE")


def test_one_predictor_name_and_typed_settings(decomposition):
    assert business_necessity_cookbook(decomposition, "SE", predictors="yhat").predictors == ["yhat"]
    with pytest.raises(FairpathInputError, match=r"alpha must be a number, got '0\.05' \(str\)"):
        business_necessity_cookbook(decomposition, "SE", alpha="0.05")
    with pytest.raises(FairpathInputError, match=r"margin must be a number, got '0\.1' \(str\)"):
        business_necessity_cookbook(decomposition, "SE", margin="0.1")
