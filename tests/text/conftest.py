"""Shared fixtures for the text tests: tiny randomly initialised models built once per session."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from tiny_models import make_tiny_causal_lm, make_tiny_sequence_classifier  # noqa: E402


@pytest.fixture(scope="session")
def tiny_lm_path(tmp_path_factory):
    """A tiny Llama causal LM with SmolLM2's real tokenizer (text round-trips as with the real model)."""
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-lm"), seed=0)


@pytest.fixture(scope="session")
def tiny_byte_lm_path(tmp_path_factory):
    """A tiny Llama causal LM with a 259-token byte-level tokenizer (no GGUF needed)."""
    return make_tiny_causal_lm(tmp_path_factory.mktemp("tiny-byte-lm"), seed=1, vocab_from=None)


@pytest.fixture(scope="session")
def tiny_classifier_path(tmp_path_factory):
    """A tiny BERT sequence classifier with labels negative/positive."""
    return make_tiny_sequence_classifier(tmp_path_factory.mktemp("tiny-classifier"), num_labels=2)


@pytest.fixture(scope="session")
def transformers_server(tmp_path_factory):
    """`transformers serve` of a tiny sampling Llama on 127.0.0.1, for the endpoint tests."""
    from tiny_models import TransformersServer, make_tiny_causal_lm, sampling_generation_config

    for module in ("fastapi", "uvicorn"):
        pytest.importorskip(module, reason="transformers serve needs the 'serve' extra: pip install 'fairpath[serve]'")
    folder = tmp_path_factory.mktemp("served-lm")
    model = sampling_generation_config(make_tiny_causal_lm(folder / "model", seed=0))
    with TransformersServer(model, folder / "serve.log") as server:
        yield server
