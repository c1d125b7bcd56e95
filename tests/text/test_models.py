"""Loading causal LMs, model ids, and the tiny test-model factories."""

import shutil

import pytest
import torch

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm, load_tokenizer, model_id
from tiny_models import make_tiny_causal_lm, make_tiny_sequence_classifier


def test_tiny_lm_loads_ready_for_batched_generation(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert not model.training
    assert model.dtype == torch.float32
    assert tokenizer.padding_side == "left"
    assert tokenizer.pad_token_id is not None
    assert len(tokenizer) == model.config.vocab_size == 49152  # SmolLM2's tokenizer
    text = "I am from Iceland. Starting next week, I will be"
    assert tokenizer.decode(tokenizer(text)["input_ids"]) == text


def test_byte_level_tiny_lm_round_trips_any_text(tiny_byte_lm_path):
    tokenizer = load_tokenizer(tiny_byte_lm_path)
    text = "Ça va? Ünïcode — 東京 ✓"
    ids = tokenizer(text)["input_ids"]
    assert len(tokenizer) == 259
    assert len(ids) == len(text.encode("utf-8"))  # one token per byte
    assert tokenizer.decode(ids) == text


def test_same_seed_same_weights_and_id(tmp_path, tiny_byte_lm_path):
    again = make_tiny_causal_lm(tmp_path / "again", seed=1, vocab_from=None)
    other = make_tiny_causal_lm(tmp_path / "other", seed=2, vocab_from=None)
    first, _ = load_causal_lm(tiny_byte_lm_path)
    second, _ = load_causal_lm(again)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items()):
        assert torch.equal(a, b), name
    # The id names the folder and hashes its content: equal weights share the hash, other weights do not.
    assert model_id(again).split("@")[1] == model_id(tiny_byte_lm_path).split("@")[1]
    assert model_id(other).split("@")[1] != model_id(again).split("@")[1]
    assert model_id(again) == model_id(again)


def test_model_id_follows_content_not_location(tmp_path, tiny_byte_lm_path):
    moved = tmp_path / "tiny-byte-lm"
    shutil.copytree(tiny_byte_lm_path, moved)
    assert model_id(moved) == f"tiny-byte-lm@{model_id(tiny_byte_lm_path).split('@')[1]}"


def test_tiny_sequence_classifier(tiny_classifier_path, tmp_path):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_path)
    tokenizer = AutoTokenizer.from_pretrained(tiny_classifier_path)
    batch = tokenizer(["a good day", "a terrible, awful day indeed"], return_tensors="pt", padding=True)
    assert model(**batch).logits.shape == (2, 2)
    assert model.config.id2label == {0: "negative", 1: "positive"}
    three = make_tiny_sequence_classifier(tmp_path / "three", num_labels=3, vocab_from=None)
    assert AutoModelForSequenceClassification.from_pretrained(three).config.id2label[1] == "neutral"


def test_classifier_labels_must_match_count(tmp_path):
    with pytest.raises(FairpathInputError, match="num_labels=3"):
        make_tiny_sequence_classifier(tmp_path / "bad", num_labels=3, labels=["a", "b"], vocab_from=None)
