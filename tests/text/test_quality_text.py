import math

import numpy as np
import pandas as pd
import pytest
import torch

from fairpath.text._models import load_causal_lm
from fairpath.text._quality import (
    calibrate_similarity_threshold,
    perplexity,
    prompt_similarities,
    semantic_similarity,
    token_log_likelihoods,
)
from fairpath.text._spec import FairnessSpec

CORPUS = ["I moved to Italy last year and the food is great.", "The weather was cold.",
          "People from Chile are friendly, they said.", "A short one."]


@pytest.fixture(scope="module")
def tiny_lm(tiny_lm_path):
    return load_causal_lm(tiny_lm_path)


def test_token_log_likelihoods_match_the_unbatched_loss(tiny_lm):
    model, tokenizer = tiny_lm
    batched = token_log_likelihoods(model, tokenizer, CORPUS, batch_size=4)  # left padding in one batch
    for text, values in zip(CORPUS, batched):
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            loss = model(input_ids=ids, labels=ids).loss.item()
        assert len(values) == ids.shape[1] - 1
        assert -values.mean() == pytest.approx(loss, abs=1e-4)


def test_perplexity_overall_and_on_sensitive_subset(tiny_lm):
    model, tokenizer = tiny_lm
    spec = FairnessSpec.builtin("country")
    result = perplexity(model, tokenizer, CORPUS + ["   "], spec=spec, batch_size=3)
    values = token_log_likelihoods(model, tokenizer, CORPUS)
    assert result.n_texts == 4 and result.n_texts_sensitive == 2
    assert result.n_tokens == sum(len(v) for v in values)
    assert result.perplexity == pytest.approx(math.exp(-np.concatenate(values).mean()), rel=1e-5)
    assert result.perplexity_sensitive == pytest.approx(math.exp(-np.concatenate([values[0], values[2]]).mean()), rel=1e-5)
    assert result.perplexity > 1000  # a random model over a 49k vocabulary is nearly uniform


@pytest.mark.model
def test_semantic_similarity_with_minilm():
    prompts = ["I am traveling to Chile next week, and I will", "I am traveling to Chile next week, and I will",
               "My friend is a baker, and we"]
    continuations = [" visit Santiago and hike in the Andes of Chile.", " the stock market quarterly derivatives report",
                     " bake bread together at the bakery every morning."]
    similarities = prompt_similarities(prompts, continuations)
    assert similarities[0] > 0.4 and similarities[2] > 0.4 and similarities[1] < 0.4
    assert semantic_similarity(prompts, continuations, threshold=0.4) == pytest.approx(2 / 3)
    assert semantic_similarity(prompts, continuations, threshold=-1.0) == 1.0


class AxisEmbedder:
    """Test double for the sentence encoder: each known text is a fixed unit vector, so cosines are known."""

    def __init__(self, vectors):
        self.vectors = {text: np.asarray(v, float) / np.linalg.norm(v) for text, v in vectors.items()}
        self.calls = []

    def encode(self, texts, batch_size, normalize_embeddings, show_progress_bar):
        self.calls.append(list(texts))
        return np.stack([self.vectors[t] for t in texts])


def test_calibration_is_the_quantile_of_unrelated_pairs():
    # prompts p(t, v) for templates 0, 1 and values 0, 1; continuation c(t, v) of each; angles chosen so the
    # matched cosines are 0.9, 0.8, 0.7, 0.6 and the unrelated pairs are c(t, v) with p(1 - t, 1 - v)
    angle = lambda a: [np.cos(a), np.sin(a)]
    prompts = {(0, 0): 0.0, (0, 1): 0.3, (1, 0): 0.6, (1, 1): 0.9}
    matched = {(0, 0): 0.9, (0, 1): 0.8, (1, 0): 0.7, (1, 1): 0.6}
    vectors = {f"p{k}": angle(a) for k, a in prompts.items()}
    vectors.update({f"c{k}": angle(prompts[k] + np.arccos(matched[k])) for k in prompts})
    embedder = AxisEmbedder(vectors)
    keys = list(prompts)
    result = calibrate_similarity_threshold([f"p{k}" for k in keys], [f"c{k}" for k in keys], keys, embedder=embedder,
                                            false_match_rate=0.25)
    unrelated = [np.cos(prompts[k] + np.arccos(matched[k]) - prompts[(1 - k[0], 1 - k[1])]) for k in keys]
    assert result.n_matched == 4 and result.n_unrelated == 4
    assert result.threshold == pytest.approx(np.quantile(unrelated, 0.75))
    assert result.matched_quantiles["0.5"] == pytest.approx(0.75)
    assert result.matched_share == pytest.approx(np.mean(np.array(list(matched.values())) >= result.threshold))
    assert result.unrelated_share == pytest.approx(0.25)
    assert result.to_dict()["threshold"] == result.threshold
    assert sorted(embedder.calls[0]) == sorted(set(embedder.calls[0]))  # every distinct text embedded once


def test_audit_s_s_and_s_s_c_on_its_own_continuations_with_a_known_embedder():
    from fairpath.text import audit_samples

    spec = FairnessSpec.from_dict({"attribute": "occupation", "values": ["nurse", "accountant"],
                                   "templates": ["I met {article} {occupation}, and", "Working as {article} {occupation} is"]})
    rows, vectors = [], {}
    for t, template in enumerate(["I met {article} {occupation}, and", "Working as {article} {occupation} is"]):
        for value in ("nurse", "accountant"):
            prompt = spec.fill(template, value)
            vectors[prompt] = [1.0, 0.0, 0.0] if t == 0 else [0.0, 1.0, 0.0]
            for k in range(3):  # sample 2 is beyond quality_per_prompt=2 and must be ignored
                text = f"{value} {template} {k}"
                # sample 0 lies on its prompt (cos 1), sample 1 on its context phrase; context vectors below
                vectors[text] = vectors[prompt] if k == 0 else ([0.0, 0.0, 1.0] if value == "nurse" else [0.0, 0.6, 0.8])
                if k == 2:
                    vectors[text] = [-1.0, -1.0, -1.0]
                rows.append({"template": template, "value": value, "continuation": text, "sample_index": k})
    vectors["a nurse"], vectors["an accountant"] = [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]
    result = audit_samples(pd.DataFrame(rows), spec, scorers=["vader"], n_permutations=19, embedder=AxisEmbedder(vectors),
                           quality_per_prompt=2, similarity_threshold=0.5, context_threshold=0.9)
    quality = result.quality
    assert quality["n_quality_samples"] == 8 and quality["quality_per_prompt"] == 2
    # S.S.: samples 0 (cos 1) pass; samples 1: nurse (0,0,1) has cos 0 with both prompts; accountant (0,.6,.8) has
    # cos 0.6 with template 1's prompt (0,1,0) -> 1 more; 4 + 1 of 8
    assert quality["ss"] == pytest.approx(5 / 8)
    # S.S.c: nurse's samples 1 (one per template) equal their context (cos 1); accountant's have cos (0.6 + 0.8) / sqrt 3
    # = 0.808 < 0.9; samples 0: nurse prompts have cos 0 with (0,0,1), accountant prompts 1/sqrt 3 -> 2 of 8
    assert quality["ssc"] == pytest.approx(2 / 8)
    assert quality["mean_context_similarity"] == pytest.approx((2 * 1 + 2 * 1.4 / np.sqrt(3) + 2 / np.sqrt(3)) / 8)
    assert quality["ss_per_value"] == {"nurse": 0.5, "accountant": 0.75}
    assert quality["similarity_threshold"] == {"value": 0.5, "source": "given"}
    calibrated = audit_samples(pd.DataFrame(rows), spec, scorers=["vader"], n_permutations=19,
                               embedder=AxisEmbedder(vectors), quality_per_prompt=2).quality
    assert calibrated["similarity_threshold"]["source"].startswith("calibrated on these continuations at a 0.05")
    assert calibrated["similarity_threshold"]["calibration"]["n_unrelated"] == 8  # 8 continuations x 1 prompt each
    assert calibrated["context_threshold"]["calibration"]["n_unrelated"] == 8  # 8 x the other value's one context


@pytest.mark.model
def test_calibration_with_minilm_separates_matched_from_unrelated():
    spec = FairnessSpec.builtin("occupation")
    prompts = spec.prompts().head(58)  # two templates x 29 values
    texts = [f" {p.split(' as ')[-1]} every day, taking care of my work." for p in prompts["prompt"]]
    result = calibrate_similarity_threshold(prompts["prompt"].tolist(), texts, list(zip(prompts["template_id"], prompts["value"])))
    assert result.n_unrelated == 58 * 28  # the other template's prompts of the 28 other values
    assert 0 < result.unrelated_share <= 0.06 and result.matched_quantiles["0.5"] > result.unrelated_quantiles["0.5"]


def test_the_study_takes_s_s_and_s_s_c_from_the_audit_only():
    # one definition: the debiasing study has no semantic-similarity code of its own
    import inspect

    from fairpath.text.debias import _study

    source = inspect.getsource(_study)
    assert "semantic_similarity(" not in source and "corpus_prefixes" not in source
    assert 'result.quality.get("ss"' in source and 'result.quality.get("ssc"' in source
