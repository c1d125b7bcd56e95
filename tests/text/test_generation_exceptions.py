"""Bad generation settings and prompts raise FairpathInputError with a precise message."""

import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text import GenerationSettings, HFGenerator


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"temperature": 0.0}, "temperature must be > 0 when sampling"),
        ({"temperature": -1.0}, "temperature must be > 0 when sampling"),
        ({"top_k": -3}, "top_k must be an integer ≥ 0, got -3"),
        ({"top_k": 2.5}, r"top_k must be an integer, got 2\.5 \(float\)"),
        ({"top_p": 0.0}, r"top_p must lie in \(0, 1\], got 0\.0"),
        ({"top_p": 1.5}, r"top_p must lie in \(0, 1\], got 1\.5"),
        ({"max_new_tokens": 0}, "max_new_tokens must be an integer ≥ 1, got 0"),
        ({"n_samples": 0}, "n_samples must be an integer ≥ 1, got 0"),
        ({"n_samples": 2.0}, r"n_samples must be an integer, got 2\.0 \(float\); pass 2"),
        ({"n_samples": 100_001}, r"n_samples must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
        ({"batch_size": 0}, "batch_size must be an integer ≥ 1, got 0"),
        ({"seed": -1}, "seed must be an integer ≥ 0, got -1"),
        ({"seed": True}, r"seed must be an integer, got True \(bool\)"),
        ({"seed": None}, "seed must be a non-negative integer, got None; fairpath results are always seeded"),
        ({"temperature": "hot"}, r"temperature must be a number, got 'hot' \(str\)"),
        ({"n_samples": -5}, "n_samples must be an integer ≥ 1, got -5"),
        ({"do_sample": "yes"}, r"do_sample must be true or false, got 'yes' \(str\)"),
    ],
)
def test_bad_settings(kwargs, message):
    with pytest.raises(FairpathInputError, match=message):
        GenerationSettings(**kwargs)


def test_settings_are_keyword_only():
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        GenerationSettings(0.7)


def test_greedy_accepts_any_temperature_and_top_k_zero_means_none():
    assert GenerationSettings(do_sample=False, temperature=0.0).temperature == 0.0
    assert GenerationSettings(top_k=0).top_k is None


def test_settings_hash_ignores_only_n_samples_and_batch_size():
    base = GenerationSettings()
    assert GenerationSettings(n_samples=999, batch_size=3).settings_hash == base.settings_hash
    for change in ({"temperature": 0.7}, {"top_k": 5}, {"top_p": 0.9}, {"max_new_tokens": 30}, {"seed": 1}):
        assert GenerationSettings(**change).settings_hash != base.settings_hash


@pytest.fixture(scope="module")
def generator(tiny_byte_lm_path):
    return HFGenerator(tiny_byte_lm_path)


def test_single_string_prompt(generator):
    with pytest.raises(FairpathInputError, match="single string; wrap it in a list"):
        generator.generate("Iceland is", n_samples=1)


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_prompt(generator, bad):
    with pytest.raises(FairpathInputError, match="every prompt must be a non-empty string"):
        generator.generate(["Iceland is", bad], n_samples=1)


def test_loaded_model_without_tokenizer(generator):
    with pytest.raises(FairpathInputError, match="without its tokenizer"):
        HFGenerator(generator.model)


def test_bad_model_path(tmp_path):
    with pytest.raises(FairpathInputError, match="has no config.json"):
        HFGenerator(tmp_path)


@pytest.mark.parametrize("bad, message", [(0, "num_threads must be an integer ≥ 1, got 0"), (-2, "num_threads must be an integer ≥ 1, got -2"),
                                          ("many", "num_threads must be 'auto' or an integer ≥ 1, got 'many'"),
                                          (1.5, r"num_threads must be an integer, got 1\.5 \(float\)"),
                                          (True, r"num_threads must be an integer, got True \(bool\)")])
def test_bad_thread_count(tiny_byte_lm_path, bad, message):
    with pytest.raises(FairpathInputError, match=message):
        HFGenerator(tiny_byte_lm_path, num_threads=bad)


def test_unknown_dtype(tiny_lm_path):
    with pytest.raises(FairpathInputError, match="unknown dtype 'float8'; use one of auto, bfloat16, float32"):
        HFGenerator(tiny_lm_path, dtype="float8")


@pytest.mark.parametrize("bad", [0, -1, "many", 1.5])
def test_bad_worker_count(tiny_byte_lm_path, bad):
    with pytest.raises(FairpathInputError, match="workers must be"):
        HFGenerator(tiny_byte_lm_path, workers=bad)


def test_workers_need_a_folder(generator):
    with pytest.raises(FairpathInputError, match="workers=2 needs the model's folder .* or workers=1"):
        HFGenerator(generator.model, tokenizer=generator.tokenizer, workers=2)
