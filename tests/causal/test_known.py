"""Predictors with a known function: decompose evaluates their mean instead of estimating it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpath.causal import SFM, decompose
from fairpath.datasets import make_binary_sfm


def _never_reads_x(frame: pd.DataFrame) -> np.ndarray:
    return 1 / (1 + np.exp(-(frame["z1"] + frame["z2"] + 0.5 * frame["w1"] - 0.5 * frame["w2"])))


def _reads_x(frame: pd.DataFrame) -> np.ndarray:
    return 1 / (1 + np.exp(-(frame["z1"] + 0.8 * (frame["x"] == 1) + 0.5 * frame["w1"] * (1 + frame["x"]))))


@pytest.fixture(scope="module")
def sample():
    sample = make_binary_sfm(1500, seed=4)
    data = sample.data.assign(blind=_never_reads_x(sample.data), aware=_reads_x(sample.data))
    return data, sample.sfm


@pytest.fixture(scope="module")
def fits(sample):
    data, sfm = sample
    common = {"learner": "linear", "seed": 3, "measures": ["tv", "ctfde", "ctfie", "ctfse", "nde"]}
    estimated = decompose(data, sfm, ["blind", "aware"], **common)
    known = decompose(data, sfm, ["blind", "aware"], predictor_functions={"blind": _never_reads_x, "aware": _reads_x}, **common)
    return estimated, known


def test_a_predictor_that_never_reads_x_has_no_direct_effect_on_any_row(fits):
    estimated, known = fits
    de = known.estimate("ctfde", "blind")
    assert de.estimate == 0.0 and de.se == 0.0
    assert (de.ci_low, de.ci_high) == (0.0, 0.0)
    assert np.all(known.pseudo_outcomes("blind")["ctfde"].to_numpy() == 0.0)
    assert estimated.estimate("ctfde", "blind").estimate != 0.0  # estimated, the mean leaves an error


def test_direct_effect_equals_the_manual_average_over_x0_rows(sample, fits):
    data, sfm = sample
    _, known = fits
    x0 = (data["x"] == 0).to_numpy()
    manual = (_reads_x(data.assign(x=1)) - _reads_x(data.assign(x=0)))[x0]
    de = known.estimate("ctfde", "aware")
    assert de.estimate == pytest.approx(manual.mean(), abs=1e-12)
    # the influence function: the x0 rows' deviations over the share of x0, 0 elsewhere
    rows = np.zeros(len(data))
    rows[x0] = (manual - manual.mean()) / x0.mean()
    assert de.se == pytest.approx(rows.std(ddof=1) / np.sqrt(len(rows)), rel=1e-9)


def test_y_and_measures_without_mu_do_not_change(fits):
    estimated, known = fits
    for measure in ("tv", "ctfde", "ctfie", "ctfse"):
        assert known.estimate(measure).estimate == estimated.estimate(measure).estimate  # Y's own fits
    for name in ("blind", "aware"):
        # tv uses no regression, and ctfse only μ(x, z), which is still fitted to the same values
        assert known.estimate("tv", name).estimate == estimated.estimate("tv", name).estimate
        assert known.estimate("ctfse", name).estimate == pytest.approx(estimated.estimate("ctfse", name).estimate, abs=1e-12)
    assert known.settings["known_means"] == ["blind", "aware"]
    assert estimated.settings["known_means"] == []


def test_nested_means_are_fitted_to_the_function(fits):
    _, known = fits
    nde = known.estimate("nde", "blind")  # NDE of a predictor that never reads X: 0 up to ν's own error
    assert abs(nde.estimate) < 3 * max(nde.se, 1e-3)


def test_without_mediators_the_function_gives_every_mean():
    sample = make_binary_sfm(800, seed=5)
    sfm = SFM(x="x", x0=0, x1=1, z=["z1", "z2"], w=[], y="y")
    data = sample.data.assign(score=lambda d: 1 / (1 + np.exp(-(d["z1"] - d["z2"] + 0.6 * d["x"]))))
    function = lambda d: 1 / (1 + np.exp(-(d["z1"] - d["z2"] + 0.6 * d["x"])))  # noqa: E731
    result = decompose(data, sfm, ["score"], predictor_functions={"score": function}, learner="linear", seed=0,
                       measures=["ctfde", "ctfie"])
    x0 = (data["x"] == 0).to_numpy()
    manual = (function(data.assign(x=1)) - function(data.assign(x=0)))[x0].mean()
    assert result.estimate("ctfde", "score").estimate == pytest.approx(manual, abs=1e-12)
    assert result.estimate("ctfie", "score").estimate == 0.0  # W empty: no indirect path


def test_categorical_x_reaches_the_function_as_categorical(sample):
    data, sfm = sample
    labelled = data.assign(x=pd.Categorical(np.where(data["x"] == 1, "b", "a")))
    seen = []

    def blind(frame):
        seen.append(frame["x"].dtype)
        return _never_reads_x(frame)

    result = decompose(labelled, SFM(x="x", x0="a", x1="b", z=sfm.z, w=sfm.w, y="y"), ["blind"], predictor_functions={"blind": blind},
                       learner="linear", seed=0, measures=["ctfde"])
    assert result.estimate("ctfde", "blind").estimate == 0.0
    assert len(seen) == 3 and all(isinstance(dtype, pd.CategoricalDtype) for dtype in seen)  # as given, at x0, at x1


def test_meddml_takes_the_function_too(sample):
    data, sfm = sample
    common = {"method": "medDML", "seed": 0, "nboot1": 2, "nboot2": 20, "measures": ["ctfde"], "learner": "linear"}
    estimated = decompose(data, sfm, ["blind"], **common)
    known = decompose(data, sfm, ["blind"], predictor_functions={"blind": _never_reads_x}, **common)
    assert known.estimate("ctfde").estimate == estimated.estimate("ctfde").estimate  # Y: same refits
    assert known.estimate("ctfde", "blind").estimate != estimated.estimate("ctfde", "blind").estimate
    assert known.settings["known_means"] == ["blind"]

