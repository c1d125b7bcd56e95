"""The sentence representation h against a manual computation on a tiny random Llama."""

import pytest
import torch
import torch.nn.functional as F

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm
from fairpath.text.debias import Representation, make_pairs, sentence_representations
from fairpath.text._spec import FairnessSpec

TEXTS = ["The baker said hello.", "A much longer sentence about the accountant and the weather today."]


def _hidden(model, tokenizer, text):
    with torch.no_grad():
        return model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states


@pytest.fixture(scope="module")
def tiny(tiny_lm_path):
    return load_causal_lm(tiny_lm_path)


def test_default_reads_the_last_token_of_the_first_mention_averaging_the_normed_last_two_layers(tiny):
    model, tokenizer = tiny
    pairs, _ = make_pairs(TEXTS + ["Yesterday, an accountant met the baker."], FairnessSpec.builtin("occupation"), seed=0)
    texts = [t for p in pairs for t in (p.text, p.counterfactual)]
    ends = [e for p in pairs for e in (p.end, p.counterfactual_end)]
    batched = sentence_representations(model, tokenizer, texts, mention_ends=ends)  # padded together
    for text, end, row in zip(texts, ends, batched):
        ids = tokenizer(text)["input_ids"]
        # by hand: the shortest token prefix that decodes to the text through its first value
        index = next(i for i in range(len(ids)) if tokenizer.decode(ids[: i + 1]) == text[:end])
        hidden = _hidden(model, tokenizer, text)
        with torch.no_grad():
            expected = (model.model.norm(hidden[-2][0, index]) + hidden[-1][0, index]) / 2
        assert torch.allclose(row, expected, atol=1e-6)
    assert texts[0] == "The baker said hello." and ends[0] == len("The baker")


def test_mean_pooling_normalises_layer_minus_two_by_the_final_norm_and_skips_the_first_token(tiny):
    model, tokenizer = tiny
    batched = sentence_representations(model, tokenizer, TEXTS, representation=Representation(pooling="mean"))
    for text, row in zip(TEXTS, batched):
        hidden = _hidden(model, tokenizer, text)
        with torch.no_grad():
            expected = ((model.model.norm(hidden[-2]) + hidden[-1]) / 2)[0, 1:].mean(dim=0)
        assert torch.allclose(row, expected, atol=1e-5)  # padding does not leak into the mean


@pytest.mark.parametrize("normalisation", ["l2", "none"])
def test_other_normalisations_and_pooling_over_every_token(tiny, normalisation):
    model, tokenizer = tiny
    representation = Representation(layers=(-3, -1), normalisation=normalisation, pooling="mean", skip_first_token=False)
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
    pooled = Representation(pooling="mean").pool(outputs, ids["attention_mask"], model)
    per_token = Representation(pooling="position").pool(outputs, ids["attention_mask"], model)
    assert per_token.shape == (2, ids["input_ids"].shape[1], model.config.hidden_size)
    assert torch.allclose(pooled[0], per_token[0, 0], atol=1e-6)


def test_bad_representation_settings_are_refused(tiny):
    with pytest.raises(FairpathInputError, match="unknown normalisation 'layer'; use one of final_norm, l2, none"):
        Representation(normalisation="layer")
    with pytest.raises(FairpathInputError, match="unknown pooling 'max'; use one of sensitive, mean, position"):
        Representation(pooling="max")
    model, tokenizer = tiny
    with pytest.raises(FairpathInputError, match=r"returned \d+ hidden states .* but h reads layers \[-40\]"):
        sentence_representations(model, tokenizer, TEXTS, representation=Representation(layers=(-40,), pooling="mean"))
    with pytest.raises(FairpathInputError, match="pooling 'sensitive' reads each text at its sensitive mention, but no "
                                                 "mention ends were given for 2 texts; give mention_ends"):
        sentence_representations(model, tokenizer, TEXTS)
    with pytest.raises(FairpathInputError, match=r"1 texts have their sensitive mention beyond max_length=3 tokens .*"
                                                 r"ends at character 24\); raise max_length"):
        sentence_representations(model, tokenizer, ["Yesterday, an accountant met the baker."], max_length=3,
                                 mention_ends=[24])
