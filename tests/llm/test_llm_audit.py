"""The LLM decision audit against ground truth: a scripted decision-maker whose P(yes) is a known function of the rendered
X, Z and W of the synthetic SFM, so every planted effect of its decisions is known; then the real local model's scoring
against a slow, obvious version of itself, the sampled fallback and the resumable store."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scripted_decider import ScriptedDecider, read_row

from fairpath.datasets import make_binary_sfm
from fairpath.datasets._synthetic import BinarySFM
from fairpath.llm import DecisionPrompt, ScoreStore, llm_audit, parse_answer, score_prompts

DIRECT = 0.08
PLANTED = {
    # a direct effect of X's mention, plus W and Z: every pathway carries something
    "direct": lambda x, z, w: 0.3 + DIRECT * x + 0.1 * w[:, 1] + 0.15 * np.tanh(z[:, 0]),
    # no direct effect: X acts only through the mediators
    "indirect": lambda x, z, w: 0.25 + 0.2 * w[:, 1] + 0.1 * np.tanh(w[:, 0]),
}


class Planted(BinarySFM):
    """The synthetic SFM with the decider's P(yes) as the outcome's mean: its truth is the decider's Ctf measures."""

    def __init__(self, probability):
        self.probability = probability

    def outcome_mean(self, x, z, w):
        return self.probability(x, z, w)


def _audit(probability, n=2000, seed=1, **options):
    sample = make_binary_sfm(n, seed=seed)
    with warnings.catch_warnings():  # a few rows with an extreme propensity: not what is tested here
        warnings.simplefilter("ignore")
        return llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=ScriptedDecider(probability), n_bins=4, progress=False,
                         **options)


@pytest.fixture(scope="module", params=sorted(PLANTED))
def planted(request):
    return request.param, _audit(PLANTED[request.param])


def test_the_audit_recovers_every_planted_effect_within_three_standard_errors(planted):
    name, result = planted
    truth = Planted(PLANTED[name]).truth_for(0, 1)
    decomposition = result.audit.decomposition
    for measure in ("ctfde", "ctfie", "ctfse", "tv"):
        estimate = decomposition.estimate(measure, "llm_mentioned")
        assert abs(estimate.estimate - truth[measure]) < 3 * estimate.se + 1e-3, (name, measure, estimate, truth[measure])
    assert truth["ctfde"] == pytest.approx(DIRECT if name == "direct" else 0.0, abs=1e-3)


def test_the_exact_check_equals_the_planted_direct_effect(planted):
    name, result = planted
    (row,) = result.exact.itertuples()
    assert row.estimate == pytest.approx(DIRECT if name == "direct" else 0.0, abs=1e-9)
    assert row.rows == int((result.scores["x"] == 0).sum())
    assert row.rows_changed == (row.rows if name == "direct" else 0)
    assert abs(row.gap_in_se) < 3  # the estimated Ctf-DE differs from the exact one by the estimator's error only


def test_a_model_that_ignores_the_mention_shows_no_disparity_through_it():
    result = _audit(PLANTED["indirect"], n=1500, seed=2)
    mention = result.mention.set_index("measure")
    assert np.allclose(mention["estimate"], 0.0, atol=1e-12)
    assert np.allclose(result.scores["llm_mentioned"], result.scores["llm_withheld"])


def test_withholding_x_removes_the_direct_effect_and_the_mention_carries_it():
    result = _audit(PLANTED["direct"], n=1500, seed=3)
    withheld = result.audit.decomposition.estimate("ctfde", "llm_withheld")
    assert abs(withheld.estimate) < 3 * withheld.se + 1e-3
    tv = result.mention.set_index("measure").loc["tv"]
    assert tv["estimate"] == pytest.approx(DIRECT, abs=1e-9)  # mentioning x = 1 adds DIRECT to every row of x = 1, 0 to x = 0


def test_the_readings_follow_the_signs_of_world_model_and_difference():
    from fairpath._stats import Estimate
    from fairpath.llm._audit import reading

    def est(value, se=0.01):
        return Estimate.from_se(value, se)

    assert reading(est(0.10), est(0.20), est(0.10), 0.001, 0.05) == "amplifies"
    assert reading(est(0.10), est(0.03), est(-0.07), 0.001, 0.05) == "dampens"
    assert reading(est(0.10), est(-0.10), est(-0.20), 0.001, 0.05) == "reverses"
    assert reading(est(0.00), est(0.10), est(0.10), 0.001, 0.05) == "adds a disparity"
    assert reading(est(0.10), est(0.12), est(0.02), 0.20, 0.05) == "no change shown"
    assert reading(est(0.10), est(-0.005), est(-0.105), 0.001, 0.05) == "dampens"  # past zero, but not shown the other way


def test_the_waterfall_adds_up_and_the_result_saves_its_report(tmp_path):
    result = _audit(PLANTED["direct"], n=800, seed=4, learner="linear")
    rows = result.pathways[result.pathways["predictor"] == "llm_mentioned"].set_index("measure")
    moved = rows.loc["ctfde", "estimate"] - rows.loc["ctfie", "estimate"] - rows.loc["ctfse", "estimate"]
    assert rows.loc["tv", "world_estimate"] + moved == pytest.approx(rows.loc["tv", "model_estimate"], abs=1e-9)
    paths = result.save(tmp_path / "out")
    page = paths["report"].read_text()
    assert "Exact interventions on the prompt" in page and "audit/report.html" in page
    assert (tmp_path / "out" / "audit" / "report.html").is_file()
    scores = pd.read_csv(paths["scores"])
    assert {"llm_mentioned", "llm_withheld", "llm_mentioned[0]", "llm_mentioned[1]"} <= set(scores.columns) and len(scores) == 800


def test_sampled_answers_stand_in_where_a_backend_gives_no_probabilities():
    sample = make_binary_sfm(30, seed=5)
    prompt = DecisionPrompt.builtin("synthetic")
    texts = prompt.render(sample.data, sample.sfm)
    decider = ScriptedDecider(PLANTED["direct"], logprobs=False)
    scores = score_prompts(decider, texts, prompt.options, samples=200, progress=False)
    assert (scores["method"] == "sampled").all() and (scores["answers"] == 200).all() and (scores["mass"] == 1.0).all()
    truth = np.array([decider.yes(text) for text in dict.fromkeys(texts)])
    assert np.all(np.abs(scores["score"].to_numpy() - truth) < 4 * np.sqrt(truth * (1 - truth) / 200))


def test_rows_without_any_parsed_answer_are_kept_out_and_said():
    sample = make_binary_sfm(400, seed=6)
    # "maybe" never parses: where every sample says it, the row has no score
    decider = ScriptedDecider(lambda x, z, w: np.where(z[:, 0] > 1, 0.0, 0.5), logprobs=False, answers=("yes", "maybe"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=decider, samples=4, n_bins=3, learner="linear",
                           progress=False)
    kept_out = int(result.scores[["llm_mentioned", "llm_withheld"]].isna().any(axis=1).sum())  # a row needs both answers
    assert kept_out > 0 and result.audit.decomposition.n == 400 - kept_out
    assert any(f"{kept_out:,} of 400 rows kept out" in note for note in result.notes)
    # a row of x0 answered with its own mention but not with the other's is left out of the exact check, and counted
    kept = result.scores[["llm_mentioned", "llm_withheld"]].notna().all(axis=1)
    (exact,) = result.exact.itertuples()
    assert np.isfinite(exact.estimate) and exact.rows_unanswered > 0
    assert exact.rows + exact.rows_unanswered == int((kept & (result.scores["x"] == 0)).sum())
    assert any(f"{exact.rows_unanswered:,} row(s) of 0 left out" in note for note in result.notes)


@pytest.mark.parametrize(("text", "expected"), [
    ("Yes.", 0), (" no", 1), ("**No**, because", 1), ("YES", 0), ("yes, definitely", 0), ("\n\nNo", 1),
    ("I think yes", None), ("maybe", None), ("", None), ("Yesterday", None), ("n/a", None), ("'no'", 1), ("- yes", 0),
])
def test_an_answer_is_parsed_by_its_first_word_only(text, expected):
    options = DecisionPrompt.builtin("synthetic").options
    assert parse_answer(text, options) == expected


def test_scale_answers_parse_as_their_digit():
    options = DecisionPrompt.builtin("census").options
    assert parse_answer("4", options) == 3 and parse_answer("5.", options) == 4 and parse_answer("4/5", options) == 3
    assert parse_answer("six", options) is None


def test_a_store_resumes_without_asking_again(tmp_path):
    sample = make_binary_sfm(50, seed=7)
    prompt = DecisionPrompt.builtin("synthetic")
    texts = prompt.render(sample.data, sample.sfm)
    store = ScoreStore(tmp_path / "scores")
    first = ScriptedDecider(PLANTED["direct"])
    scored = score_prompts(first, texts[:20], prompt.options, store=store, batch_size=8, progress=False)
    again = ScriptedDecider(PLANTED["direct"])
    resumed = score_prompts(again, texts, prompt.options, store=store, batch_size=8, progress=False)
    assert first.asked == 20 and again.asked == len(set(texts)) - 20
    pd.testing.assert_frame_equal(resumed.loc[scored.index], scored)
    other = prompt.from_dict({**prompt.to_dict(), "options": [{"answer": "yes", "value": 2, "spellings": ["yes"]},
                                                              {"answer": "no", "value": 0, "spellings": ["no"]}]})
    third = ScriptedDecider(PLANTED["direct"])
    score_prompts(third, texts[:5], other.options, store=store, progress=False)
    assert third.asked == 5  # other options: other scores, never reused


def test_the_scripted_decider_reads_what_the_prompt_writes():
    sample = make_binary_sfm(5, seed=8)
    prompt = DecisionPrompt.builtin("synthetic")
    x, z, w = read_row(prompt.render(sample.data.iloc[:1], sample.sfm)[0])
    row = sample.data.iloc[0]
    assert x == row["x"] and z == pytest.approx([row["z1"], row["z2"]], rel=1e-5) and w == pytest.approx([row["w1"], row["w2"]], rel=1e-5)


# -- the local model ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_generator(tmp_path_factory):
    from tiny_models import make_tiny_causal_lm

    from fairpath.text import HFGenerator

    folder = make_tiny_causal_lm(tmp_path_factory.mktemp("tiny") / "lm", seed=3)
    return HFGenerator(str(folder), dtype="float32")


def test_the_local_scores_equal_one_prompt_at_a_time_without_a_shared_prefix(tiny_generator):
    sample = make_binary_sfm(24, seed=9)
    prompt = DecisionPrompt.builtin("synthetic")
    texts = prompt.render(sample.data, sample.sfm)
    batched = tiny_generator.answer_probabilities(texts, prompt.spellings, batch_size=7)
    tokens = [tiny_generator._option_tokens(spellings) for spellings in prompt.spellings]
    import torch

    with torch.inference_mode():
        alone = np.array([[float(tiny_generator._last_token_distribution([tiny_generator._message_ids(text)])[0, ids].sum())
                           for ids in tokens] for text in texts])
    assert np.abs(batched - alone).max() < 1e-5
    assert np.all(batched > 0) and np.all(batched.sum(axis=1) < 1)


def test_the_local_model_scores_a_whole_audit(tiny_generator, tmp_path):
    sample = make_binary_sfm(300, seed=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=tiny_generator, store=tmp_path / "scores", learner="linear",
                           n_bins=3, progress=False)
    assert result.scores["llm_mentioned"].between(0, 1).all() and result.settings["scoring"]["methods"] == {"probabilities": 900}
    assert result.model["dtype"] == "float32" and result.model["model_id"] == tiny_generator.model_id


def test_every_level_of_x_gets_its_exact_check_and_its_pathways(tmp_path):
    from fairpath.causal import SFM
    from fairpath.datasets import make_multilevel_sfm

    sample = make_multilevel_sfm(1500, seed=1, levels=3)
    sfm = SFM(x="x", x0=0, x1=None, z=sample.sfm.z, w=sample.sfm.w, y="y")
    decider = ScriptedDecider(lambda x, z, w: 0.4 + 0.05 * x + 0.1 * np.tanh(w[:, 0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = llm_audit(sample.data, sfm, "synthetic", "SE", backend=decider, n_bins=2, learner="linear", progress=False)
    exact = result.exact.set_index("x1")
    assert exact.loc[1, "estimate"] == pytest.approx(0.05, abs=1e-9) and exact.loc[2, "estimate"] == pytest.approx(0.10, abs=1e-9)
    assert (exact["rows"] == int((sample.data["x"] == 0).sum())).all()
    assert set(result.pathways["contrast"]) == set(result.audit.decomposition.contrasts) and len(result.pathways) == 2 * 2 * 4
    page = result.save(tmp_path / "out")["report"].read_text()
    assert page.count("From the world&#39;s disparity to the model&#39;s: ") == 2 or page.count("From the world's disparity to the model's: ") == 2


def test_rows_of_other_levels_are_excluded_and_said_never_dropped_silently():
    sample = make_binary_sfm(900, seed=12)
    data = sample.data.copy()
    data.loc[:99, "x"] = 2  # a third level the binary SFM does not name
    with pytest.warns(UserWarning, match="100 rows excluded because 'x' is neither 0 nor 1"):
        result = llm_audit(data, sample.sfm, "synthetic", "SE", backend=ScriptedDecider(PLANTED["direct"]), learner="linear", n_bins=3,
                           progress=False)
    assert "100 rows excluded because 'x' is neither 0 nor 1" in result.notes and len(result.scores) == 800


def test_a_backend_whose_sampled_answers_never_vary_is_said_to_decide_greedily():
    sample = make_binary_sfm(300, seed=13)
    greedy = ScriptedDecider(lambda x, z, w: np.where(z[:, 0] > 0, 1.0, 0.0), logprobs=False)  # the same answer every time
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = llm_audit(sample.data, sample.sfm, "synthetic", "SE", backend=greedy, samples=3, n_bins=2, learner="linear",
                           progress=False)
    assert any("may ignore the temperature and decode greedily" in note for note in result.notes)
