"""HFGenerator on tiny random models: agreement with Hugging Face generate, reproducibility, EOS, sampling."""

import numpy as np
import pytest
import torch

from fairpath.text._generation import (
    GenerationSettings,
    HFGenerator,
    SampleRequest,
    _OwnLoad,
    _pick_tokens,
    sample_uniforms,
)

PROMPTS = ["I am from Syria. Starting next week, I will be", "Iceland is", "People from Chile are very"]


@pytest.fixture(scope="module")
def generator(tiny_lm_path):
    return HFGenerator(tiny_lm_path)


def _hf_greedy(generator, prompt, max_new_tokens):
    encoded = generator.tokenizer(prompt, return_tensors="pt")
    out = generator.model.generate(
        **encoded, do_sample=False, max_new_tokens=max_new_tokens, pad_token_id=generator.tokenizer.pad_token_id
    )
    return out[0, encoded["input_ids"].shape[1] :].tolist()


def _text_before_eos(generator, tokens):
    kept = []
    for token in tokens:
        if token in generator.eos_token_ids:
            break
        kept.append(token)
    return generator.tokenizer.decode(kept, skip_special_tokens=True)


def test_greedy_matches_hf_generate_across_prompt_lengths(generator):
    # Prompts of different lengths share a batch (left padding, per-row positions); each must still
    # continue exactly as Hugging Face's own generate does with the prompt alone.
    settings = GenerationSettings(do_sample=False, max_new_tokens=8, n_samples=2, batch_size=6)
    ours = generator.generate(PROMPTS, settings=settings)
    for prompt, texts in zip(PROMPTS, ours):
        assert texts[0] == texts[1] == _text_before_eos(generator, _hf_greedy(generator, prompt, 8))


def test_shapes_and_token_count(generator):
    before = generator.tokens_generated
    texts = generator.generate(PROMPTS[:2], n_samples=3, settings=GenerationSettings(max_new_tokens=5, batch_size=4))
    assert [len(t) for t in texts] == [3, 3]
    assert all(isinstance(t, str) for row in texts for t in row)
    assert 6 <= generator.tokens_generated - before <= 30


def test_same_seed_same_samples_whatever_the_batching(generator):
    base = GenerationSettings(max_new_tokens=6, n_samples=5, batch_size=16, seed=7)
    first = generator.generate(PROMPTS, settings=base)
    assert generator.generate(PROMPTS, settings=base) == first
    assert generator.generate(PROMPTS, settings=GenerationSettings(max_new_tokens=6, n_samples=5, batch_size=3, seed=7)) == first
    # Sample i does not depend on how many samples are drawn, nor on which other prompts come along.
    assert generator.generate(PROMPTS[1:2], n_samples=2, settings=base) == [first[1][:2]]
    # The five samples of a prompt differ from each other, and another seed gives other samples.
    assert len(set(first[0])) == 5
    assert generator.generate(PROMPTS, settings=GenerationSettings(max_new_tokens=6, n_samples=5, seed=8)) != first


def test_requests_in_any_order_give_the_same_texts(generator):
    settings = GenerationSettings(max_new_tokens=4, seed=3, batch_size=8)
    requests = [SampleRequest(PROMPTS[0], 2), SampleRequest(PROMPTS[2], 0), SampleRequest(PROMPTS[0], 0)]
    forward = generator.generate_requests(requests, settings)
    backward = generator.generate_requests(requests[::-1], settings)
    assert forward == backward[::-1]


def test_rows_stop_at_eos_and_other_rows_continue(tiny_lm_path):
    # Make the third greedy token of PROMPTS[0] an EOS token: that row must stop after two tokens,
    # while the other prompt in the same batch (which finished rows leave) continues unchanged.
    generator = HFGenerator(tiny_lm_path)
    greedy = _hf_greedy(generator, PROMPTS[0], 6)
    other = _hf_greedy(generator, PROMPTS[1], 6)
    stop = greedy[2]
    assert stop not in greedy[:2] and stop not in other
    generator.eos_token_ids = sorted({*generator.eos_token_ids, stop})
    settings = GenerationSettings(do_sample=False, max_new_tokens=6, n_samples=2)
    before = generator.tokens_generated
    stopped, continued = generator.generate(PROMPTS[:2], settings=settings)
    assert stopped == [generator.tokenizer.decode(greedy[:2])] * 2
    assert continued == [_text_before_eos(generator, other)] * 2
    assert generator.tokens_generated - before == 2 * 3 + 2 * 6  # EOS counted, nothing after it


def test_training_mode_of_a_passed_model_is_restored(tiny_byte_lm_path):
    from fairpath.text._models import load_causal_lm

    model, tokenizer = load_causal_lm(tiny_byte_lm_path)
    model.train()
    generator = HFGenerator(model, tokenizer=tokenizer, model_id="training")
    texts = generator.generate(["Hello"], settings=GenerationSettings(max_new_tokens=3, n_samples=2))
    assert model.training and len(texts[0]) == 2


def test_uniform_streams_are_keyed_by_seed_prompt_and_index():
    a = sample_uniforms("p", 0, seed=1, length=5)
    assert np.array_equal(a, sample_uniforms("p", 0, seed=1, length=5))
    assert np.array_equal(a[:3], sample_uniforms("p", 0, seed=1, length=3))
    for other in (sample_uniforms("q", 0, 1, 5), sample_uniforms("p", 1, 1, 5), sample_uniforms("p", 0, 2, 5)):
        assert not np.allclose(a, other)


def _empirical(logits, settings, n=40000):
    uniforms = torch.from_numpy(np.random.default_rng(0).random(n))
    picked = _pick_tokens(logits.expand(n, -1), uniforms, settings)
    return np.bincount(picked.numpy(), minlength=logits.shape[-1]) / n


def test_sampler_frequencies_match_tempered_softmax():
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0, -3.0]])
    n = 40000
    for temperature in (1.0, 0.5, 2.0):
        expected = torch.softmax(logits[0] / temperature, -1).numpy()
        observed = _empirical(logits, GenerationSettings(temperature=temperature), n)
        assert np.all(np.abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 1e-9)


def test_sampler_top_k_and_top_p_truncate_then_renormalise():
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.0, -1.0, -3.0]])
    probs = torch.softmax(logits[0], -1).numpy()  # 0.56, 0.21, 0.13, 0.08, 0.03, 0.004
    n = 40000
    top2 = _empirical(logits, GenerationSettings(top_k=2), n)
    expected = np.r_[probs[:2] / probs[:2].sum(), np.zeros(4)]
    assert np.all(np.abs(top2 - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 1e-9)
    # top_p=0.8: tokens 0 and 1 hold 0.77 < 0.8, so token 2 joins; token 3 onwards is cut.
    nucleus = _empirical(logits, GenerationSettings(top_p=0.8), n)
    expected = np.r_[probs[:3] / probs[:3].sum(), np.zeros(3)]
    assert np.all(np.abs(nucleus - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 1e-9)


def _exact_inverse_cdf(logits, uniforms):
    """The slow obvious sampler: float64 softmax, its full running sum and a binary search."""
    cdf = torch.softmax(logits.double(), dim=-1).cumsum(dim=-1)
    return torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None], right=True).squeeze(1).clamp(max=cdf.shape[-1] - 1)


@pytest.mark.parametrize("vocab, scale", [(49152, 3.0), (49152, 1.0), (1000, 5.0)])
def test_two_level_pick_agrees_with_the_exact_inverse_cdf(vocab, scale):
    # 1000 tokens is not a multiple of the block: the padded tail must never be picked.
    rows = 10_000 if vocab > 1000 else 20_000
    logits = (torch.randn(rows, vocab, generator=torch.Generator().manual_seed(0)) * scale).to(torch.bfloat16)
    uniforms = torch.from_numpy(np.random.default_rng(1).random(rows))
    picked = _pick_tokens(logits, uniforms, GenerationSettings())
    agreement = (picked == _exact_inverse_cdf(logits, uniforms)).double().mean().item()
    assert agreement >= 0.999
    assert int(picked.max()) < vocab
    greedy = _pick_tokens(logits, uniforms, GenerationSettings(do_sample=False))
    assert torch.equal(greedy, logits.float().argmax(dim=-1))


def test_two_level_pick_never_picks_a_token_of_zero_weight():
    # Uniforms at the very top of [0, 1) put the target at the row's end, where only the last token of
    # positive weight may be picked (the top-k cut leaves zeros after it, in its block and the next).
    logits = torch.full((3, 600), -30.0)
    logits[:, [5, 300, 310]] = torch.tensor([1.0, 2.0, 3.0])
    uniforms = torch.tensor([0.0, 1 - 2**-53, 0.999999])
    picked = _pick_tokens(logits, uniforms, GenerationSettings(top_k=3))
    assert picked.tolist() == [5, 310, 310]


def test_loaded_model_needs_an_explicit_or_weight_based_id(tiny_byte_lm_path):
    from fairpath.text._models import load_causal_lm

    model, tokenizer = load_causal_lm(tiny_byte_lm_path)
    first = HFGenerator(model, tokenizer=tokenizer)
    assert first.model_id == HFGenerator(model, tokenizer=tokenizer).model_id
    assert HFGenerator(model, tokenizer=tokenizer, model_id="mine").model_id == "mine"
    with torch.no_grad():
        model.lm_head.weight[0, 0] += 1.0
    assert HFGenerator(model, tokenizer=tokenizer).model_id != first.model_id


@pytest.mark.model
def test_smollm2_generates_like_hf_generate():
    generator = HFGenerator("default")
    assert generator.model.config.num_hidden_layers == 30
    prompts = ["I am from Iceland. Starting next week, I will be", "People from Chile are"]
    greedy = generator.generate(prompts, settings=GenerationSettings(do_sample=False, max_new_tokens=6, n_samples=1))
    for prompt, (text,) in zip(prompts, greedy):
        assert text == _text_before_eos(generator, _hf_greedy(generator, prompt, 6))
        assert len(text.split()) >= 2
    sampled = generator.generate(prompts[:1], settings=GenerationSettings(max_new_tokens=6, n_samples=2, seed=0))
    assert len(sampled[0]) == 2 and all(t.strip() for t in sampled[0])


def test_bfloat16_precision_is_part_of_the_model_id(tiny_lm_path):
    full = HFGenerator(tiny_lm_path, dtype="float32")
    half = HFGenerator(tiny_lm_path, dtype="bfloat16")
    assert half.model.dtype == torch.bfloat16
    assert half.model_id == full.model_id + "#bfloat16"
    settings = GenerationSettings(max_new_tokens=5, n_samples=2, batch_size=4, seed=1)
    texts = half.generate(["Hello there"], settings=settings)
    assert len(texts[0]) == 2 and half.tokens_generated > 0


def test_own_load_is_the_kernels_exponential_average_of_own_cpu_use():
    clock = {"wall": 0.0, "cpu": 0.0}
    load = _OwnLoad(wall_clock=lambda: clock["wall"], cpu_clock=lambda: clock["cpu"])
    clock.update(wall=60.0, cpu=120.0)  # a minute on both cores
    assert load.update() == pytest.approx(2 * (1 - np.exp(-1)))
    clock.update(wall=120.0, cpu=120.0)  # then a minute idle: the estimate decays by e
    assert load.update() == pytest.approx(2 * (1 - np.exp(-1)) * np.exp(-1))
    assert load.update() == pytest.approx(2 * (1 - np.exp(-1)) * np.exp(-1))  # no time passed: unchanged



def test_auto_dtype_is_bfloat16_only_where_the_cpu_computes_it(tiny_byte_lm_path, monkeypatch):
    native = torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    assert HFGenerator(tiny_byte_lm_path).model.dtype == (torch.bfloat16 if native else torch.float32)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    plain = HFGenerator(tiny_byte_lm_path)
    assert plain.model.dtype == torch.float32
    assert plain.model_id == HFGenerator(tiny_byte_lm_path, dtype="float32").model_id


def test_workers_give_the_samples_of_one_single_threaded_process(tiny_byte_lm_path):
    # Each batch goes whole to one worker and every sample has its own uniforms, so two worker
    # processes reproduce one process with one thread, batch for batch, in the order asked.
    prompts = ["Hello there", "Iceland is", "People from Chile are very", "Why"]
    settings = GenerationSettings(max_new_tokens=6, n_samples=5, batch_size=3, seed=4)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        alone = HFGenerator(tiny_byte_lm_path, dtype="bfloat16", num_threads=None)
        expected = alone.generate(prompts, settings=settings)
    finally:
        torch.set_num_threads(torch_threads)
    pooled = HFGenerator(tiny_byte_lm_path, dtype="bfloat16", workers=2)
    try:
        assert pooled.generate(prompts, settings=settings) == expected
        assert pooled.tokens_generated == alone.tokens_generated > 0
    finally:
        pooled.close()
