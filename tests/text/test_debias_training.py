"""Debiasing fine-tuning on a tiny random Llama: the loss, the gradients, λ = 0 and resuming."""

import pytest
import torch

from fairpath.text._models import load_causal_lm
from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import DebiasConfig, DebiasTrainer, Representation, SentimentProjection, build_corpus
from fairpath.text.debias._representations import sentence_representations
from fairpath.text.debias._corpus import CounterfactualPair
from fairpath.text.debias._training import cosine_distance, lm_labels

TEXTS = [
    "The baker said that the bread was ready early.",
    "I met an accountant at the station yesterday.",
    "Yesterday, the nurse walked home through the park.",
    "Everyone in town knows the lawyer, who lives on the hill.",
    "The CEO looked at the results and smiled.",
    "Our neighbour works as a farmer, so we get fresh eggs.",
    "When the teacher arrived at the office, the phone rang.",
    "The story of a mechanic begins when a car breaks down.",
    "The driver said that the road was closed.",
    "I read an article about the physician who moved abroad.",
    "After a long day at work, the cook sat down.",
    "The editor said that the book would be late.",
]


@pytest.fixture(scope="module")
def pairs():
    return build_corpus(TEXTS, FairnessSpec.builtin("occupation"), source="test", heldout_fraction=0.0, seed=0).train_pairs


def _trainer(path, pairs, checkpoint_dir=None, **settings):
    model, tokenizer = load_causal_lm(path)
    config = DebiasConfig(**{"batch_size": 4, "learning_rate": 5e-3, "steps": 6, **settings})
    return DebiasTrainer(model, tokenizer, pairs, config, checkpoint_dir=checkpoint_dir, progress=False)


def test_embedding_regularizer_lowers_fairness_loss_more_than_plain_fine_tuning(tiny_lm_path, pairs):
    # λ = 1: at the sensitive token the tiny random model starts 0.90 apart (0.13 mean-pooled), so λ = 10
    # would spend all 30 steps on the fairness loss and leave the LM loss where it was
    regularized = _trainer(tiny_lm_path, pairs, lam=1.0, steps=30)
    before = regularized.evaluate()
    regularized.fit()
    after = regularized.evaluate()
    plain = _trainer(tiny_lm_path, pairs, lam=0.0, steps=30).fit().evaluate()
    assert before["fair_loss"] > 0.85
    assert after["fair_loss"] < 0.2 * before["fair_loss"]
    assert after["fair_loss"] < 0.5 * plain["fair_loss"]
    # the LM loss still falls: the regularizer does not stop language-model training
    assert after["lm_loss"] < before["lm_loss"]


def test_sentiment_regularizer_lowers_distance_of_head_outputs(tiny_lm_path, pairs):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    texts = [p.text for p in pairs] + [p.counterfactual for p in pairs]
    ends = [p.end for p in pairs] + [p.counterfactual_end for p in pairs]
    representations = sentence_representations(model, tokenizer, texts, mention_ends=ends)
    # labels that depend on the occupation make the head separate the two sides of each pair
    scores = [0.9 if i % 2 else -0.9 for i in range(len(texts))]
    head = SentimentProjection(test_size=0.25, random_state=0).fit(representations, scores).head_
    # λ = 1: at λ = 10 one pair's head outputs overshoot to opposite saturated classes (distance 1, where the
    # softmax has no gradient left) and stay there; λ = 1 brings every pair together
    trainer = DebiasTrainer(model, tokenizer, pairs, DebiasConfig(regularizer="sentiment", lam=1.0, steps=30, batch_size=4,
                                                                  learning_rate=5e-3), sentiment_head=head, progress=False)
    before = trainer.evaluate()["fair_loss"]
    after = trainer.fit().evaluate()["fair_loss"]
    assert before > 0.09
    assert after < 0.05 * before
    assert not any(p.requires_grad for p in head.parameters())  # f_s stays frozen


def test_gradients_reach_lora_weights_only(tiny_lm_path, pairs):
    trainer = _trainer(tiny_lm_path, pairs, lam=10.0)
    trainer.train_step()  # LoRA B starts at zero, so A gets its first gradient on the second step
    trainer.train_step()
    named = dict(trainer.model_.named_parameters())
    lora = {n: p for n, p in named.items() if "lora_" in n}
    frozen = {n: p for n, p in named.items() if "lora_" not in n}
    assert lora and frozen
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in lora.values())
    assert all(p.grad is None and not p.requires_grad for p in frozen.values())
    # the fairness term alone sends gradient into the adapters
    trainer.optimizer.zero_grad(set_to_none=True)
    trainer.losses(trainer.batch_pairs(0))[2].backward()
    assert sum(float(p.grad.abs().sum()) for p in lora.values() if p.grad is not None) > 0


def test_full_fine_tuning_trains_every_weight(tiny_lm_path, pairs):
    trainer = _trainer(tiny_lm_path, pairs, lam=1.0, method="full", learning_rate=1e-3)
    trainer.train_step()
    assert all(p.grad is not None for p in trainer.model_.parameters())


@pytest.mark.parametrize("regularizer", ["embedding", "sentiment"])
def test_lambda_zero_is_plain_language_model_fine_tuning(tiny_lm_path, pairs, regularizer):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    head = None
    if regularizer == "sentiment":
        reps = sentence_representations(model, tokenizer, [p.text for p in pairs], mention_ends=[p.end for p in pairs])
        head = SentimentProjection().fit(reps, [0.9 if i % 2 else -0.9 for i in range(len(pairs))]).head_
    config = DebiasConfig(regularizer=regularizer, lam=0.0, method="full", steps=4, batch_size=4, learning_rate=1e-3)
    trained = DebiasTrainer(model, tokenizer, pairs, config, sentiment_head=head, progress=False).fit().model_

    # the reference: a plain causal-LM loop over the same batches with the same optimizer
    reference, tokenizer = load_causal_lm(tiny_lm_path)
    reference.train()
    optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-3, weight_decay=0.0)
    order = DebiasTrainer(*load_causal_lm(tiny_lm_path), pairs, config, sentiment_head=head, progress=False)
    for step in range(4):
        batch = tokenizer([p.text for p in order.batch_pairs(step)], return_tensors="pt", padding=True,
                          padding_side="right", truncation=True, max_length=config.max_length)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
        optimizer.zero_grad()
        reference(**batch, labels=labels).loss.backward()
        optimizer.step()

    expected = reference.state_dict()
    for name, value in trained.state_dict().items():
        assert torch.equal(value, expected[name]), name


def test_interrupted_training_resumes_to_the_same_weights(tiny_lm_path, pairs, tmp_path):
    straight = _trainer(tiny_lm_path, pairs, lam=5.0, steps=6, checkpoint_every=2).fit()
    _trainer(tiny_lm_path, pairs, tmp_path, lam=5.0, steps=6, checkpoint_every=2).fit(stop_after=3)
    resumed = _trainer(tiny_lm_path, pairs, tmp_path, lam=5.0, steps=6, checkpoint_every=2)
    resumed.fit()
    assert [h["step"] for h in resumed.history_] == list(range(1, 7))
    expected = dict(straight.model_.named_parameters())
    for name, value in resumed.model_.named_parameters():
        assert torch.equal(value, expected[name]), name
    assert resumed.history_ == straight.history_


def test_saved_folder_is_a_plain_causal_lm_with_the_merged_weights(tiny_lm_path, pairs, tmp_path):
    trainer = _trainer(tiny_lm_path, pairs, lam=5.0, steps=3).fit()
    batch = trainer.tokenizer(["The baker said hello."], return_tensors="pt")
    with torch.no_grad():
        expected = trainer.model_(**batch).logits
    trainer.save_pretrained(tmp_path / "debiased")
    reloaded, _ = load_causal_lm(tmp_path / "debiased")
    assert not any("lora" in name for name, _ in reloaded.named_parameters())
    with torch.no_grad():
        assert torch.allclose(reloaded(**batch).logits, expected, atol=1e-5)
    assert (tmp_path / "debiased" / "fairpath_debias.json").exists()


@pytest.mark.parametrize("pooling", ["sensitive", "mean"])
def test_sentiment_loss_compares_the_head_features_of_the_vectors_it_was_fitted_on(tiny_lm_path, pairs, pooling):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    representation = Representation(pooling=pooling)
    texts, counterfactuals = [p.text for p in pairs], [p.counterfactual for p in pairs]
    ends = {p.text: p.end for p in pairs} | {p.counterfactual: p.counterfactual_end for p in pairs}
    fitted_on = sentence_representations(model, tokenizer, texts + counterfactuals, representation=representation,
                                         mention_ends=[ends[t] for t in texts + counterfactuals])
    projection = SentimentProjection(random_state=0).fit(fitted_on, [0.9 if i % 2 else -0.9 for i in range(len(fitted_on))])
    head = projection.head_
    head.representation = representation
    trainer = DebiasTrainer(model, tokenizer, pairs, DebiasConfig(regularizer="sentiment", lam=1.0, batch_size=4,
                                                                  pooling=pooling), sentiment_head=head, progress=False)
    batch = trainer.batch_pairs(0)
    with torch.no_grad():
        fair = trainer.losses(batch)[2]  # LoRA B starts at zero: the model is still the base model
        x = sentence_representations(model, tokenizer, [p.text for p in batch], representation=representation,
                                     mention_ends=[p.end for p in batch])
        cf = sentence_representations(model, tokenizer, [p.counterfactual for p in batch], representation=representation,
                                      mention_ends=[p.counterfactual_end for p in batch])
        expected = cosine_distance(head.features(x), head.features(cf))  # its sentiment features, not its 2 probabilities
    assert expected > 0
    assert torch.allclose(fair, expected, atol=1e-5)


def test_bfloat16_autocast_keeps_fp32_weights_and_resumes_to_the_same_weights(tiny_lm_path, pairs, tmp_path):
    fp32 = _trainer(tiny_lm_path, pairs, lam=1.0)
    bf16 = _trainer(tiny_lm_path, pairs, lam=1.0, dtype="bfloat16", steps=4, checkpoint_every=2)
    with torch.no_grad():
        exact, rounded = fp32.losses(fp32.batch_pairs(0)), bf16.losses(bf16.batch_pairs(0))
    # the same losses up to bf16 rounding (8 bits of mantissa), computed from bf16 matmuls
    assert abs(rounded[1].item() - exact[1].item()) < 0.05 and rounded[1].item() != exact[1].item()
    assert abs(rounded[2].item() - exact[2].item()) < 0.05
    bf16.fit()
    assert all(p.dtype == torch.float32 for p in bf16._trainable.values())
    assert all(v.dtype == torch.float32 for state in bf16.optimizer.state.values() for v in state.values() if v.numel() > 1)
    _trainer(tiny_lm_path, pairs, tmp_path, lam=1.0, dtype="bfloat16", steps=4, checkpoint_every=2).fit(stop_after=2)
    resumed = _trainer(tiny_lm_path, pairs, tmp_path, lam=1.0, dtype="bfloat16", steps=4, checkpoint_every=2).fit()
    expected = dict(bf16.model_.named_parameters())
    for name, value in resumed.model_.named_parameters():
        assert torch.equal(value, expected[name]), name
    assert resumed.history_ == bf16.history_


def test_language_model_loss_covers_the_continuation_only(tiny_lm_path):
    # by hand: the mean cross-entropy of the continuation's tokens, each predicted from everything before it
    model, tokenizer = load_causal_lm(tiny_lm_path)
    prompt, text = "The news from Italy this morning", "The news from Italy this morning was calm and sunny."
    pair = CounterfactualPair(text, text.replace("Italy", "Chile"), "Italy", "Chile", 19, 19, len(prompt))
    trainer = DebiasTrainer(model, tokenizer, [pair], DebiasConfig(lam=0.0, batch_size=1, method="full"), progress=False)
    trainer.model_.eval()
    with torch.no_grad():
        _, lm, _ = trainer.losses([pair])
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        n_prompt = len(tokenizer(prompt)["input_ids"])
        log_p = torch.log_softmax(trainer.model_(ids).logits[0, :-1].float(), dim=-1)
        targets = ids[0, 1:]
        by_hand = -log_p[torch.arange(len(targets)), targets][n_prompt - 1:].mean()
        whole = -log_p[torch.arange(len(targets)), targets].mean()
    assert n_prompt >= 4 and ids.shape[1] > n_prompt + 4
    assert lm.item() == pytest.approx(by_hand.item(), rel=1e-5)
    assert abs(lm.item() - whole.item()) > 1e-3  # the prompt's tokens would change it


def test_a_text_without_prompt_keeps_every_token_in_the_loss(tiny_lm_path):
    model, tokenizer = load_causal_lm(tiny_lm_path)
    encoded = tokenizer(["The baker said hello.", "Hi."], return_tensors="pt", padding=True, padding_side="right")
    labels = lm_labels(tokenizer, encoded, ["The baker said hello.", "Hi."], [0, 0], 48)
    assert torch.equal(labels == -100, encoded["attention_mask"] == 0)
    masked = lm_labels(tokenizer, encoded, ["The baker said hello.", "Hi."], [9, 0], 48)
    n_prompt = len(tokenizer("The baker")["input_ids"])
    assert (masked[0, :n_prompt] == -100).all() and (masked[0, n_prompt:] != -100).all()
