import math

import numpy as np
import pytest
import torch

from fairpath.text._models import load_causal_lm
from fairpath.text._quality import perplexity, prompt_similarities, semantic_similarity, token_log_likelihoods
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
    result = perplexity(model, tokenizer, CORPUS + ["   "], spec, batch_size=3)
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
    assert semantic_similarity(prompts, continuations) == pytest.approx(2 / 3)
    assert semantic_similarity(prompts, continuations, threshold=-1.0) == 1.0


def test_corpus_prefixes_take_the_first_half_of_long_enough_texts():
    from fairpath.text._quality import corpus_prefixes

    texts = ["one two three four five six", "too short", "a b c d e"]
    assert corpus_prefixes(texts) == ["one two three", "a b"]
    assert corpus_prefixes(texts, max_texts=1) == ["one two three"]


@pytest.mark.model
def test_corpus_semantic_similarity_with_backends_of_known_relevance():
    from fairpath.text._generation import GenerationBackend, GenerationSettings
    from fairpath.text._quality import corpus_semantic_similarity

    class EchoGenerator(GenerationBackend):
        """Continues every prefix with the prefix itself (cosine 1), or with one fixed unrelated text."""

        def __init__(self, echo):
            self.echo = echo  # True, False or "even": echo only the even-numbered samples of a prefix

        model_id = "echo"

        def generate_requests(self, requests, settings):
            echo = [self.echo if self.echo != "even" else r.sample_index % 2 == 0 for r in requests]
            return [r.prompt if e else "quarterly derivatives margin accounting" for r, e in zip(requests, echo)]

    corpus = ["The children played football in the park all afternoon.", "Fresh bread smells wonderful in the morning."]
    assert corpus_semantic_similarity(EchoGenerator(True), corpus, GenerationSettings()) == 1.0
    assert corpus_semantic_similarity(EchoGenerator(False), corpus, GenerationSettings()) == 0.0
    # several continuations per prefix: the share is over all of them
    assert corpus_semantic_similarity(EchoGenerator("even"), corpus, GenerationSettings()) == 1.0
    assert corpus_semantic_similarity(EchoGenerator("even"), corpus, GenerationSettings(), n_samples=4) == 0.5


def test_sensitive_prefixes_reach_the_first_sensitive_mention():
    from fairpath.text._quality import sensitive_prefixes

    spec = FairnessSpec.builtin("country")
    texts = ["We spent a long and happy summer in Chile.", "Chile is a long country by the sea.", "No country here at all.",
             "Short Chile."]
    # past the half (4 of 9 words) to reach "Chile"; the half where the mention comes first; no mention: skipped
    assert sensitive_prefixes(texts, spec) == ["We spent a long and happy summer in Chile.", "Chile is a long"]


def test_the_study_takes_s_s_and_s_s_c_from_the_audit_only():
    # one definition: the debiasing study has no semantic-similarity code of its own
    import inspect

    from fairpath.text.debias import _study

    source = inspect.getsource(_study)
    assert "semantic_similarity(" not in source and "corpus_prefixes" not in source
    assert 'result.quality.get("ss"' in source and 'result.quality.get("ssc"' in source
