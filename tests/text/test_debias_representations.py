"""The sentence representation h̄ against a manual computation on a tiny random Llama."""

import pytest
import torch
import torch.nn.functional as F

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm
from fairpath.text.debias import Representation, pool_hidden_states, sentence_representations

TEXTS = ["The baker said hello.", "A much longer sentence about the accountant and the weather today."]


def _hidden(model, tokenizer, text):
    with torch.no_grad():
        return model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states


@pytest.fixture(scope="module")
def tiny(tiny_lm_path):
    return load_causal_lm(tiny_lm_path)


def test_default_normalises_layer_minus_two_by_the_final_norm_and_skips_the_first_token(tiny):
    model, tokenizer = tiny
    batched = sentence_representations(model, tokenizer, TEXTS)  # padded together
    for text, row in zip(TEXTS, batched):
        hidden = _hidden(model, tokenizer, text)
        with torch.no_grad():
            expected = ((model.model.norm(hidden[-2]) + hidden[-1]) / 2)[0, 1:].mean(dim=0)
        assert torch.allclose(row, expected, atol=1e-5)  # padding does not leak into the mean


@pytest.mark.parametrize("normalisation", ["l2", "none"])
def test_other_normalisations_and_pooling_over_every_token(tiny, normalisation):
    model, tokenizer = tiny
    representation = Representation(layers=(-3, -1), normalisation=normalisation, skip_first_token=False)
    rows = sentence_representations(model, tokenizer, TEXTS, representation=representation)
    for text, row in zip(TEXTS, rows):
        hidden = _hidden(model, tokenizer, text)
        layers = [hidden[-3], hidden[-1]]
        if normalisation == "l2":
            layers = [F.normalize(h, dim=-1) for h in layers]
        assert torch.allclose(row, ((layers[0] + layers[1]) / 2)[0].mean(dim=0), atol=1e-5)


def test_a_one_token_sentence_keeps_its_only_token_and_per_token_output_keeps_positions(tiny):
    model, tokenizer = tiny
    ids = tokenizer(["Hello", TEXTS[0]], return_tensors="pt", padding=True, padding_side="right")
    assert ids["attention_mask"][0].sum() == 1
    with torch.no_grad():
        outputs = model(**ids, output_hidden_states=True)
    pooled = pool_hidden_states(outputs, ids["attention_mask"], model)
    per_token = pool_hidden_states(outputs, ids["attention_mask"], model, pooling="none")
    assert per_token.shape == (2, ids["input_ids"].shape[1], model.config.hidden_size)
    assert torch.allclose(pooled[0], per_token[0, 0], atol=1e-6)


def test_bad_representation_settings_are_refused(tiny):
    with pytest.raises(FairpathInputError, match="normalisation 'layer' is unknown; use one of final_norm, l2, none"):
        Representation(normalisation="layer")
    model, tokenizer = tiny
    with pytest.raises(FairpathInputError, match=r"returned \d+ hidden states .* but h̄ reads layers \[-40\]"):
        sentence_representations(model, tokenizer, TEXTS, representation=Representation(layers=(-40,)))
