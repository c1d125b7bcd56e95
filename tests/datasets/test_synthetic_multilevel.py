"""The multi-level synthetic SCM: shares, overlap, the truth of every contrast and its agreement with the
sample's own counterfactuals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit

from fairpath._measures import MEASURE_TERMS, MEASURES, combine_terms
from fairpath.datasets import make_multilevel_sfm
from fairpath.datasets._synthetic import MultilevelSFM

SHARES = {2: (0.6, 0.4), 3: (0.5, 0.4, 0.1), 4: (0.4, 0.3, 0.2, 0.1), 5: (0.3, 0.25, 0.2, 0.15, 0.1),
          6: (0.25, 0.2, 0.17, 0.15, 0.13, 0.1)}


def pair_truth(model, u, z, x, a, b):
    """The binary truth written out for units (u, z, x) already restricted to X ∈ {a, b}, with a as 0 and b as 1."""
    coded = np.where(x == a, 0, 1)
    psi = {}
    for x_w, x_y in itertools.product((0, 1), repeat=2):
        values = model.counterfactual((a, b)[x_y], (a, b)[x_w], u, z, noise=False)
        psi[(None, x_w, x_y)] = values.mean()
        psi.update({(x_z, x_w, x_y): values[coded == x_z].mean() for x_z in (0, 1)})
    return {name: combine_terms(terms, psi, {}) for name, terms in MEASURE_TERMS.items()}


@pytest.fixture(scope="module")
def sample():
    return make_multilevel_sfm(20000, seed=11)


def test_every_contrast_is_internally_consistent(sample):
    for a, b in itertools.permutations(range(4), 2):
        t, reverse = sample.truth_for(a, b), sample.truth_for(b, a)
        assert set(t) == set(MEASURES)
        assert t["tv"] == pytest.approx(t["ctfde"] - t["ctfie"] - t["ctfse"], abs=1e-12)
        assert t["ett"] == pytest.approx(t["ctfde"] - t["ctfie"], abs=1e-12)
        assert t["te"] == pytest.approx(t["nde"] - t["nie"], abs=1e-12)
        assert t["tv"] == pytest.approx(t["te"] + t["expse_x1"] - t["expse_x0"], abs=1e-12)
        # Swapping the levels keeps the pair's units: TV and TE change sign, the ExpSEs trade places.
        assert reverse["tv"] == pytest.approx(-t["tv"], abs=1e-12) and reverse["te"] == pytest.approx(-t["te"], abs=1e-12)
        assert reverse["expse_x0"] == pytest.approx(t["expse_x1"], abs=1e-12)


def test_truth_by_level_and_the_level_without_direct_effect(sample):
    by_level = sample.truth_by_level
    assert list(by_level) == [1, 2, 3] and by_level[1] == sample.truth == sample.truth_for(0, 1)
    assert by_level[2]["ctfde"] == pytest.approx(0, abs=1e-12) and by_level[2]["nde"] == pytest.approx(0, abs=1e-12)
    assert sample.truth_for(2, 0)["ctfde"] == pytest.approx(0, abs=1e-12)
    assert abs(by_level[1]["ctfde"]) > 0.3 and abs(by_level[3]["ctfde"]) > 0.3
    # The levels' indirect and spurious effects are clearly apart (values near -0.70, 0.08, -1.14 and -0.73, 0.44, -0.41).
    for measure in ("ctfie", "ctfse"):
        values = sorted(by_level[k][measure] for k in (1, 2, 3))
        assert min(np.diff(values)) > 0.25, (measure, values)
    assert by_level[3]["ctfie"] == pytest.approx(-1.142, abs=0.01) and by_level[2]["ctfse"] == pytest.approx(0.438, abs=0.01)


def test_two_levels_is_the_binary_model():
    """The quadrature truth against the binary calculation written out on 1,000,000 units (its Monte Carlo error:
    a few thousandths)."""
    model = MultilevelSFM(2)
    u, z, x = model._units(1_000_000, np.random.default_rng(20240101))
    truth = make_multilevel_sfm(10, seed=0, levels=2).truth
    assert set(np.unique(x)) == {0.0, 1.0}
    expected = pair_truth(model, u, z, x, 0, 1)
    assert truth == pytest.approx(expected, abs=0.006)


def test_a_contrast_is_the_binary_truth_on_its_pair():
    model = MultilevelSFM(4)
    u, z, x = model._units(600_000, np.random.default_rng(5))  # other units than the truth's: Monte Carlo error only
    pair = (x == 1) | (x == 3)
    u = {name: values[pair] for name, values in u.items()}
    expected = pair_truth(model, u, z[pair], x[pair], 3, 1)
    assert model.truth_for(3, 1) == pytest.approx(expected, abs=0.02)


@pytest.mark.parametrize("levels", [2, 3, 4, 5, 6])
def test_level_shares_and_overlap(levels):
    model = MultilevelSFM(levels)
    z = np.column_stack([np.random.default_rng(0).uniform(-2, 2, 400_000), np.repeat([0.0, 1.0], 200_000)])
    p = model.propensities(z)
    np.testing.assert_allclose(p.mean(axis=0), SHARES[levels], atol=0.003)
    data = make_multilevel_sfm(20000, seed=levels, levels=levels).data
    assert data["x"].dtype.kind == "i" and sorted(data["x"].unique()) == list(range(levels))
    observed = data["x"].value_counts(normalize=True).sort_index().to_numpy()
    se = np.sqrt(np.asarray(SHARES[levels]) * (1 - np.asarray(SHARES[levels])) / 20000)
    assert np.all(np.abs(observed - SHARES[levels]) < 4 * se), observed
    # Every pairwise propensity against the reference within [0.08, 0.92]: log-odds are linear in z1, so the
    # extremes lie at z1 = ±2 (the bounds of its support).
    corners = np.array([[z1, z2] for z1 in (-2.0, 2.0) for z2 in (0.0, 1.0)])
    for rows in (corners, data[["z1", "z2"]].to_numpy()):
        p = model.propensities(rows)
        pairwise = p[:, 1:] / (p[:, :1] + p[:, 1:])
        assert pairwise.min() >= 0.08 and pairwise.max() <= 0.92
    np.testing.assert_allclose(expit(model.log_odds(corners)[:, 1:]), model.propensities(corners)[:, 1:] / (
        model.propensities(corners)[:, :1] + model.propensities(corners)[:, 1:]))


def test_same_seed_same_sample():
    a, b, c = (make_multilevel_sfm(300, seed=s, levels=5) for s in (4, 4, 5))
    assert a.data.equals(b.data) and a.potential_outcomes.equals(b.potential_outcomes)
    assert not a.data.equals(c.data)
    assert list(a.potential_outcomes.columns) == ["y_x0", *[f"{c}" for k in range(1, 5)
                                                            for c in (f"y_x{k}", f"y_x{k}_wx0", f"y_x0_wx{k}")]]


def _one(values):
    return values.mean(), values.std(ddof=1) / np.sqrt(len(values))


def _two(first, second, scale=1.0):
    return scale * (first.mean() - second.mean()), scale * np.hypot(*(v.std(ddof=1) / np.sqrt(len(v)) for v in (first, second)))


def test_a_binary_outcome_by_quadrature_is_the_monte_carlo_truth():
    """The Gauss-Hermite truth of a 0/1 Y against the binary calculation on 1,000,000 other units (Monte Carlo SE
    below 0.001 for the level holding a tenth of them)."""
    model = MultilevelSFM(3, binary_outcome=True)
    u, z, x = model._units(1_000_000, np.random.default_rng(7))
    pair = (x == 0) | (x == 2)
    expected = pair_truth(model, {name: values[pair] for name, values in u.items()}, z[pair], x[pair], 0, 2)
    truth = model.truth_for(0, 2)
    assert truth == pytest.approx(expected, abs=0.004)
    assert truth["ctfde"] == 0.0 and abs(truth["ctfse"]) > 0.04  # level 2: no direct effect, a clear spurious one
    sample = make_multilevel_sfm(5000, seed=3, levels=3, binary_outcome=True)
    assert set(np.unique(sample.data["y"])) == {0.0, 1.0} and 0.3 < sample.data["y"].mean() < 0.7


def test_a_binary_outcome_changes_y_alone():
    """Its noise is drawn last: X, Z and W of a seed are those of the continuous model (whose samples earlier
    sessions' records hold)."""
    continuous, binary = (make_multilevel_sfm(500, seed=9, levels=3, binary_outcome=b).data for b in (False, True))
    assert continuous.drop(columns="y").equals(binary.drop(columns="y"))
    assert set(binary["y"].unique()) == {0.0, 1.0} and not np.isin(continuous["y"], (0.0, 1.0)).any()


@pytest.mark.parametrize("level", [1, 2, 3])
def test_truth_matches_the_samples_counterfactuals(sample, level):
    _check_counterfactuals(sample, level)


def test_a_binary_outcome_matches_the_samples_counterfactuals():
    sample = make_multilevel_sfm(40000, seed=12, levels=3, binary_outcome=True)
    for level in (1, 2):
        _check_counterfactuals(sample, level)


def _check_counterfactuals(sample, level):
    x, y, po = sample.data["x"].to_numpy(), sample.data["y"].to_numpy(), sample.potential_outcomes
    y0, yk, yk_w0 = po["y_x0"].to_numpy(), po[f"y_x{level}"].to_numpy(), po[f"y_x{level}_wx0"].to_numpy()
    # Consistency: the factual outcome is the potential outcome at the observed level.
    np.testing.assert_allclose(y[x == level], yk[x == level])
    np.testing.assert_allclose(y[x == 0], y0[x == 0])
    base, other, pair = x == 0, x == level, (x == 0) | (x == level)
    p_base = base.sum() / pair.sum()
    estimates = {
        "tv": _two(y[other], y[base]),
        "ctfde": _one((yk_w0 - y0)[base]),
        "ctfie": _one((yk_w0 - yk)[base]),
        "ctfse": _two(yk[base], yk[other]),
        "ett": _one((yk - y0)[base]),
        "te": _one((yk - y0)[pair]),
        "nde": _one((yk_w0 - y0)[pair]),
        "nie": _one((yk_w0 - yk)[pair]),
        # E[Y_x0 | x0] − E[Y_x0] over the pair = (1 − P(x0 | pair))·(E[Y_x0 | x0] − E[Y_x0 | xk]), and alike at xk.
        "expse_x0": _two(y0[base], y0[other], 1 - p_base),
        "expse_x1": _two(yk[other], yk[base], p_base),
    }
    truth = sample.truth_for(0, level)
    for measure, (estimate, se) in estimates.items():
        assert abs(estimate - truth[measure]) <= 3 * se, (measure, estimate, truth[measure], se)  # = for level 2's ctfde: 0 on every row
