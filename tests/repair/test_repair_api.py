"""`fairpath.repair.repair`: the fair predictor's verdict, accuracy cost and predictive parity on held-out rows,
and the `fairpath repair` command that prints and saves it."""

import numpy as np
import pandas as pd
import pytest
from frames import as_read
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score
from sklearn.model_selection import train_test_split

from fairpath.causal import SFM
from fairpath.cli import main
from fairpath.datasets import make_binary_sfm
from fairpath.parity import predictive_parity
from fairpath.repair import RepairResult, repair
from fairpath.repair._repair import _split

SFM_ARGS = ["--x", "x", "--x0", "0", "--x1", "1", "--z", "z1,z2", "--w", "w1,w2", "--y", "y", "--engine", "linear"]


@pytest.fixture(scope="module")
def sample():
    return make_binary_sfm(600, seed=0)


@pytest.fixture(scope="module")
def result(sample):
    # A logistic learner and the linear decomposition keep this small and fast; the mechanisms are logistic.
    return repair(sample.data, sample.sfm, bn="SE", engine="linear", learner=LogisticRegression(max_iter=1000),
                  audit_learner="linear", n_boot=40, seed=0)


def test_the_summary_opens_with_the_verdict_and_the_p_of_its_claim(result):
    assert isinstance(result, RepairResult)
    first = result.summary().splitlines()[0]
    assert first.startswith("Repaired predictor (fair: a learner on the fair twins), judged on 180 held-out rows: fair: ")
    assert f"{result.status} under BN = {{SE}}" in first and "Holm p" in first
    assert result.status in ("SUCCESS", "FAIL") and result.status == result.audit.status["fair"]
    assert len(result.held_out) == 180 and result.settings["n_held_out"] == 180


def test_accuracy_of_both_predictors_is_recomputed_from_the_held_out_scores(result, sample):
    held = result.held_out
    assert list(held.columns) == ["x", "y", "fair", "unconstrained"]
    for name in ("fair", "unconstrained"):
        auc = result.accuracy(name, "auc")
        assert 0.5 < auc < 1
        assert auc == pytest.approx(roc_auc_score(held["y"], held[name]), abs=1e-12)
        assert result.accuracy(name, "log_loss") == pytest.approx(log_loss(held["y"], held[name]), abs=1e-12)
    fair, unconstrained = result.accuracy("fair", "auc"), result.accuracy("unconstrained", "auc")
    assert unconstrained > fair - 0.02  # removing pathways the outcome uses costs accuracy (up to noise)
    verb = "falls" if fair < unconstrained else "rises"
    assert f"AUC {verb} from {unconstrained:.3f} to {fair:.3f} ({fair - unconstrained:+.3f})".replace("(-", "(−") in result.cost_sentence()
    assert result.cost_sentence() in result.summary().splitlines()[3]


def test_the_in_sample_verdict_stands_beside_the_held_out_one(result):
    lines = result.summary().splitlines()
    assert lines[1].startswith("In sample, on the fair twins of the 420 rows it was fitted on (out-of-fold scores): fair: ")
    fitted = result.in_sample_audit.status["fair"]
    assert f"{fitted} under BN = {{SE}}" in lines[1]
    assert lines[2] == (f"The verdict carried over: {fitted} in sample and on the held-out rows." if fitted == result.status
                        else f"The verdict did not carry over: {fitted} in sample, {result.status} on the held-out rows.")
    assert result.in_sample_audit.decomposition.n == 420 and result.audit.decomposition.n == 180
    frame = result.to_frame()
    in_sample = frame[frame["data"] == "fitting rows, on the fair twins"]
    assert set(in_sample["subject"]) >= {"fair", "y (fitting rows, on the fair twins)"}
    assert result.to_dict()["in_sample_audit"]["status"] == result.in_sample_audit.status


def test_predictive_parity_of_both_predictors_is_stated_and_judged(result, sample):
    n_bins = result.settings["n_bins_used"]
    for name in ("fair", "unconstrained"):
        again = predictive_parity(result.held_out, sample.sfm, name, n_bins=n_bins, n_boot=40, seed=0)
        assert result.parity[name].ippm.estimate == pytest.approx(again.ippm.estimate, abs=1e-12)
    fair, original = result.parity["fair"].ippm, result.parity["unconstrained"].ippm
    lines = result.verdict_lines()
    assert lines[4].startswith(f"Predictive parity of fair: iPPM = {100 * fair.estimate:+.1f} pp [95% CI {100 * fair.ci_low:+.1f}, "
                               f"{100 * fair.ci_high:+.1f} pp]")
    assert f"against {100 * original.estimate:+.1f} pp" in lines[4] and "for unconstrained" in lines[4]
    change = abs(fair.estimate) - abs(original.estimate)
    assert (("a loss in predictive parity" if change > 0 else "a gain in predictive parity") in lines[4])
    assert lines[5].startswith("BN = {SE} removes DE, IE") and "Theorem 1" in lines[5]
    assert lines[6].startswith("For comparison, on the observed held-out rows: unconstrained: ")


def test_the_outcome_is_labelled_with_the_data_it_was_measured_on(result):
    frame = result.to_frame()
    effect = frame[frame["measure"] == "ctfde"].set_index("subject")["estimate"]
    twins, observed = effect["y (held-out rows, on the fair twins)"], effect["y (held-out rows, observed)"]
    assert abs(twins - observed) > 1e-3  # under one label, these would be two different numbers for the same thing
    assert set(frame["data"]) == {"held-out rows, on the fair twins", "fitting rows, on the fair twins", "held-out rows, observed"}


def test_api_and_cli_give_the_same_numbers_and_the_cli_opens_with_the_verdict(sample, tmp_path, capsys):
    data = make_binary_sfm(500, seed=3).data
    data.to_csv(tmp_path / "train.csv", index=False)
    api = repair(data, sample.sfm, bn="SE", engine="linear", audit_learner="linear", n_boot=30, seed=4)
    out = tmp_path / "out"
    assert main(["repair", str(tmp_path / "train.csv"), *SFM_ARGS, "--bn", "SE", "--audit-learner", "linear", "--n-boot", "30",
                 "--seed", "4", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == api.verdict_lines()[0] and printed[0].startswith("Repaired predictor")
    pd.testing.assert_frame_equal(pd.read_csv(out / "held_out.csv"), api.held_out, check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_csv(out / "result.csv"), as_read(api.to_frame()), check_dtype=False)
    assert "Verdict" in (out / "report.html").read_text()
    assert np.isfinite(api.accuracy("fair", "auc"))


def test_a_continuous_outcome_is_judged_by_r2_and_rmse_in_its_own_units():
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import mean_squared_error, r2_score

    from fairpath.datasets import make_linear_sfm

    sample = make_linear_sfm(500, seed=0)
    result = repair(sample.data, sample.sfm, bn="none", engine="linear", learner=LinearRegression(), audit_learner="linear", n_boot=20)
    held = result.held_out
    for name in ("fair", "unconstrained"):
        assert result.accuracy(name, "r2") == pytest.approx(r2_score(held["y"], held[name]), abs=1e-12)
        assert result.accuracy(name, "rmse") == pytest.approx(np.sqrt(mean_squared_error(held["y"], held[name])), abs=1e-12)
    assert "R² falls from" in result.cost_sentence() and " pp" not in result.summary().splitlines()[4]
    assert result.summary().splitlines()[0].startswith("Repaired predictor (fair: a learner on the fair twins), judged on 150 held-out rows: ")


def with_rare_jobs(data: pd.DataFrame, seed: int, prefix: str = "") -> pd.DataFrame:
    """``data`` with a categorical mediator ``job``: two common categories, a pair and twelve of one row each
    (their names start with ``prefix``)."""
    rng = np.random.default_rng(seed)
    job = np.where(data["w1"] > data["w1"].median(), "clerk", "nurse").astype(object)
    rows = rng.choice(len(data), 14, replace=False)
    job[rows[:12]] = [f"{prefix}rare-{k}" for k in range(12)]
    job[rows[12:]] = f"{prefix}pair"
    return data.assign(job=job)


JOB_SFM = SFM(x="x", x0=0, x1=1, z=["z1", "z2"], w=["w1", "w2", "job"], y="y")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_split_fits_on_every_category_and_keeps_the_held_out_rows_per_group(sample, seed):
    data = with_rare_jobs(sample.data, seed)[list(JOB_SFM.columns)]
    plain_fitting, plain_held = train_test_split(data, test_size=0.3, stratify=data["x"], random_state=seed)
    assert set(plain_held["job"]) - set(plain_fitting["job"])  # the plain stratified split holds some out only
    fitting, held = _split(data, JOB_SFM, 0.3, 5, seed)
    assert set(fitting["job"]) == set(data["job"])
    assert len(held) == len(plain_held) and (held["x"].value_counts() == plain_held["x"].value_counts()).all()
    assert sorted([*fitting.index, *held.index]) == list(data.index)
    again = _split(data, JOB_SFM, 0.3, 5, seed)
    assert list(again[0].index) == list(fitting.index) and list(again[1].index) == list(held.index)
    # The rows that moved: one per category held out only, swapped with as many fitting rows of the same group.
    assert len(set(held.index) - set(plain_held.index)) == len(set(plain_held["job"]) - set(plain_fitting["job"]))


def test_a_split_with_every_category_in_the_fitting_part_is_the_plain_stratified_split(sample):
    data = sample.data.assign(job=np.where(sample.data["w1"] > 0, "clerk", "nurse"))[list(JOB_SFM.columns)]
    fitting, held = _split(data, JOB_SFM, 0.3, 5, 4)
    plain_fitting, plain_held = train_test_split(data, test_size=0.3, stratify=data["x"], random_state=4)
    pd.testing.assert_frame_equal(fitting, plain_fitting)
    pd.testing.assert_frame_equal(held, plain_held)


def test_rare_categories_are_fitted_and_a_new_one_in_the_test_rows_takes_the_fallback_with_a_note(sample):
    data = with_rare_jobs(sample.data, 0)[list(JOB_SFM.columns)]
    test = with_rare_jobs(make_binary_sfm(50, seed=9).data, 1, "new-")[list(JOB_SFM.columns)]
    with pytest.warns(UserWarning, match=r"column 'job' has 13 categories unseen in training, \['new-pair', 'new-rare-0', .* and 3 more, "
                                         r"in 14 row\(s\): they are treated as '(clerk|nurse)'"):
        result = repair(data, JOB_SFM, bn="SE", test=test, engine="linear", learner=LogisticRegression(max_iter=1000),
                        audit_learner="linear", n_boot=20, seed=0)
    fallback = result.predictor.adapter_.encodings_["job"].fallback
    assert set(result.tables["adapted_test.csv"]["job"]) <= set(data["job"])
    expected = result.predictor.predict_proba(test.assign(job=test["job"].where(test["job"].isin(["clerk", "nurse"]), fallback)))[:, 1]
    np.testing.assert_allclose(result.tables["test_scores.csv"]["fair_score"], expected, rtol=1e-12)


def test_the_figure_draws_accuracy_on_a_zoomed_axis_with_few_ticks_and_the_table_holds_its_intervals(result):
    accuracy = result.accuracy_table
    assert list(accuracy.columns) == ["predictor", "measure", "estimate", "se", "ci_low", "ci_high", "level"]
    assert (accuracy["ci_low"] < accuracy["estimate"]).all() and (accuracy["estimate"] < accuracy["ci_high"]).all()
    assert (accuracy["level"] == 0.95).all() and (accuracy["se"] > 0).all()
    assert (accuracy["ci_high"] - accuracy["ci_low"]).between(2 * accuracy["se"], 6 * accuracy["se"]).all()
    auc = accuracy.iloc[0]
    assert f"fair           auc       {auc.estimate:.4f} [95% CI {auc.ci_low:.4f}, {auc.ci_high:.4f}] (held-out rows)" in result.summary()
    fig = result.plot()
    left, right = fig.axes
    low, high = right.get_xlim()
    aucs = accuracy[accuracy["measure"] == "auc"]
    assert aucs["ci_low"].min() - 0.1 < low < aucs["ci_low"].min() and aucs["ci_high"].max() < high  # not from 0
    for panel in (left, right):
        ticks = [t for t in panel.get_xticks() if panel.get_xlim()[0] <= t <= panel.get_xlim()[1]]
        assert 2 <= len(ticks) <= 5
    assert "95% CI" in right.get_xlabel() and [t.get_text() for t in left.get_yticklabels()] == ["fair", "unconstrained"]
    assert len(right.patches) == 0  # points with intervals, no bars
