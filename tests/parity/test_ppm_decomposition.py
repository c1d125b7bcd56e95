"""The predictive parity decomposition (Theorem 1): identity, ground truth, agreement with the PPM."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from fairpath.datasets import make_appendix_a2, make_linear_sfm
from fairpath.parity._ppm import predictive_parity
from fairpath.parity._ppm_decomposition import PPMDecomposition, ppm_decomposition


@pytest.fixture(scope="module")
def a2():
    """Appendix A.2 sample with the exact E[Y | X, W] as predictor and the true Y_x0."""
    sample = make_appendix_a2(4000, seed=11)
    data = sample.data.copy()
    data["y_hat"] = sample.outcome_mean(data)
    data["y_x0_true"] = sample.potential_outcomes["y_x0"].to_numpy()
    return sample, data


def test_identity_is_exact_per_bin_and_integrated(a2):
    sample, data = a2
    result = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=20, n_boot=50, seed=1)
    table = result.per_bin
    assert len(table) == 20
    np.testing.assert_allclose(table["ppm"], table["term1"] + table["term2"], rtol=0, atol=1e-12)
    total = result.integrated["iterm1"].estimate + result.integrated["iterm2"].estimate
    assert abs(result.integrated["ippm"].estimate - total) < 1e-12


def test_terms_match_their_definitions_computed_by_hand(a2):
    sample, data = a2
    result = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=8, n_boot=0)
    bins = pd.qcut(data["y_hat"], 8, labels=False)
    x1, x0 = data["x"] == 1, data["x"] == 0
    term1 = (data["y"] - data["y_x0_true"])[x1].groupby(bins[x1]).mean()
    term2 = data["y_x0_true"][x1].groupby(bins[x1]).mean() - data["y"][x0].groupby(bins[x0]).mean()
    np.testing.assert_allclose(result.per_bin["term1"], term1.to_numpy(), atol=1e-12)
    np.testing.assert_allclose(result.per_bin["term2"], term2.to_numpy(), atol=1e-12)
    assert result.integrated["iterm1"].estimate == pytest.approx(term1.mean(), abs=1e-12)


def test_ppm_per_bin_agrees_with_the_predictive_parity_measure(a2):
    sample, data = a2
    result = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=0)
    parity = predictive_parity(data, sample.sfm, "y_hat", n_bins=10, n_boot=20, seed=0)
    np.testing.assert_allclose(result.per_bin["ppm"], parity.bins["gap"], atol=1e-12)
    assert result.integrated["ippm"].estimate == pytest.approx(parity.ippm.estimate, abs=1e-12)


def test_linear_scm_term1_equals_the_total_effect_with_true_counterfactuals():
    # Corollary 1: in a linear SCM, Y - Y_x0 = alpha_xw * alpha_wy + alpha_xy for every x1 row.
    sample = make_linear_sfm(3000, seed=2, alpha_xw=0.8, alpha_wy=1.5, alpha_xy=0.5)
    data = sample.data.assign(y_hat=sample.outcome_mean(sample.data))
    result = ppm_decomposition(data, sample.sfm, "y_hat", sample.potential_outcomes["y_x0"].to_numpy(), n_boot=30)
    np.testing.assert_allclose(result.per_bin["term1"], 1.7, atol=1e-10)
    assert result.integrated["iterm1"].se == pytest.approx(0.0, abs=1e-10)
    # The predictor is calibrated in both groups, so Term II nearly cancels Term I.
    assert result.integrated["iterm2"].estimate == pytest.approx(-1.7, abs=0.15)


def test_adapted_counterfactual_recovers_the_linear_closed_form():
    sample = make_linear_sfm(4000, seed=5, alpha_xw=0.8, alpha_wy=1.5, alpha_xy=0.5)
    data = sample.data.assign(y_hat=sample.outcome_mean(sample.data))
    result = ppm_decomposition(data, sample.sfm, "y_hat", None, n_boot=0, adaptation={"engine": "linear"})
    assert result.integrated["iterm1"].estimate == pytest.approx(1.7, abs=0.05)
    assert result.settings["y_x0"] == "adaptation"


def test_adapted_counterfactual_on_appendix_a2_is_close_to_the_truth(a2):
    sample, data = a2
    adapted = ppm_decomposition(data, sample.sfm, "y_hat", None, n_bins=10, n_boot=0, seed=3)
    truth = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=0)
    assert adapted.integrated["iterm1"].estimate == pytest.approx(truth.integrated["iterm1"].estimate, abs=0.3)
    # Adaptation leaves x0 rows alone, so the PPM itself does not depend on it.
    np.testing.assert_allclose(adapted.per_bin["ppm"], truth.per_bin["ppm"], atol=1e-12)


def test_bootstrap_is_seeded_and_brackets_the_estimate(a2):
    sample, data = a2
    first = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=100, seed=7)
    again = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=100, seed=7)
    other = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=100, seed=8)
    pd.testing.assert_frame_equal(first.per_bin, again.per_bin)
    assert first.integrated["ippm"].ci_low != other.integrated["ippm"].ci_low
    for name, est in first.integrated.items():
        assert est.ci_low < est.estimate < est.ci_high, name
    # The iPPM averages 10 bin gaps of about 400 rows each: its SE is near sqrt(2 / 200) / sqrt(10).
    assert 0.02 < first.integrated["ippm"].se < 0.06


def test_rows_of_other_groups_are_left_out_with_a_warning_and_arrays_stay_aligned(a2):
    sample, data = a2
    extra = data.iloc[:5].assign(x=2)
    combined = pd.concat([extra, data], ignore_index=True)
    y_x0 = np.concatenate([np.full(5, np.nan), data["y_x0_true"].to_numpy()])
    with pytest.warns(UserWarning, match="5 rows excluded"):
        result = ppm_decomposition(combined, sample.sfm, "y_hat", y_x0, n_bins=10, n_boot=0)
    reference = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=10, n_boot=0)
    assert result.n_excluded == 5 and result.n == len(data)
    pd.testing.assert_frame_equal(result.per_bin, reference.per_bin)


def test_bins_without_both_groups_can_be_dropped_with_a_warning():
    rng = np.random.default_rng(0)
    x = np.repeat([0, 1], 200)
    score = np.concatenate([rng.uniform(0, 1, 200), rng.uniform(0.5, 1.5, 200)])
    data = pd.DataFrame({"x": x, "y": score + rng.normal(0, 0.1, 400), "y_hat": score})
    data["y_x0"] = data["y"] - 0.5 * data["x"]
    from fairpath.causal import SFM

    sfm = SFM(x="x", x0=0, x1=1, y="y")
    with pytest.warns(UserWarning, match=r"quantile bins of 'y_hat' hold no rows"):
        result = ppm_decomposition(data, sfm, "y_hat", "y_x0", n_bins=4, n_boot=20, empty_bins="drop")
    assert result.incomplete_bins == (4,)
    last = result.per_bin.iloc[-1]
    assert np.isnan(last["ppm"]) and last["term1"] == pytest.approx(0.5)
    complete = result.per_bin.iloc[:-1]
    assert result.integrated["ippm"].estimate == pytest.approx(complete["ppm"].mean())
    assert result.integrated["iterm1"].estimate == pytest.approx(0.5)


def test_result_object_frame_json_repr_and_plot(a2, tmp_path):
    sample, data = a2
    result = ppm_decomposition(data, sample.sfm, "y_hat", "y_x0_true", n_bins=5, n_boot=20)
    assert isinstance(result, PPMDecomposition)
    frame = result.to_frame()
    assert len(frame) == 3 * 5 + 3
    assert list(frame["measure"].unique()) == ["term1", "term2", "ppm", "iterm1", "iterm2", "ippm"]
    assert list(frame.columns[:7]) == ["subject", "measure", "estimate", "se", "ci_low", "ci_high", "level"]
    assert set(frame["subject"]) == {"y_hat"} and (frame["level"] == 0.95).all()
    integrated = frame[frame["bin"].isna()].set_index("measure")["estimate"]
    assert integrated["ippm"] == pytest.approx(result.estimate("ippm").estimate)
    assert result.estimate("term2", bin=3).estimate == pytest.approx(result.per_bin["term2"].iloc[2])
    payload = json.loads(result.to_json(tmp_path / "decomposition.json"))
    assert payload["integrated"]["iterm1"]["estimate"] == pytest.approx(result.integrated["iterm1"].estimate)
    assert (tmp_path / "decomposition.json").exists()
    assert "iTerm II" in result.summary() and "n=4000" in repr(result) and "\n" not in repr(result)
    assert "<table" in result._repr_html_()
    fig = result.plot()
    assert len(fig.axes[0].lines) >= 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig.savefig(tmp_path / "decomposition.png")
