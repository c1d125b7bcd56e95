"""Omitted-variable-bias bounds of the decomposition (fairpath.causal._sensitivity): the bound against the closed form
of a confounded model, the usual interval at zero confounding, monotone widening, robustness values as roots."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.tree import DecisionTreeRegressor

from fairpath.causal import SFM, SensitivityResult, confounder_benchmarks, decompose
from fairpath.causal._sensitivity import conditional_terms, robustness_value, term_kind
from fairpath.datasets import make_binary_sfm, make_multilevel_sfm

# A binary confounder U of X and Y beside the observed binary Z, W empty (so every term is E[μ(x, Z) | x0]):
# P(X = 1 | z, u) = expit(A + B·z + C·u), Y = BETA·X + GAMMA·Z + DELTA·U + NOISE·ε; Z, U fair coins.
A, B, C = -0.5, 0.8, 1.5
BETA, GAMMA, DELTA, NOISE = 1.0, 0.5, 1.5, 1.0


def _p1(z, u):
    return expit(A + B * z + C * u)


def _population(functional: str) -> dict:
    """Exact long- and short-model quantities over the 8 cells (z, u, x) of ETT's unidentified term E[Y_{x=1} | X = 0]
    (representer α = 1(X=1)/P0 · p(0|·)/p(1|·)) or of TE, the one functional E[μ(1, Z)·1(X=0)] − E[μ(0, Z)·1(X=1)]
    of the regression (α = 1(X=1)·p(0|·)/p(1|·) − 1(X=0)·p(1|·)/p(0|·)): the short regression
    g_s(x, z) = βx + γz + δ·P(U = 1 | x, z) and representer (propensities given z), the long ones with U, and from them
    the bias θ_s − θ_l and the true cf_y, cf_d and ρ of the bound."""
    cells = pd.DataFrame([(z, u, x, 0.25 * (_p1(z, u) if x else 1 - _p1(z, u)))
                          for z, u, x in itertools.product((0, 1), repeat=3)], columns=["z", "u", "x", "weight"])
    mass = lambda rows: float(cells.loc[rows, "weight"].sum())  # noqa: E731
    p1_z = np.array([mass((cells.x == 1) & (cells.z == z)) / mass(cells.z == z) for z in cells.z])
    p1_zu = _p1(cells.z, cells.u).to_numpy()
    pu = {(x, z): mass((cells.x == x) & (cells.z == z) & (cells.u == 1)) / mass((cells.x == x) & (cells.z == z))
          for x in (0, 1) for z in (0, 1)}
    p0, treated = mass(cells.x == 0), (cells.x == 1).to_numpy()
    g_s = np.array([BETA * x + GAMMA * z + DELTA * pu[(x, z)] for x, z in zip(cells.x, cells.z)])
    g_l = (BETA * cells.x + GAMMA * cells.z + DELTA * cells.u).to_numpy()
    if functional == "ett":
        representer = lambda p1: treated / p0 * (1 - p1) / p1  # noqa: E731
    else:
        representer = lambda p1: treated * (1 - p1) / p1 - (~treated) * p1 / (1 - p1)  # noqa: E731
    a_s, a_l = representer(p1_z), representer(p1_zu)
    mean = lambda v: float((cells.weight * v).sum())  # noqa: E731
    sigma2 = NOISE ** 2 + mean((g_l - g_s) ** 2)
    product = mean((g_l - g_s) * (a_l - a_s))
    return {"bias": -product, "cf_y": mean((g_l - g_s) ** 2) / sigma2, "cf_d": mean((a_l - a_s) ** 2) / mean(a_l ** 2),
            "rho": product / np.sqrt(mean((g_l - g_s) ** 2) * mean((a_l - a_s) ** 2)), "scale": np.sqrt(sigma2 * mean(a_s ** 2)),
            "truth": BETA}  # Y is linear in X without interactions: ETT = TE = β


@pytest.fixture(scope="module")
def confounded():
    rng = np.random.default_rng(0)
    n = 40_000
    z, u = rng.integers(0, 2, n), rng.integers(0, 2, n)
    x = (rng.random(n) < _p1(z, u)).astype(int)
    data = pd.DataFrame({"x": x, "z": z, "y": BETA * x + GAMMA * z + DELTA * u + NOISE * rng.standard_normal(n)})
    sfm = SFM(x="x", x0=0, x1=1, z=["z"], w=[], y="y")
    # a depth-4 tree fits the four (x, z) cells exactly: the bound's error is then sampling error only
    result = decompose(data, sfm, learner=DecisionTreeRegressor(max_depth=4), measures=("tv", "ctfse", "ett", "te", "expse_x0", "expse_x1"), seed=0, progress=False)
    return data, result


@pytest.mark.parametrize("measure", ["ett", "te"])
def test_the_bound_at_the_true_strengths_is_the_bias_of_the_closed_form(confounded, measure):
    """Long story short's Theorems 1 and 2: θ_s − θ_l = −E[(g_l − g_s)(α_l − α_s)], and ρ·√(cf_y·cf_d/(1 − cf_d))·√(σ²ν²)
    at the model's true cf_y, cf_d and ρ is exactly |θ_s − θ_l|. The estimated bound is within 3% of it (n = 40,000;
    for TE, its two terms bounded as one functional of μ(x, z)); with ρ = 1 it holds the bias and its confidence bounds
    hold the truth (β: Y is linear in X, so ETT = TE = β), which the usual interval misses."""
    _, result = confounded
    truth = _population(measure)
    exact = abs(truth["rho"]) * np.sqrt(truth["cf_y"] * truth["cf_d"] / (1 - truth["cf_d"])) * truth["scale"]
    assert exact == pytest.approx(abs(truth["bias"]), rel=1e-12)
    row = result.sensitivity(cf_y=truth["cf_y"], cf_d=truth["cf_d"], rho=abs(truth["rho"])).row(measure)
    assert row.scale == pytest.approx(truth["scale"], rel=0.03)
    assert row.bias_bound == pytest.approx(abs(truth["bias"]), rel=0.03)
    assert row.estimate - truth["truth"] == pytest.approx(truth["bias"], abs=4 * row.se)  # the naive estimate is off by the bias
    assert not row.usual_ci_low <= truth["truth"] <= row.usual_ci_high
    worst = result.sensitivity(cf_y=truth["cf_y"], cf_d=truth["cf_d"]).row(measure)
    assert worst.bias_bound >= abs(truth["bias"]) and worst.ci_low <= truth["truth"] <= worst.ci_high
    assert row.edges == "X↔Y"  # without W no other edge


def test_terms_of_one_regression_are_one_functional(confounded):
    """TE's two unidentified terms, P0·E[μ(x1, Z) | x0] and −P1·E[μ(x0, Z) | x1], are one functional of μ(x, z): its
    representer is the sum of theirs, on disjoint rows, so its ν² is the sum of theirs. Exp-SE x1 and x0 hold exactly
    one of them each, so S(TE)² = S(Exp-SE x0)² + S(Exp-SE x1)², below the triangle sum S(x0) + S(x1); Ctf-SE has ETT's
    one term."""
    _, result = confounded
    table = result.sensitivity(cf_y=0.1, cf_d=0.1).to_frame().set_index("measure")["scale"]
    assert table["te"] ** 2 == pytest.approx(table["expse_x0"] ** 2 + table["expse_x1"] ** 2, rel=1e-10)
    assert table["te"] < table["expse_x0"] + table["expse_x1"]
    assert table["ctfse"] == pytest.approx(table["ett"], rel=1e-12)


def test_zero_strength_gives_the_estimate_and_the_usual_interval_exactly():
    sample = make_binary_sfm(1500, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, sample.sfm, learner="linear", seed=1, n_rep=2, progress=False)
    frame = result.to_frame().set_index("measure")
    for cf_y, cf_d in ((0.0, 0.0), (0.0, 0.4), (0.4, 0.0)):
        bounds = result.sensitivity(cf_y=cf_y, cf_d=cf_d).to_frame().set_index("measure")
        assert set(bounds.index) == set(frame.index) - {"nde", "nie"}
        for measure, row in bounds.iterrows():
            usual = frame.loc[measure]
            assert (row.estimate, row.se) == (usual.estimate, usual.se)
            assert (row.ci_low, row.ci_high) == pytest.approx((usual.ci_low, usual.ci_high), rel=1e-12, abs=1e-15)
            assert row.bound_low == row.bound_high == pytest.approx(usual.estimate, rel=1e-12) and row.bias_bound == 0


def test_bounds_widen_monotonically_in_each_strength():
    sample = make_binary_sfm(1500, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, sample.sfm, learner="linear", seed=2, n_rep=1, progress=False)
    grid = (0.0, 0.01, 0.05, 0.2, 0.5)
    for vary in ("cf_y", "cf_d", "rho"):
        tables = [result.sensitivity(**{"cf_y": 0.1, "cf_d": 0.1, "rho": 1.0, vary: value}).to_frame() for value in grid]
        for before, after in zip(tables, tables[1:]):
            confounded = before["edges"] != ""
            assert (after["bias_bound"][confounded] > before["bias_bound"][confounded]).all()
            assert (after["bound_low"] <= before["bound_low"]).all() and (after["bound_high"] >= before["bound_high"]).all()
            assert (after["ci_low"] <= before["ci_low"] + 1e-12).all() and (after["ci_high"] >= before["ci_high"] - 1e-12).all()
            tv = after[after["measure"] == "tv"].iloc[0]
            assert tv.bias_bound == 0 and np.isnan(tv.robustness_value)


def test_robustness_values_are_where_the_bound_and_the_confidence_bound_reach_zero():
    sample = make_binary_sfm(2000, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, sample.sfm, learner="linear", seed=3, n_rep=3, progress=False)
    table = result.sensitivity().to_frame()
    checked = 0
    for row in table[table["edges"] != ""].itertuples():
        at_rv = result.sensitivity(cf_y=row.robustness_value, cf_d=row.robustness_value).row(row.measure)
        nearest = at_rv.bound_low if row.estimate > 0 else at_rv.bound_high
        assert nearest == pytest.approx(0.0, abs=1e-9)
        if row.robustness_value_ci > 0:
            at_rv_ci = result.sensitivity(cf_y=row.robustness_value_ci, cf_d=row.robustness_value_ci).row(row.measure)
            assert (at_rv_ci.ci_low if row.estimate > 0 else at_rv_ci.ci_high) == pytest.approx(0.0, abs=1e-8)
            assert row.robustness_value_ci < row.robustness_value
            checked += 1
        else:
            assert row.usual_ci_low <= 0 <= row.usual_ci_high
    assert checked >= 3
    # the closed form: r²/(1 − r) = (|θ|/S)²
    r = robustness_value(0.3, 1.2)
    assert r ** 2 / (1 - r) == pytest.approx((0.3 / 1.2) ** 2, rel=1e-12)


def test_terms_their_kinds_and_the_edges_of_each_measure():
    share = {0: 0.6, 1: 0.4}
    assert conditional_terms("ctfie", share) == {(0, 0, 1): 1.0, (0, 1, 1): -1.0}
    assert conditional_terms("te", share) == pytest.approx({(0, 1, 1): 0.6, (1, 1, 1): 0.4, (0, 0, 0): -0.6, (1, 0, 0): -0.4})
    assert [term_kind(key, has_w=True) for key in ((0, 0, 0), (0, 1, 1), (0, 0, 1), (1, 1, 0))] == [None, "total", "direct", "direct"]
    assert term_kind((0, 0, 1), has_w=False) == "total"
    sample = make_binary_sfm(1200, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, sample.sfm, learner="linear", seed=1, n_rep=1, progress=False)
    edges = result.sensitivity().to_frame().set_index("measure")["edges"]
    assert edges.to_dict() | {} == {"tv": "", "ctfde": "X↔Y, W↔Y", "ctfie": "X↔Y, X↔W, W↔Y", "ctfse": "X↔Y, X↔W",
                                    "ett": "X↔Y, X↔W", "te": "X↔Y, X↔W", "expse_x0": "X↔Y, X↔W", "expse_x1": "X↔Y, X↔W"}
    assert result.sensitivity().settings["not_bounded"] == ["nde", "nie"]


def test_a_predictor_s_paired_difference_adds_both_bounds():
    sample = make_binary_sfm(1500, seed=7)
    data = sample.data.assign(score=sample.outcome_mean(sample.data) + 0.05 * sample.data["x"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(data, sample.sfm, ["score"], learner="linear", seed=1, n_rep=1, progress=False,
                           measures=("tv", "ctfde", "ctfie", "ctfse"))
    table = result.sensitivity(cf_y=0.05, cf_d=0.05).to_frame().set_index(["subject", "measure"])
    for measure in ("ctfde", "ctfie", "ctfse"):
        paired = table.loc[("score − y", measure)]
        assert paired.bias_bound == pytest.approx(table.loc[("score", measure), "bias_bound"] + table.loc[("y", measure), "bias_bound"])
        assert paired.estimate == pytest.approx(result.difference(measure, "score", "y").estimate, rel=1e-12)
        assert paired.se == pytest.approx(result.difference(measure, "score", "y").se, rel=1e-12)


def test_every_contrast_of_k_levels_is_its_binary_analysis():
    sample = make_multilevel_sfm(2400, seed=2, levels=3)
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = decompose(sample.data, sfm, learner="linear", seed=1, n_rep=1, progress=False, measures=("tv", "ctfde", "ctfse"))
    both = result.sensitivity(cf_y=0.02, cf_d=0.04)
    assert isinstance(both, SensitivityResult) and both.contrasts == result.contrasts
    for contrast in result.contrasts:
        alone = result.for_contrast(contrast).sensitivity(cf_y=0.02, cf_d=0.04).to_frame().drop(columns="contrast")
        mine = both.to_frame().query("contrast == @contrast").drop(columns="contrast").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone)
    assert "x: 2" in both.summary() and "Ctf-DE" in both.summary()


def test_a_benchmark_column_gives_the_strengths_of_the_confounder_it_is():
    """With U observed (a Z column), the decomposition refitted without it is the short model of the closed form: the
    strengths a confounder as strong as U has are U's true cf_y, cf_d and |ρ| (within 8%: the representers' ν² are
    noisy), and with the short model's S their bound at ρ = |ρ| is exactly the bias that leaving U out causes (the
    benchmark's own bound applies the strengths to this decomposition's S, as DoubleML does)."""
    rng = np.random.default_rng(1)
    n = 40_000
    z, u = rng.integers(0, 2, n), rng.integers(0, 2, n)
    x = (rng.random(n) < _p1(z, u)).astype(int)
    data = pd.DataFrame({"x": x, "z": z, "u": u, "y": BETA * x + GAMMA * z + DELTA * u + NOISE * rng.standard_normal(n)})
    sfm = SFM(x="x", x0=0, x1=1, z=["z", "u"], w=[], y="y")
    result = decompose(data, sfm, learner="linear", measures=("tv", "ett", "te"), seed=0, n_rep=1, progress=False)
    bounds = result.sensitivity(benchmarks=confounder_benchmarks(result, data, ["u"]))
    marks = bounds.benchmarks.set_index("measure")
    assert set(marks.index) == {"ett", "te"} and set(marks["column"]) == {"u"}
    without_u = decompose(data, SFM(x="x", x0=0, x1=1, z=["z"], w=[], y="y"), learner="linear", measures=("ett", "te"), seed=0,
                          n_rep=1, progress=False)
    for measure in ("ett", "te"):
        truth = _population(measure)
        mark = marks.loc[measure]
        assert (mark.cf_y, mark.cf_d, mark.rho) == pytest.approx((truth["cf_y"], truth["cf_d"], abs(truth["rho"])), rel=0.08)
        short_scale = without_u.sensitivity().row(measure).scale
        bias = without_u.estimate(measure).estimate - result.estimate(measure).estimate
        assert mark.rho * np.sqrt(mark.cf_y * mark.cf_d / (1 - mark.cf_d)) * short_scale == pytest.approx(abs(bias), rel=1e-9)
        assert mark.bias_bound == pytest.approx(np.sqrt(mark.cf_y * mark.cf_d / (1 - mark.cf_d)) * bounds.row(measure).scale, rel=1e-12)
        assert mark.reaches_zero == (mark.bias_bound >= abs(result.estimate(measure).estimate))
    assert "as strong as u: " not in bounds.summary()  # Y's pathways only: no Ctf measure was estimated here
    assert bounds.to_dict()["benchmarks"][0]["column"] == "u"
