"""Tiny randomly initialised Hugging Face models for fast tests (seconds, not minutes), and a local
``transformers serve`` for the endpoint tests and ``benchmarks/bench_endpoint.py``; not part of the package.

Public contract
---------------
``make_tiny_causal_lm(path, seed=0, vocab_from="default", num_layers=2, hidden_size=32) -> Path``
    Writes a Llama causal LM folder (safetensors + config + generation config + tokenizer files) to
    ``path`` and returns ``path``. ``load_causal_lm(path)`` and ``AutoModelForCausalLM`` load it.
    ``vocab_from="default"`` reuses SmolLM2's real tokenizer (49,152 tokens; text round-trips as with
    the real model; the first call extracts it from the GGUF, about 8 s, then it is cached);
    ``vocab_from=None`` uses a self-contained byte-level tokenizer (259 tokens, no GGUF needed);
    a folder path reuses that folder's tokenizer. The same seed gives the same weights.
``make_tiny_sequence_classifier(path, num_labels=2, seed=0, vocab_from="default", labels=None) -> Path``
    Writes a tiny BERT sequence-classification folder with a tokenizer, loadable with
    ``AutoModelForSequenceClassification`` / ``AutoTokenizer``. ``labels`` names the classes
    (default ``negative, positive`` for 2 labels, ``negative, neutral, positive`` for 3, else
    ``LABEL_i``).
``sampling_generation_config(path)``
    Makes the model folder's generation config sample (``do_sample=True``, as chat models ship), which
    servers such as ``transformers serve`` read: without it they decode greedily.
``TransformersServer(model_folder, log_path, threads=1)``
    ``transformers serve`` (the ``serve`` extra) of a model folder on 127.0.0.1 at a free port, started
    on creation and ready to answer; ``base_url`` (``http://127.0.0.1:PORT/v1``), ``model`` (the name
    to request) and ``stop()``. Also a context manager. Used by the endpoint tests and benchmarks.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Self

import torch

from fairpath._exceptions import FairpathInputError

_BYTE_SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def _byte_level_tokenizer():
    """A tokenizer with one token per byte (plus specials): any text round-trips exactly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate(_BYTE_SPECIALS)}
    vocab.update({char: len(_BYTE_SPECIALS) + i for i, char in enumerate(sorted(alphabet))})
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
    )


def _tokenizer(vocab_from):
    from transformers import AutoTokenizer

    from fairpath.text._models import DEFAULT_MODEL, default_tokenizer_dir

    if vocab_from is None:
        return _byte_level_tokenizer()
    if str(vocab_from) == DEFAULT_MODEL:
        return AutoTokenizer.from_pretrained(default_tokenizer_dir())
    folder = Path(vocab_from)
    if not folder.is_dir():
        raise FairpathInputError(f"vocab_from {str(folder)!r} is not a folder with tokenizer files; pass 'default' or None")
    return AutoTokenizer.from_pretrained(folder)


def _special_ids(tokenizer) -> dict:
    eos = tokenizer.eos_token_id
    return {
        "eos_token_id": eos,
        "bos_token_id": tokenizer.bos_token_id if tokenizer.bos_token_id is not None else eos,
        "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos,
    }


def make_tiny_causal_lm(
    path: str | os.PathLike,
    seed: int = 0,
    vocab_from: str | os.PathLike | None = "default",
    num_layers: int = 2,
    hidden_size: int = 32,
) -> Path:
    """Write a tiny random Llama causal LM with a real tokenizer to ``path``; return the path."""
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    path = Path(path)
    tokenizer = _tokenizer(vocab_from)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    ids = _special_ids(tokenizer)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        architectures=["LlamaForCausalLM"],
        **ids,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = GenerationConfig(**ids)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _default_labels(num_labels: int) -> list[str]:
    named = {2: ["negative", "positive"], 3: ["negative", "neutral", "positive"]}
    return named.get(num_labels, [f"LABEL_{i}" for i in range(num_labels)])


def make_tiny_sequence_classifier(
    path: str | os.PathLike,
    num_labels: int = 2,
    seed: int = 0,
    vocab_from: str | os.PathLike | None = "default",
    labels: list[str] | None = None,
) -> Path:
    """Write a tiny random BERT sequence classifier with a tokenizer to ``path``; return the path."""
    from transformers import BertConfig, BertForSequenceClassification

    if num_labels < 1:
        raise FairpathInputError(f"num_labels must be at least 1, got {num_labels}")
    labels = list(labels) if labels is not None else _default_labels(num_labels)
    if len(labels) != num_labels:
        raise FairpathInputError(f"labels {labels} must name exactly num_labels={num_labels} classes")
    path = Path(path)
    tokenizer = _tokenizer(vocab_from)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=num_labels,
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
        architectures=["BertForSequenceClassification"],
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def sampling_generation_config(path: str | os.PathLike) -> Path:
    """Set ``do_sample=True`` in the folder's generation config; return the folder."""
    path = Path(path)
    config_file = path / "generation_config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    config_file.write_text(json.dumps({**config, "do_sample": True}))
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TransformersServer:
    """``transformers serve MODEL`` on 127.0.0.1 at a free port, for tests and benchmarks."""

    def __init__(self, model: str | os.PathLike, log: str | os.PathLike, threads: int = 1):
        self.model, self.port, self.log = str(model), _free_port(), Path(log)
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        command = [str(Path(sys.executable).with_name("transformers")), "serve", self.model,
                   "--host", "127.0.0.1", "--port", str(self.port), "--device", "cpu"]
        # Few torch threads: on a loaded machine more threads per decode step are much slower, not faster.
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        self._log_file = open(self.log, "w")  # noqa: SIM115 - open as long as the server runs; closed by stop()
        self.process = subprocess.Popen(command, stdout=self._log_file, stderr=subprocess.STDOUT, env=env)
        self._wait_until_ready()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _wait_until_ready(self) -> None:
        while True:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"transformers serve exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:  # not listening yet
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log_file.close()
