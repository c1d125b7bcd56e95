"""Bad input to the debiasing tools: each error names the problem and says what to do."""

import os
import re

import pytest
import torch
from transformers.modeling_outputs import CausalLMOutputWithPast

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm
from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import (
    DebiasConfig,
    DebiasStudy,
    DebiasTrainer,
    Representation,
    SentimentProjection,
    build_corpus,
    make_pairs,
    read_corpus_file,
    sentence_representations,
)

SPEC = FairnessSpec.builtin("occupation")
TEXTS = ["The baker said that the bread was ready.", "I met an accountant yesterday.", "The nurse went home early."]


def _spec(values):
    return FairnessSpec.from_dict({"attribute": "job", "values": values, "templates": ["I work as {article} {job}."]})


@pytest.mark.parametrize("lam", [-1.0, -1e-9, float("nan"), float("inf")])
def test_negative_or_non_finite_lambda(lam):
    with pytest.raises(FairpathInputError, match="lambda must be a finite number >= 0"):
        DebiasConfig(lam=lam)


def test_unknown_regularizer_method_and_pooling():
    with pytest.raises(FairpathInputError, match="unknown regularizer 'cosine'; use one of embedding, sentiment"):
        DebiasConfig(regularizer="cosine")
    with pytest.raises(FairpathInputError, match="unknown method 'qlora'; use one of lora, full"):
        DebiasConfig(method="qlora")
    with pytest.raises(FairpathInputError, match="unknown pooling 'max'; use one of sensitive, mean, position"):
        DebiasConfig(pooling="max")
    with pytest.raises(FairpathInputError, match="steps must be an integer ≥ 1, got 0"):
        DebiasConfig(steps=0)
    with pytest.raises(FairpathInputError, match=r"compares f_s\(h\) of one vector per sentence.*use pooling 'sensitive' or 'mean'"):
        DebiasConfig(regularizer="sentiment", pooling="position")
    with pytest.raises(FairpathInputError, match="unknown normalisation 'rms'; use one of final_norm, l2, none"):
        DebiasConfig(normalisation="rms")


@pytest.mark.parametrize("bad, message", [({"seed": True}, r"seed must be an integer, got True \(bool\)"),
                                          ({"lora_alpha": 0}, "lora_alpha must be an integer ≥ 1, got 0"),
                                          ({"skip_first_token": "no"}, r"skip_first_token must be true or false, got 'no' \(str\)"),
                                          ({"learning_rate": "fast"}, r"learning_rate must be a number, got 'fast' \(str\)"),
                                          ({"dtype": "auto"}, "unknown dtype 'auto'; use one of float32, bfloat16")])
def test_every_debias_setting_is_checked_on_creation(bad, message):
    with pytest.raises(FairpathInputError, match=message):
        DebiasConfig(**bad)


def test_debias_settings_are_keyword_only():
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        DebiasConfig("sentiment")


def test_corpus_without_sensitive_tokens():
    texts = ["The weather is nice today.", "I like green tea.", "Trains run late on Sundays."]
    with pytest.raises(FairpathInputError, match=r"none of the 3 texts of corpus 'notes.txt' mentions a value of attribute 'occupation'"):
        build_corpus(texts, SPEC, source="notes.txt")


def test_corpus_file_without_sensitive_tokens_and_missing_file(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("Nothing sensitive here.\nNor here.\n")
    with pytest.raises(FairpathInputError, match="none of the 2 texts"):
        build_corpus(read_corpus_file(path), SPEC, source=str(path))
    with pytest.raises(FairpathInputError, match="corpus file .*missing.txt' does not exist"):
        read_corpus_file(tmp_path / "missing.txt")
    table = tmp_path / "corpus.csv"
    table.write_text("sentence\nThe baker said hi.\n")
    with pytest.raises(FairpathInputError, match="has no 'text' column"):
        read_corpus_file(table)


def test_values_with_different_token_counts_are_rejected_where_alignment_is_needed(tiny_lm_path):
    _, tokenizer = load_causal_lm(tiny_lm_path)
    # " baker" is 1 token, " anesthesiologist" 3 and " otorhinolaryngologist" 6 with SmolLM2's tokenizer
    spec = _spec(["baker", "anesthesiologist", "otorhinolaryngologist"])
    texts = ["The baker said hello.", "The anesthesiologist said hello."]
    with pytest.raises(FairpathInputError, match=r"no other value with the same token count: 'baker' \(1 tokens\), "
                                                 r"'anesthesiologist' \(3 tokens\), 'otorhinolaryngologist' \(6 tokens\)"):
        make_pairs(texts, spec, tokenizer=tokenizer)
    # mean pooling compares whole sentences, so the same values are fine without alignment
    pairs, unused = make_pairs(texts, spec)
    assert len(pairs) == 2 and unused == 0


def test_values_with_equal_token_counts_are_swapped_only_among_themselves(tiny_lm_path):
    _, tokenizer = load_causal_lm(tiny_lm_path)
    spec = _spec(["baker", "cook", "anesthesiologist", "otorhinolaryngologist", "Wyatt", "Tanner"])
    with pytest.raises(FairpathInputError, match="'anesthesiologist' \\(3 tokens\\), 'otorhinolaryngologist' \\(6 tokens\\)"):
        make_pairs(["The baker said hello."], spec, tokenizer=tokenizer)
    spec = _spec(["baker", "cook", "Wyatt", "Tanner"])  # 1, 1, 2, 2 tokens
    texts = ["The baker said hello.", "The cook is here.", "Wyatt went home.", "I met Tanner today."] * 3
    pairs, _ = make_pairs(texts, spec, seed=3, tokenizer=tokenizer)
    expected = {"baker": "cook", "cook": "baker", "Wyatt": "Tanner", "Tanner": "Wyatt"}
    assert all(expected[p.value] == p.counterfactual_value for p in pairs)
    assert all(len(tokenizer(p.text)["input_ids"]) == len(tokenizer(p.counterfactual)["input_ids"]) for p in pairs)


def test_position_pooling_refuses_pairs_of_different_lengths(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    pairs, _ = make_pairs(["The baker said hello."], _spec(["baker", "anesthesiologist"]))
    trainer = DebiasTrainer(model, tokenizer, pairs, DebiasConfig(pooling="position", steps=1), progress=False)
    with pytest.raises(FairpathInputError, match="position-wise pooling needs counterfactuals with as many tokens"):
        trainer.train_step()


class LogitsOnly(torch.nn.Module):
    """A causal LM wrapper that never returns hidden states (as some exported or custom models)."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask=None, labels=None, output_hidden_states=False):
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
        return CausalLMOutputWithPast(loss=out.loss, logits=out.logits)


def test_model_without_hidden_states(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    with pytest.raises(FairpathInputError, match="model LogitsOnly returned no hidden states"):
        sentence_representations(LogitsOnly(model), tokenizer, ["The baker said hello."], mention_ends=[9])
    pairs, _ = make_pairs(TEXTS, SPEC)
    trainer = DebiasTrainer(LogitsOnly(model), tokenizer, pairs, DebiasConfig(method="full", steps=1), progress=False)
    with pytest.raises(FairpathInputError, match="returned no hidden states .* output_hidden_states"):
        trainer.train_step()


def test_sentiment_regularizer_needs_a_head_and_enough_confident_sentences(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    pairs, _ = make_pairs(TEXTS, SPEC)
    with pytest.raises(FairpathInputError, match="regularizer 'sentiment' needs a fitted sentiment head"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(regularizer="sentiment"), progress=False)
    head = SentimentProjection().fit(torch.randn(16, 64).numpy(), [0.9, -0.9] * 8).head_
    head.representation = Representation(normalisation="l2")
    with pytest.raises(FairpathInputError, match="the sentiment head was fitted on h computed as .*'l2'.* refit the head"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(regularizer="sentiment"), sentiment_head=head, progress=False)
    with pytest.raises(FairpathInputError, match=r"only 1 negative and 2 positive sentences have \|score\| > 0.7 \(out of 5\)"):
        SentimentProjection().fit(torch.randn(5, 8).numpy(), [0.9, 0.8, -0.95, 0.1, -0.5])
    with pytest.raises(FairpathInputError, match="scores must be a 1-d array of finite values on \\[-1, 1\\]"):
        SentimentProjection().fit(torch.randn(3, 8).numpy(), [0.9, 2.0, -0.9])


def test_checkpoint_from_other_settings_or_damaged(tiny_lm_path, tmp_path):
    pairs, _ = make_pairs(TEXTS, SPEC)
    model, tokenizer = load_causal_lm(tiny_lm_path)
    DebiasTrainer(model, tokenizer, pairs, DebiasConfig(lam=1.0, steps=1), checkpoint_dir=tmp_path, progress=False).fit()
    model, tokenizer = load_causal_lm(tiny_lm_path)
    with pytest.raises(FairpathInputError, match=r"was made with other settings \(lam\); use another output folder"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(lam=2.0, steps=1), checkpoint_dir=tmp_path, progress=False).fit()
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    model, tokenizer = load_causal_lm(tiny_lm_path)
    with pytest.raises(FairpathInputError, match="checkpoint .* cannot be read"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(lam=1.0, steps=1), checkpoint_dir=tmp_path, progress=False).fit()


def test_empty_pairs():
    with pytest.raises(FairpathInputError, match="no counterfactual pairs to train on"):
        DebiasTrainer(None, None, [], DebiasConfig())


def test_corpus_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes("Le médecin arrive.\n".encode("cp1252"))
    with pytest.raises(FairpathInputError, match=r"corpus file .*corpus\.txt' is not UTF-8 \(byte 0xe9 at position 4\); it looks like cp1252"):
        read_corpus_file(path)


@pytest.mark.parametrize("options, message", [
    ({"n_permutations": 1_000_001}, r"n_permutations must be an integer ≤ 1,000,000 \(fairpath's bound\), got 1,000,001"),
    ({"audit_samples": 100_001}, r"n_samples must be an integer ≤ 100,000 \(fairpath's bound\), got 100,001"),
])
def test_the_audits_bounds_are_checked_before_any_training(tmp_path, options, message):
    with pytest.raises(FairpathInputError, match=message):
        DebiasStudy(tmp_path, **options)
    assert not any(tmp_path.iterdir())


class _RunsCode:
    """A pickled object whose unpickling runs code (here: creates a folder), as a hostile file's would."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def test_sentiment_head_file_with_a_pickled_object_is_refused_unrun(tmp_path):
    marker, path = tmp_path / "ran", tmp_path / "head.pt"
    torch.save({"params": _RunsCode(marker), "state": {}}, path)
    with pytest.raises(FairpathInputError, match=rf"sentiment head file '{re.escape(str(path))}' cannot be read \(it holds objects "
                                                 r"other than tensors and plain data\); fairpath loads only tensors and plain data, "
                                                 r"never pickled objects that could run code: delete it to refit"):
        SentimentProjection.load(path)
    assert not marker.exists()


def test_checkpoint_with_a_pickled_object_is_refused_unrun(tiny_lm_path, tmp_path):
    marker = tmp_path / "ran"
    torch.save({"config": _RunsCode(marker), "step": 1}, tmp_path / "checkpoint.pt")
    model, tokenizer = load_causal_lm(tiny_lm_path)
    pairs, _ = make_pairs(TEXTS, SPEC)
    with pytest.raises(FairpathInputError, match=r"checkpoint '.*checkpoint\.pt' cannot be read \(it holds objects other than "
                                                 r"tensors and plain data\).*: delete it to restart"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(lam=1.0, steps=1), checkpoint_dir=tmp_path, progress=False).fit()
    assert not marker.exists()


def test_a_sensitive_mention_beyond_max_length_is_refused_before_training(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    pairs, _ = make_pairs(["After a long day at work and a longer evening at home, the baker slept."], SPEC)
    with pytest.raises(FairpathInputError, match=r"2 texts have their sensitive mention beyond max_length=8 tokens .*"
                                                 r"ends at character 64\); raise max_length"):
        DebiasTrainer(model, tokenizer, pairs, DebiasConfig(max_length=8), progress=False)
    with pytest.raises(FairpathInputError, match="unknown dtype 'float16'; use one of float32, bfloat16"):
        DebiasConfig(dtype="float16")
