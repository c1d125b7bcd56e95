"""The decomposition against ground truth on synthetic SCMs, its identities and its reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from threadpoolctl import threadpool_info, threadpool_limits

from fairpath._parallel import run_tasks
from fairpath.causal import MEASURES, decompose
from fairpath.datasets import make_appendix_a2, make_binary_sfm, make_confounded_sfm

MODELS = [make_appendix_a2, make_binary_sfm, make_confounded_sfm]


@pytest.fixture(scope="module", params=MODELS, ids=lambda m: m.__name__)
def fitted(request):
    sample = request.param(5000, seed=11)
    return sample, decompose(sample.data, sample.sfm, seed=11)


def test_every_measure_within_three_se_of_truth(fitted):
    sample, result = fitted
    for measure in MEASURES:
        estimate = result.estimate(measure)
        if estimate.se < 1e-9:  # exactly zero by construction (e.g. ctfse with Z empty)
            assert abs(estimate.estimate - sample.truth[measure]) < 1e-9
            continue
        z = (estimate.estimate - sample.truth[measure]) / estimate.se
        assert abs(z) < 3, f"{measure}: estimate {estimate.estimate:.4f}, truth {sample.truth[measure]:.4f}, z {z:.2f}"


def test_identities_hold_exactly(fitted):
    _, result = fitted
    e = {m: result.estimate(m).estimate for m in MEASURES}
    assert e["tv"] == pytest.approx(e["ctfde"] - e["ctfie"] - e["ctfse"], abs=1e-10)
    assert e["ett"] == pytest.approx(e["ctfde"] - e["ctfie"], abs=1e-10)
    assert e["tv"] == pytest.approx(e["nde"] - e["nie"] + e["expse_x1"] - e["expse_x0"], abs=1e-10)
    rows = result.pseudo_outcomes()
    assert np.abs(rows["tv"] - (rows["ctfde"] - rows["ctfie"] - rows["ctfse"])).max() < 1e-10


def test_tv_is_the_plain_difference_of_group_means(fitted):
    sample, result = fitted
    y, x = sample.data["y"], sample.data["x"]
    assert result.estimate("tv").estimate == pytest.approx(y[x == 1].mean() - y[x == 0].mean(), abs=1e-12)


def test_same_seed_same_numbers_and_threads_do_not_matter():
    sample = make_binary_sfm(1500, seed=3)
    a = decompose(sample.data, sample.sfm, seed=5, n_jobs=1).to_frame()
    b = decompose(sample.data, sample.sfm, seed=5, n_jobs=2).to_frame()
    c = decompose(sample.data, sample.sfm, seed=6).to_frame()
    assert a.equals(b)
    assert not np.allclose(a["estimate"].iloc[1:4], c["estimate"].iloc[1:4])


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


class _RecordsBlasThreads(RegressorMixin, BaseEstimator):
    """Predicts the training mean; records the BLAS thread counts each fit ran under."""

    seen: list = []

    def fit(self, X, y):
        self.seen.append(_blas_threads())
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


def _decompose_recording_blas_threads(seed, sample):
    return decompose(sample.data, sample.sfm, learner=_RecordsBlasThreads(), seed=seed, n_jobs=1, n_rep=1, measures=("tv",))


def test_fits_run_on_one_blas_thread_with_one_job_here_and_on_threads():
    # A multi-threaded BLAS beside other busy threads oversubscribes the cores (5x slower on
    # COMPAS with n_jobs=1 beside a busy process); the process's own limit comes back afterwards.
    sample = make_binary_sfm(600, seed=2)
    _RecordsBlasThreads.seen.clear()
    with threadpool_limits(limits=2, user_api="blas"):
        _decompose_recording_blas_threads(0, sample)
        list(run_tasks(_decompose_recording_blas_threads, (1, 2), shared={"sample": sample}, n_jobs=2))
        after = _blas_threads()
    assert len(_RecordsBlasThreads.seen) > 30
    assert all(threads == {1} for threads in _RecordsBlasThreads.seen)
    assert after == {2}


def test_paired_difference_uses_per_row_contributions():
    sample = make_binary_sfm(2000, seed=4)
    data = sample.data.assign(oracle=sample.outcome_mean(sample.data))
    result = decompose(data, sample.sfm, predictors=["oracle"], seed=1, n_rep=1)  # one split's rows
    rows = result.pseudo_outcomes("oracle")["ctfde"] - result.pseudo_outcomes()["ctfde"]
    diff = result.difference("ctfde", "oracle")
    assert diff.estimate == pytest.approx(rows.mean())
    assert diff.se == pytest.approx(rows.std(ddof=1) / np.sqrt(len(rows)))
    # A predictor that copies Y transmits exactly Y's effects: the paired difference is exactly 0.
    copy = decompose(data.assign(copy=data["y"]), sample.sfm, predictors=["copy"], seed=1)
    same = copy.difference("ctfde", "copy")
    assert same.estimate == 0 and same.se == 0


def test_psi_and_contrast_build_the_measures():
    sample = make_binary_sfm(2000, seed=8)
    result = decompose(sample.data, sample.sfm, seed=2)
    ctfde = result.combination([(1, (0, 0, 1)), (-1, (0, 0, 0))])
    assert ctfde.estimate == pytest.approx(result.estimate("ctfde").estimate, abs=1e-12)
    assert result.psi(0, 0, 0).estimate == pytest.approx(sample.data["y"][sample.data["x"] == 0].mean())


@pytest.mark.parametrize("drop", ["z", "w", "both"])
def test_empty_confounders_or_mediators(drop):
    sample = make_binary_sfm(4000, seed=9)
    sfm = sample.sfm
    z = () if drop in ("z", "both") else sfm.z
    w = () if drop in ("w", "both") else sfm.w
    from fairpath.causal import SFM

    reduced = SFM(x=sfm.x, x0=0, x1=1, z=z, w=w, y="y")
    result = decompose(sample.data, reduced, seed=1)
    e = {m: result.estimate(m).estimate for m in MEASURES}
    assert e["tv"] == pytest.approx(e["ctfde"] - e["ctfie"] - e["ctfse"], abs=1e-10)
    if not z:  # no confounders: no spurious effect can be attributed
        assert e["ctfse"] == pytest.approx(0, abs=1e-10)
    if not w:  # no mediators: no indirect effect
        assert e["ctfie"] == pytest.approx(0, abs=1e-10)


def test_meddml_identities_and_bootstrap_draws():
    sample = make_binary_sfm(2000, seed=12)
    result = decompose(sample.data, sample.sfm, method="medDML", nboot1=2, nboot2=50, seed=1)
    fit = result.for_contrast().fits["y"]
    assert len(fit.draws) == 100
    d = fit.draws
    assert np.abs(d["tv"] - (d["ctfde"] - d["ctfie"] - d["ctfse"])).max() < 1e-10
    for measure in ("tv", "ctfde", "ctfie", "ctfse"):
        e = result.estimate(measure)
        assert e.se == pytest.approx(d[measure].std(ddof=1))
        assert abs(e.estimate - sample.truth[measure]) < 3.5 * e.se


def test_bootstrap_option_gives_percentile_intervals():
    sample = make_binary_sfm(1500, seed=2)
    normal = decompose(sample.data, sample.sfm, seed=3, n_rep=1)  # the bootstrap resamples one split's rows
    boot = decompose(sample.data, sample.sfm, seed=3, n_boot=400)
    for measure in ("tv", "ctfde"):
        a, b = normal.estimate(measure), boot.estimate(measure)
        assert a.estimate == b.estimate
        assert b.se == pytest.approx(a.se, rel=0.2)


def test_trimming_is_counted_never_silent():
    sample = make_confounded_sfm(2000, seed=1)
    loose = decompose(sample.data, sample.sfm, seed=1, eps=0.2)
    trimmed = decompose(sample.data, sample.sfm, seed=1, eps=0.2, trim=True)
    assert loose.for_contrast().n_extreme > 0 and loose.for_contrast().n_trimmed == 0
    assert trimmed.for_contrast().n_trimmed == loose.for_contrast().n_extreme
    assert len(trimmed.pseudo_outcomes()) == trimmed.n - trimmed.for_contrast().n_trimmed
    assert f"{loose.for_contrast().n_extreme} rows with a propensity outside" in loose.summary()


def test_result_presentation():
    sample = make_appendix_a2(1000, seed=1)
    result = decompose(sample.data, sample.sfm, seed=1)
    frame = result.to_frame()
    # one contrast (x1 = 1): its simultaneous interval and p are the marginal ones
    assert list(frame.columns) == ["subject", "measure", "estimate", "se", "ci_low", "ci_high", "level", "contrast", "simultaneous_low",
                                   "simultaneous_high", "p_value", "p_simultaneous"]
    assert (frame["contrast"] == "1").all() and frame["simultaneous_low"].equals(frame["ci_low"])
    assert frame["p_simultaneous"].equals(frame["p_value"])
    assert (frame["ci_low"] <= frame["estimate"]).all() and (frame["estimate"] <= frame["ci_high"]).all()
    assert (frame["subject"] == "y").all() and (frame["level"] == 0.95).all()
    assert "TV (" in result.summary() and "CtfDE (" in result.summary()
    ctfde = result.estimate("ctfde")
    assert repr(result).startswith("CausalDecomposition(method='debiasing', contrasts=1, n=1000,") and "\n" not in repr(result)
    assert f"y ctfde={ctfde.estimate:.4g} [95% CI {ctfde.ci_low:.4g}, {ctfde.ci_high:.4g}]" in repr(result)
    payload = result.to_dict()
    assert set(payload["contrasts"]["1"]["estimates"]["y"]["ctfde"]) == {"estimate", "se", "ci_low", "ci_high"}
    assert payload["counts"]["n"] == 1000
    fig = result.plot()
    assert len(fig.axes[0].patches) == 4


COUNTERFACTUAL = ("tv", "ctfde", "ctfie", "ctfse", "ett")


def test_nested_means_are_fitted_only_when_a_measure_needs_them():
    # For ctfde/ctfie/ctfse/ett the nested mean ν cancels row by row (test_pseudo_manual checks the
    # vectorised rows against the full formula with arbitrary ν): skipping its fits changes nothing.
    sample = make_binary_sfm(1500, seed=3)
    full = decompose(sample.data, sample.sfm, seed=5)
    short = decompose(sample.data, sample.sfm, seed=5, measures=COUNTERFACTUAL)
    assert short.measures == COUNTERFACTUAL and not short.for_contrast().fits["y"].pseudo.nuisances.nested
    for measure in COUNTERFACTUAL:
        a, b = full.estimate(measure), short.estimate(measure)
        assert b.estimate == pytest.approx(a.estimate, abs=1e-12) and b.se == pytest.approx(a.se, abs=1e-12)
    # nde/nie do need ν: asked for alone they equal the full run's.
    nde = decompose(sample.data, sample.sfm, seed=5, measures=["nde", "nie"])
    assert nde.estimate("nde").estimate == pytest.approx(full.estimate("nde").estimate, abs=1e-12)
    assert nde.estimate("nie").estimate == pytest.approx(full.estimate("nie").estimate, abs=1e-12)
    assert list(short.to_frame()["measure"].unique()) == list(COUNTERFACTUAL)
    # With Z empty every ψ is unconditional and the cross-world ones do need ν.
    a2 = make_appendix_a2(1000, seed=2)
    full, short = (decompose(a2.data, a2.sfm, seed=1, measures=m) for m in (None, COUNTERFACTUAL))
    for measure in COUNTERFACTUAL:
        assert short.estimate(measure).estimate == pytest.approx(full.estimate(measure).estimate, abs=1e-12)


def test_overlap_diagnostic_is_in_every_result(fitted):
    _, result = fitted
    overlap = result.to_dict()["contrasts"][result.contrasts[0]]["overlap"]
    assert overlap["n_outside"] == result.for_contrast().n_extreme and overlap["share_outside"] == pytest.approx(result.for_contrast().n_extreme / result.n)
    for group in ("x0", "x1"):
        r = overlap["propensity"][group]
        assert 0 <= r["p_x1_z_min"] <= r["p_x1_z_max"] <= 1 and 0 <= r["p_x1_zw_min"] <= r["p_x1_zw_max"] <= 1
    assert result.estimable and result.to_dict()["estimable"]
    assert "overlap: " in result.summary() and "NOT ESTIMABLE" not in result.summary()


def test_no_overlap_is_flagged_not_estimable():
    # W separates X perfectly: P(x1 | z, w) is 0 or 1 for every row, so nothing is estimable.
    sample = make_binary_sfm(1500, seed=6)
    data = sample.data.assign(w1=5.0 * sample.data["x"] + 0.01 * sample.data["w1"])
    with pytest.warns(UserWarning, match=r"rows \(\d+%\) have a propensity outside \[0.01, 0.99\]: the groups barely overlap, "
                                         "so the effects are not estimable"):
        result = decompose(data, sample.sfm, seed=1, measures=COUNTERFACTUAL)
    assert result.for_contrast().overlap["share_outside"] > 0.9
    assert not result.estimable and result.to_dict()["estimable"] is False
    assert "NOT ESTIMABLE" in result.summary()
    assert result.for_contrast().overlap["propensity"]["x0"]["p_x1_zw_min"] < 0.01 and result.for_contrast().overlap["propensity"]["x1"]["p_x1_zw_max"] > 0.99


def test_extreme_propensities_are_clipped_at_eps_with_a_warning():
    # An overfitting regressor as learner puts propensities at 0 and 1; unclipped (at 1e-6) this gave
    # Ctf-IE = 6065 (SE 3633) at n = 2000. At eps the weights stay below (1 − eps)/eps.
    from sklearn.ensemble import RandomForestRegressor

    sample = make_confounded_sfm(1000, seed=1)
    with pytest.warns(UserWarning, match=r"rows \(\d+\.\d%\) have a propensity outside \[0.01, 0.99\] \(weak overlap\); "
                                         r"they are clipped to \[0.01, 0.99\]"):
        result = decompose(sample.data, sample.sfm, seed=1, learner=RandomForestRegressor(n_estimators=10),
                           measures=COUNTERFACTUAL)
    assert result.for_contrast().n_extreme > 0
    pseudo = result.for_contrast().fits["y"].pseudo
    assert pseudo.p_zw[1].min() >= 0.01 and pseudo.p_zw[1].max() <= 0.99
    assert abs(result.estimate("ctfie").estimate) < 10


def test_meddml_trims_at_eps_by_default():
    sample = make_confounded_sfm(1500, seed=2)
    with pytest.warns(UserWarning, match="propensity outside"):
        result = decompose(sample.data, sample.sfm, method="medDML", seed=1, eps=0.2, nboot2=20, measures=COUNTERFACTUAL)
    assert result.settings["trim"] and result.for_contrast().n_trimmed == result.for_contrast().n_extreme > 0
    assert not decompose(sample.data, sample.sfm, seed=1, measures=["tv"]).settings["trim"]


def test_bootstrap_streams_in_chunks_with_the_numbers_of_one_dense_draw(monkeypatch):
    from fairpath.causal import _methods

    rng = np.random.default_rng(0)
    values = {"a": rng.normal(size=(50, 3)), "b": rng.normal(size=(50, 2))}
    monkeypatch.setattr(_methods, "_BOOTSTRAP_CHUNK_CELLS", 120)  # 2 draws per chunk
    streamed = _methods.bootstrap_means(values, 7, np.random.default_rng(9))
    dense_rng = np.random.default_rng(9)
    counts = np.vstack([dense_rng.multinomial(50, np.full(50, 1 / 50)) for _ in range(7)]).astype(float)
    for name, v in values.items():
        np.testing.assert_allclose(streamed[name], counts @ v / 50, rtol=0, atol=1e-13)
    # In decompose: the same seed gives the same draws whatever the chunk size.
    sample = make_binary_sfm(600, seed=2)
    small = decompose(sample.data, sample.sfm, seed=3, n_folds=3, n_boot=25, measures=COUNTERFACTUAL)
    monkeypatch.setattr(_methods, "_BOOTSTRAP_CHUNK_CELLS", 1 << 22)
    large = decompose(sample.data, sample.sfm, seed=3, n_folds=3, n_boot=25, measures=COUNTERFACTUAL)
    np.testing.assert_allclose(small.for_contrast().fits["y"].draws.to_numpy(), large.for_contrast().fits["y"].draws.to_numpy(), rtol=0, atol=1e-13)
