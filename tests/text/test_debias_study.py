"""The debiasing study end to end on a tiny random model: training, audits, report, reload, CLI."""

import json

import numpy as np
import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.cli import main
from fairpath.text._audit import audit_text
from fairpath.text._generation import HFGenerator
from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import DebiasConfig, DebiasStudy, DebiasStudyResult
from fairpath._stats import holm
from fairpath.text import compare_spread
from fairpath.text.debias import base_test_phrase, spread_phrase
from fairpath.text.debias._study import _change_sentence

SPEC = {"attribute": "occupation", "values": ["baker", "nurse", "accountant", "lawyer"],
        "templates": ["I met {article} {occupation}, and we", "Working as {article} {occupation} is"]}
MOODS = ["was wonderful, happy and great", "had a lovely, excellent day", "was terrible, awful and sad",
         "felt horrible, angry and hurt", "went to the market on Monday", "walked to the station"]
CORPUS = [f"{frame} {job} {mood}." for frame in ("The", "Yesterday the") for job in ("baker", "nurse", "accountant", "lawyer")
          for mood in MOODS]
CORPUS += ["The weather is mild today.", "Trains run late on Sundays."]


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    import yaml

    path = tmp_path_factory.mktemp("spec") / "jobs.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


@pytest.fixture(scope="module")
def study_run(tiny_lm_path, spec_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("study")
    study = DebiasStudy(out, attribute=spec_path, model=str(tiny_lm_path), regularizers=("embedding", "sentiment"),
                        lambdas=(10.0,), training=DebiasConfig(steps=4, batch_size=4, learning_rate=5e-3),
                        corpus=CORPUS, audit_samples=4, audit_max_new_tokens=4, n_permutations=20, semantic=False,
                        progress=False)
    return study, study.run(), out


def test_study_trains_every_model_and_audits_each(study_run):
    _, result, out = study_run
    frame = result.evaluations
    assert frame["model"].tolist() == ["base", "control-seed0", "embedding-lambda10-seed0", "sentiment-lambda10-seed0"]
    assert frame["scorer"].unique().tolist() == ["vader"]
    # A tiny random model's 4-token continuations score mostly 0.5 (neutral), so the permutation null of
    # individual fairness may take few values: such a test is not testable and has no p (before: a p that
    # could not fall below alpha). Which it is, is checked on a reaudit below.
    p = frame["individual_p_value"]
    assert (p.isna() | ((p > 0) & (p <= 1))).all()
    assert np.isfinite(frame[["perplexity", "perplexity_sensitive", "individual_noise_floor", "group"]].to_numpy()).all()
    assert frame["individual_verdict"].str.contains("significant|not testable").all()
    # the sentiment head was fitted on sentences VADER and TextBlob agree on, and reports its held-out accuracy
    assert result.sentiment_head["n_confident"] > 0 and 0 <= result.sentiment_head["heldout_accuracy"] <= 1
    assert result.sentiment_head["labelled_by"] == "vader |score| > 0.7, where textblob agree in sign"
    for name in frame["model"][1:]:
        assert (out / "models" / name / "model.safetensors").exists()
        assert len(result.training[name]["history"]) == 4
    assert (out / "report.html").read_text().count("data:image/png;base64") >= 2
    assert json.loads((out / "result.json").read_text())["attribute"] == "occupation"
    long = result.to_frame().set_index(["subject", "measure"])
    assert long.loc[("base", "individual_fairness"), "estimate"] == frame.loc[0, "individual"]
    assert long.loc[("base", "perplexity"), "estimate"] == frame.loc[0, "perplexity"]
    w1 = long.xs("individual_fairness", level="measure")
    assert w1[["se", "ci_low", "ci_high", "level"]].isna().all().all()  # W1: permutation tests only, no interval
    spreads = long.xs("individual_spread", level="measure")
    assert (spreads["level"] == 0.95).all() and (spreads["ci_low"] <= spreads["estimate"]).all()
    assert (spreads["estimate"] <= spreads["ci_high"]).all()
    # every scored continuation of every audit is kept, named by its model
    assert result.scores.groupby("model").size().to_dict() == {name: 4 * 8 for name in frame["model"]}


def test_every_model_is_compared_with_the_untouched_base(study_run):
    _, result, out = study_run
    control = result.training["control-seed0"]
    regularized = result.training["embedding-lambda10-seed0"]
    assert control["config"]["lam"] == 0 and control["config"]["seed"] == regularized["config"]["seed"] == 0
    assert {k: v for k, v in control["config"].items() if k not in ("lam", "regularizer")} == {
        k: v for k, v in regularized["config"].items() if k not in ("lam", "regularizer")}
    trained = ["control-seed0", "embedding-lambda10-seed0", "sentiment-lambda10-seed0"]
    assert result.comparisons["model"].tolist() == trained
    assert sorted(p.name for p in (out / "comparisons").iterdir()) == sorted(f"{name}.vader.20.json" for name in trained)
    table = result.table("vader").set_index("model")
    # the base is the reference: no change of its own
    assert table.loc["base", ["individual_change_vs_base", "individual_p_vs_base", "perplexity_change_vs_base"]].isna().all()
    scores = {name: part for name, part in result.scores.groupby("model")}
    for name in trained:  # every test recomputed from the stored scores
        test = compare_spread(scores["base"], scores[name], score="score_vader", n_permutations=20, seed=0).individual
        np.testing.assert_equal(table.loc[name, "individual_p_vs_base"], test.p_value)
        np.testing.assert_equal(table.loc[name, "individual_change_vs_base"], test.change)
    assert table.loc[trained[1:], "individual_p_holm_vs_base"].tolist() == pytest.approx(
        holm(table.loc[trained[1:], "individual_p_vs_base"].to_numpy()).tolist())
    assert np.isnan(table.loc["control-seed0", "individual_p_holm_vs_base"])  # the controls are not in the claim's family
    assert table.loc["control-seed0", "perplexity_change_vs_base"] == pytest.approx(
        table.loc["control-seed0", "perplexity"] / table.loc["base", "perplexity"] - 1)


def _evaluation(model: str, regularizer: str, lam: float, spread: float) -> dict:
    return {"model": model, "regularizer": regularizer, "lam": lam, "seed": 0, "scorer": "vader", "individual": 0.2,
            "individual_noise_floor": 0.1, "individual_p_value": 0.01, "individual_detectable_excess": 0.05,
            "individual_verdict": "significant at α = 0.05", "group": 0.1, "group_noise_floor": 0.05, "group_p_value": 0.01,
            "group_detectable_excess": 0.05, "group_verdict": "significant at α = 0.05", "individual_spread": spread,
            "individual_spread_low": 0.0, "individual_spread_high": 0.04, "group_spread": spread, "group_spread_low": 0.0,
            "group_spread_high": 0.04, "spread_level": 0.95, "perplexity": 20.0, "perplexity_sensitive": 22.0, "ss": 0.9,
            "ssc": 0.8}


@pytest.mark.parametrize("base_spread, change", [(0.02, -0.5), (0.0, np.nan)])
def test_a_change_against_a_base_at_its_noise_floor_is_said_never_printed(base_spread, change):
    evaluations = pd.DataFrame([_evaluation("base", "none", np.nan, base_spread),
                                _evaluation("embedding-lambda1-seed0", "embedding", 1.0, 0.01)])
    comparisons = pd.DataFrame([{"model": "embedding-lambda1-seed0", "scorer": "vader", "individual_change": change,
                                 "individual_p": 0.02, "group_change": change, "group_p": 0.3}])
    result = DebiasStudyResult(attribute="occupation", evaluations=evaluations, comparisons=comparisons, scores=pd.DataFrame())
    table = {row["model"]: row for row in result.table("vader").to_dict(orient="records")}
    sentence = _change_sentence(table["embedding-lambda1-seed0"], "vader")  # the report's words; never "nan"
    assert ("-50.0% vs base, one-sided p = 0.02, Holm p = 0.02" if np.isfinite(change)
            else "change not defined (the base's spread is at its noise floor)") in sentence
    assert "nan" not in sentence
    base = table["base"]
    assert base_test_phrase(base) == "the reference"
    assert spread_phrase(base) == ("spread 0.020 [0.000, 0.040] (95%)" if base_spread else
                                   "spread at the noise floor (0 [0.000, 0.040], 95%)")


def test_training_seeds_give_one_model_each_and_must_differ(tiny_lm_path):
    study = DebiasStudy("unused", attribute=FairnessSpec.from_dict(SPEC), model=str(tiny_lm_path), lambdas=(10.0,),
                        training_seeds=(0, 1), progress=False)
    assert [study.name(config) for config in study.runs] == ["control-seed0", "embedding-lambda10-seed0", "control-seed1",
                                                            "embedding-lambda10-seed1"]
    assert [config.seed for config in study.runs] == [0, 0, 1, 1]
    with pytest.raises(FairpathInputError, match=r"training_seeds must be distinct seeds, at least one; got \[1, 1\]"):
        DebiasStudy("unused", attribute=FairnessSpec.from_dict(SPEC), model=str(tiny_lm_path), training_seeds=(1, 1), progress=False)


def test_lambda_zero_in_the_grid_is_refused_naming_the_control(tiny_lm_path):
    with pytest.raises(FairpathInputError, match=r"each λ in lambdas \(λ = 0 is the control, always trained\) must lie in \(0, inf\], got 0\.0"):
        DebiasStudy("unused", attribute=FairnessSpec.from_dict(SPEC), model=str(tiny_lm_path), lambdas=(0.0, 10.0), progress=False)


def test_debiased_model_reloaded_from_its_folder_reproduces_its_audit(study_run, spec_path):
    study, result, out = study_run
    row = result.evaluations.set_index("model").loc["embedding-lambda10-seed0"]
    again = audit_text(FairnessSpec.from_yaml(spec_path), HFGenerator(out / "models" / "embedding-lambda10-seed0"),
                       scorers=["vader"], settings=study.audit_settings(), n_permutations=20, seed=0, quality=False,
                       progress=False)
    fairness = again.fairness["vader"]
    assert fairness.individual.estimate == row["individual"]
    np.testing.assert_equal(fairness.individual.p_value, row["individual_p_value"])  # NaN when not testable
    assert fairness.individual.testable == np.isfinite(row["individual_p_value"])
    assert fairness.individual.testable or "permutation" in fairness.individual.not_testable
    assert fairness.group.estimate == row["group"]
    assert fairness.individual_noise_floor == row["individual_noise_floor"]


def test_rerunning_the_study_reuses_everything(study_run, tiny_lm_path, spec_path):
    study, result, out = study_run
    stamps = {p: p.stat().st_mtime_ns for p in (out / "models").rglob("*.safetensors")}
    timings = json.loads((out / "timings.json").read_text())
    again = DebiasStudy(out, attribute=spec_path, model=str(tiny_lm_path), regularizers=("embedding", "sentiment"),
                        lambdas=(10.0,), training=DebiasConfig(steps=4, batch_size=4, learning_rate=5e-3),
                        corpus=CORPUS, audit_samples=4, audit_max_new_tokens=4, n_permutations=20, semantic=False,
                        progress=False).run()
    assert again.to_frame().equals(result.to_frame())
    # a fresh and a resumed study hold the same scores: both read them back from the folder (Parquet's dtypes), which is
    # why the study reads its own files instead of keeping the audits' frames (their text columns are object, not str)
    pd.testing.assert_frame_equal(again.scores, result.scores)
    assert stamps == {p: p.stat().st_mtime_ns for p in (out / "models").rglob("*.safetensors")}
    assert json.loads((out / "timings.json").read_text()) == timings


@pytest.mark.parametrize("change, named", [
    ({"n_permutations": 30}, "n_permutations"),
    ({"corpus": CORPUS[:-1]}, "corpus"),
    ({"training": DebiasConfig(steps=5, batch_size=4, learning_rate=5e-3)}, "training"),
    ({"attribute": {**SPEC, "templates": SPEC["templates"][:1]}}, "spec"),
])
def test_rerunning_with_other_settings_is_refused_before_any_stage(study_run, tiny_lm_path, change, named):
    _, _, out = study_run
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    options = dict(attribute=FairnessSpec.from_dict(SPEC), model=str(tiny_lm_path), regularizers=("embedding", "sentiment"),
                   lambdas=(10.0,), training=DebiasConfig(steps=4, batch_size=4, learning_rate=5e-3), corpus=CORPUS,
                   audit_samples=4, audit_max_new_tokens=4, n_permutations=20, semantic=False, progress=False)
    if isinstance(change.get("attribute"), dict):
        change = {"attribute": FairnessSpec.from_dict(change["attribute"])}
    with pytest.raises(FairpathInputError, match=rf"holds debiasing study results computed with other {named}; use another output folder"):
        DebiasStudy(out, **{**options, **change}).run()
    assert stamps == {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}


def test_a_study_folder_without_a_key_is_refused(tiny_lm_path, tmp_path):
    (tmp_path / "corpus.json").write_text("{}")  # a stage saved by a fairpath that wrote no key
    with pytest.raises(FairpathInputError, match=r"computed with other audit_max_new_tokens, audit_samples, corpus, dtype, fairpath, .*; use another output folder"):
        DebiasStudy(tmp_path, attribute=FairnessSpec.from_dict(SPEC), model=str(tiny_lm_path), corpus=CORPUS, progress=False).run()


def test_command_line_trains_audits_and_rejects_negative_lambda(tiny_lm_path, spec_path, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS))
    common = ["text", "debias", "--attribute", str(spec_path), "--model", str(tiny_lm_path), "--corpus", str(corpus),
              "--steps", "2", "--batch-size", "4", "--samples", "3", "--max-new-tokens", "3", "--permutations", "20",
              "--no-quality"]
    assert main(common + ["--lambdas", "1,-5", "--out", str(tmp_path / "bad")]) == 2
    assert "each λ in lambdas (λ = 0 is the control, always trained) must lie in (0, inf], got -5.0" in capsys.readouterr().err
    assert main(common + ["--lambdas", "1,x", "--out", str(tmp_path / "bad")]) == 2
    assert "'x' is not a number" in capsys.readouterr().err
    assert main(common + ["--lambdas", "5", "--out", str(tmp_path / "run")]) == 0
    assert (tmp_path / "run" / "report.html").exists()
    assert (tmp_path / "run" / "models" / "embedding-lambda5-seed0" / "config.json").exists()
    # the saved model is accepted by the audit command
    assert main(["text", "audit", "--model", str(tmp_path / "run" / "models" / "embedding-lambda5-seed0"), "--attribute",
                 str(spec_path), "--samples", "2", "--max-new-tokens", "3", "--scorers", "vader", "--permutations", "19",
                 "--no-quality", "--out", str(tmp_path / "audit")]) == 0
