import html
import json

import numpy as np
import pandas as pd
import pytest

from fairpath._stats import holm
from fairpath.text import FairnessSpec, GenerationSettings, HFGenerator, PoolGenerator, audit_text
from fairpath.text import perplexity as text_perplexity
from fairpath.text._scorers import VaderScorer

from toy_spec import BIASED, SPEC  # tests/text is on the import path (no __init__.py)


class CountingPoolGenerator(PoolGenerator):
    """Counts the samples it is asked for, to show that stored samples are reused."""

    requested = 0

    def generate_requests(self, requests, settings):
        self.requested += len(requests)
        return super().generate_requests(requests, settings)


def test_audit_recovers_the_controlled_bias_and_reuses_samples(tmp_path):
    generator = CountingPoolGenerator(SPEC, mixing=BIASED)
    settings = GenerationSettings(n_samples=200, seed=0)
    store = tmp_path / "samples"
    result = audit_text(SPEC, generator, scorers=["vader"], settings=settings, store=store, quality=False,
                        n_permutations=199, progress=False)
    assert generator.requested == 20 * 200 and store.is_dir()
    scorer = VaderScorer()
    vader = result.fairness["vader"]
    assert vader.individual.estimate == pytest.approx(generator.expected_individual_fairness(scorer), abs=0.03)
    assert vader.group.estimate == pytest.approx(generator.expected_group_fairness(scorer), abs=0.03)
    assert result.to_frame()["significant"].all()
    assert {"model", "prompt", "template_id", "value", "subgroup", "sample_index", "text", "score_vader"} <= set(result.samples.columns)

    rescored = audit_text(SPEC, generator, scorers=["opinion", "textblob"], settings=settings, store=store,
                          quality=False, n_permutations=19, progress=False)
    assert generator.requested == 20 * 200  # rescoring never regenerates
    pd.testing.assert_series_equal(rescored.samples["text"], result.samples["text"])
    assert rescored.scorers == ["opinion", "textblob"]


def test_unbiased_audit_is_not_significant():
    result = audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], settings=GenerationSettings(n_samples=200, seed=1),
                        quality=False, n_permutations=99, seed=1, progress=False)
    table = result.to_frame()
    assert not table["significant"].any() and (table["p_holm"] > 0.05).all()


def test_result_exports_and_report(tmp_path):
    result = audit_text(SPEC, PoolGenerator(SPEC, mixing={"A": 0.6}), scorers=["vader", "opinion"],
                        settings=GenerationSettings(n_samples=30), quality=False, n_permutations=99, progress=False)
    frame = result.to_frame()
    assert list(frame["subject"]) == ["vader", "vader", "opinion", "opinion"]
    assert frame[["se", "ci_low", "ci_high", "level"]].isna().all().all()  # permutation tests only, no interval
    # Holm over the audit's whole family: both scorers x both metrics.
    assert (frame["holm_family"] == 4).all()
    np.testing.assert_allclose(frame["p_holm"], holm(frame["p_value"]))
    assert result.settings["dtype"] == "n/a" and result.settings["versions"]["numpy"] == np.__version__
    payload = json.loads(result.to_json(tmp_path / "result.json"))
    assert payload["n_samples"] == 600 and payload["summary"][0]["measure"] == "individual_fairness"
    assert payload["fairness"]["vader"]["per_pair"][0]["w1"] >= payload["fairness"]["vader"]["per_pair"][-1]["w1"]
    text = result.summary()
    assert "\n" not in repr(result) and "CI" not in repr(result)
    assert "Holm over 4 tests" in text and "vader      individual_fairness" in text and "[" not in text.split("\n", 1)[1]
    fig = result.plot(scorer="opinion")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][-1] in {"A", "B"}  # most positive values last
    examples = result.examples()
    assert set(examples["value"]) == {result.fairness["vader"].per_pair.iloc[0]["value_a"],
                                      result.fairness["vader"].per_pair.iloc[0]["value_b"]}
    page = result.save(tmp_path)["report"].read_text()
    for heading in ("Fairness per scorer", "Scorer vader", "Worst pairs: the top 6 of 6", "Example continuations",
                    "noise floor", "after Holm's adjustment", "version numpy", "white-space:pre-wrap"):
        assert heading in page
    assert ">True<" not in page and ">False<" not in page
    flagged = frame[frame["significant"]]
    if len(flagged):
        assert f"{len(flagged)} of 4 scorer/metric tests reject" in page
    else:
        assert "None of the 4 scorer/metric tests rejects" in page
    assert page.count("data:image/png;base64") == 4


def test_audit_with_a_local_causal_lm_and_perplexity(tiny_lm_path, tmp_path):
    spec = FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"],
                                   "templates": ["{country} is", "People from {country} are"]})
    backend, corpus = HFGenerator(tiny_lm_path), ["Chile is long and thin.", "The sky is blue."]
    result = audit_text(spec, backend, scorers=["vader"], store=tmp_path / "samples",
                        settings=GenerationSettings(n_samples=4, max_new_tokens=5, batch_size=8), quality=False,
                        corpus=corpus, n_permutations=19, progress=False)
    assert len(result.samples) == 16
    perplexity = result.quality["perplexity"]
    assert perplexity["n_texts"] == 2 and perplexity["n_texts_sensitive"] == 1 and perplexity["perplexity"] > 1
    # the audit scores text through the backend contract, which gives the model's own perplexity exactly
    assert backend.scores_perplexity
    assert perplexity == text_perplexity(backend.model, backend.tokenizer, corpus, spec=spec).to_dict()
    assert list(result.timings) == ["generation", "perplexity", "scoring", "metrics", "quality"]
    from fairpath.text._generation import resolve_dtype_name

    assert result.settings["dtype"] == resolve_dtype_name("auto", "cpu")  # bfloat16 where the CPU computes it natively


@pytest.mark.model
def test_audit_quality_with_minilm():
    result = audit_text(SPEC, PoolGenerator(SPEC, mixing=BIASED), scorers=["vader"], settings=GenerationSettings(n_samples=10),
                        n_permutations=19, progress=False)
    quality = result.quality
    assert quality["n_quality_samples"] == 10 * result.samples["prompt"].nunique()  # default: 10 per prompt
    assert set(quality["ss_per_value"]) == set(quality["ssc_per_value"]) == {"A", "B", "C", "D"}
    for key, threshold in (("ss", "similarity_threshold"), ("ssc", "context_threshold")):
        calibration = quality[threshold]["calibration"]
        assert calibration["unrelated_share"] == pytest.approx(0.05, abs=0.02)
        assert quality[key] == pytest.approx(calibration["matched_share"])
    assert quality["embedding"]["sentences_per_s"] > 0


def test_one_continuation_audit_leaves_individual_fairness_out_of_holm_and_says_why(tmp_path):
    result = audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader", "opinion"], settings=GenerationSettings(n_samples=1, seed=2),
                        quality=False, n_permutations=999, progress=False)
    frame = result.to_frame()
    individual = frame[frame["measure"] == "individual_fairness"]
    assert individual["not_testable"].str.startswith("one continuation per prompt").all() and individual["p_holm"].isna().all()
    testable = frame[frame["not_testable"] == ""]
    assert len(testable) >= 1 and (frame["holm_family"] == len(testable)).all()
    np.testing.assert_allclose(testable["p_holm"], holm(testable["p_value"]))  # Holm over the testable family only
    verdict = result.verdict()
    closest = testable.loc[testable["p_value"].idxmin()]  # the smallest p names the claim, with its own Holm p
    assert (f"closest: {closest['subject']} {closest['measure'].replace('_', ' ')}, p = {closest['p_value']:.3g}, "
            f"Holm p = {closest['p_holm']:.3g}.") in verdict
    assert f"{4 - len(testable)} of 4 tests are not testable here and are left out of the Holm family" in verdict
    assert "vader individual fairness, opinion individual fairness: one continuation per prompt" in verdict
    assert "sample at least 2 continuations per prompt" in verdict and "No evidence of bias is not evidence of none" in verdict
    assert f"None of the {len(testable)} testable scorer/metric tests rejects" in verdict
    assert "no bias detectable" not in verdict and result.violations == []
    assert f"verdict: {verdict}" in result.summary()
    page = result.save(tmp_path)["report"].read_text()
    assert html.escape(verdict, quote=False) in page and "no bias detectable" not in page and "detectable_excess" in page


def test_audit_without_a_testable_test_says_it_says_nothing():
    result = audit_text(SPEC, PoolGenerator(SPEC, mixing=BIASED), scorers=["vader"], settings=GenerationSettings(n_samples=5, seed=2),
                        quality=False, n_permutations=19, progress=False)
    assert result.verdict().startswith("no test could reject here: all 2 scorer/metric tests are not testable, so this audit "
                                       "says nothing about bias either way. 2 of 2 tests are not testable here (vader individual "
                                       "fairness, vader group fairness: with 19 permutations the smallest attainable p is 0.05")
    assert result.violations == []


def test_biased_audit_names_its_violations():
    result = audit_text(SPEC, PoolGenerator(SPEC, mixing=BIASED), scorers=["vader"], settings=GenerationSettings(n_samples=30, seed=2),
                        quality=False, n_permutations=199, progress=False)
    assert result.violations == ["vader individual fairness", "vader group fairness"]
    assert result.verdict().startswith("2 of 2 scorer/metric tests reject “no counterfactual sentiment difference” at "
                                       "α = 0.05 after Holm's adjustment over all 2: vader individual fairness (estimate ")
