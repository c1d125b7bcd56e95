import json

import pandas as pd
import pytest

from fairpath.text import FairnessSpec, GenerationSettings, HFGenerator, PoolGenerator, audit_text
from fairpath.text._scorers import VaderScorer

from toy_spec import BIASED, SPEC  # tests/text is on the import path (no __init__.py)


class CountingPoolGenerator(PoolGenerator):
    """Counts the samples it is asked for, to show that stored samples are reused."""

    requested = 0

    def generate_requests(self, requests, settings):
        self.requested += len(requests)
        return super().generate_requests(requests, settings)


def test_audit_recovers_the_controlled_bias_and_reuses_samples(tmp_path):
    generator = CountingPoolGenerator(SPEC, BIASED)
    settings = GenerationSettings(n_samples=200, seed=0)
    store = tmp_path / "samples"
    result = audit_text(SPEC, generator, scorers=["vader"], settings=settings, store=store, quality=False,
                        n_bootstrap=200, progress=False)
    assert generator.requested == 20 * 200 and store.is_dir()
    scorer = VaderScorer()
    vader = result.fairness["vader"]
    assert vader.individual.ci_low <= generator.expected_individual_fairness(scorer) <= vader.individual.ci_high
    assert vader.group.ci_low <= generator.expected_group_fairness(scorer) <= vader.group.ci_high
    assert result.to_frame()["above_noise"].all()
    assert {"model", "prompt", "template_id", "value", "subgroup", "sample_index", "text", "score_vader"} <= set(result.samples.columns)

    rescored = audit_text(SPEC, generator, scorers=["opinion", "textblob"], settings=settings, store=store,
                          quality=False, n_bootstrap=20, progress=False)
    assert generator.requested == 20 * 200  # rescoring never regenerates
    pd.testing.assert_series_equal(rescored.samples["text"], result.samples["text"])
    assert rescored.scorers == ["opinion", "textblob"]


def test_unbiased_audit_stays_within_the_noise_floor():
    result = audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], settings=GenerationSettings(n_samples=200, seed=1),
                        quality=False, n_bootstrap=50, seed=1, progress=False)
    table = result.to_frame()
    assert not table["above_noise"].any()
    assert (table["estimate"] <= table["noise_upper"]).all()


def test_result_exports_and_report(tmp_path):
    result = audit_text(SPEC, PoolGenerator(SPEC, BIASED), scorers=["vader", "opinion"],
                        settings=GenerationSettings(n_samples=30), quality=False, n_bootstrap=20, progress=False)
    frame = result.to_frame()
    assert list(frame["scorer"]) == ["vader", "vader", "opinion", "opinion"]
    payload = json.loads(result.to_json(tmp_path / "results.json"))
    assert payload["n_samples"] == 600 and payload["summary"][0]["metric"] == "individual_fairness"
    assert payload["fairness"]["vader"]["per_pair"][0]["w1"] >= payload["fairness"]["vader"]["per_pair"][-1]["w1"]
    assert "individual" in repr(result) and "vader" in repr(result)
    fig = result.plot("opinion")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()][-1] in {"A", "B"}  # most positive values last
    examples = result.examples()
    assert set(examples["value"]) == {result.fairness["vader"].per_pair.iloc[0]["value_a"],
                                      result.fairness["vader"].per_pair.iloc[0]["value_b"]}
    page = result.write_report(tmp_path / "report.html").read_text()
    for heading in ("Fairness per scorer", "Scorer vader", "Worst pairs", "Example continuations", "noise floor"):
        assert heading in page
    assert page.count("data:image/png;base64") == 4


def test_audit_with_a_local_causal_lm_and_perplexity(tiny_lm_path, tmp_path):
    spec = FairnessSpec.from_dict({"attribute": "country", "values": ["Chile", "Italy"],
                                   "templates": ["{country} is", "People from {country} are"]})
    result = audit_text(spec, HFGenerator(tiny_lm_path), scorers=["vader"], store=tmp_path / "samples",
                        settings=GenerationSettings(n_samples=4, max_new_tokens=5, batch_size=8), quality=False,
                        corpus=["Chile is long and thin.", "The sky is blue."], n_bootstrap=10, progress=False)
    assert len(result.samples) == 16
    perplexity = result.quality["perplexity"]
    assert perplexity["n_texts"] == 2 and perplexity["n_texts_sensitive"] == 1 and perplexity["perplexity"] > 1


@pytest.mark.model
def test_audit_quality_with_minilm():
    result = audit_text(SPEC, PoolGenerator(SPEC, BIASED), scorers=["vader"], settings=GenerationSettings(n_samples=10),
                        n_bootstrap=10, progress=False)
    assert 0 <= result.quality["ss_templates"] <= 1 and "ssc" not in result.quality  # S.S.c needs a corpus
    assert set(result.quality["ss_templates_per_value"]) == {"A", "B", "C", "D"}
    assert -1 <= result.quality["mean_prompt_similarity"] <= 1
