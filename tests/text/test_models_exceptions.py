"""Model paths that are not causal LMs are rejected with the path in the message."""

import json

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm, model_id


def test_missing_folder(tmp_path):
    with pytest.raises(FairpathInputError, match="nowhere.*is not a folder"):
        load_causal_lm(tmp_path / "nowhere")


def test_folder_without_config(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0")
    with pytest.raises(FairpathInputError, match=f"{tmp_path}.*has no config.json"):
        load_causal_lm(tmp_path)


def test_sequence_classifier_is_not_a_causal_lm(tiny_classifier_path):
    with pytest.raises(FairpathInputError, match="BertForSequenceClassification, not a causal language model"):
        load_causal_lm(tiny_classifier_path)
    with pytest.raises(FairpathInputError, match=str(tiny_classifier_path)):
        model_id(tiny_classifier_path)


def test_config_without_architectures_checked_by_model_type(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "vit"}))
    with pytest.raises(FairpathInputError, match="model_type 'vit', not a causal language model"):
        load_causal_lm(tmp_path)


def test_broken_weights_named(tmp_path, tiny_byte_lm_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((tiny_byte_lm_path / "config.json").read_text())
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(FairpathInputError, match="could not load a causal LM from .*broken"):
        load_causal_lm(broken)
