"""Debiasing fine-tuning: minimise L_LM(x) + λ · L_fair(x, x̃) (Huang et al., 2020, Section 4).

The two fairness losses of the paper, on the representation h of :mod:`._representations` (by
default the state at the sensitive token, averaged over the last two layers):

* embedding regularization: L_fair = 1 - cos(h(x), h(x̃));
* sentiment regularization: L_fair = 1 - cos(f_s(h(x)), f_s(h(x̃))), with f_s the sentiment head,
  fitted beforehand on the same h (the check in :class:`DebiasTrainer` refuses a head fitted on
  another) and frozen, so the model learns to make the head read x and x̃ alike, not the head to
  stop discriminating. f_s(h) is the head's last hidden layer (:meth:`SentimentHead.features`, 128
  sentiment features), not its two class probabilities: a head fitted on the few confidently
  labelled sentences of a small corpus saturates, and the cosine of two saturated 2-vectors is 1
  with no gradient (measured on Country: L_fair 0.0000 from the first step on, so the sentiment
  models trained as the control).

Both are averaged over the pairs of a batch. L_LM is the loss on the sampled continuation only
(:func:`lm_labels`): at the base its expected gradient over the base's own samples is zero, so the
control (λ = 0) is a no-op in expectation and every change of a regularized model is the
regularizer's. Training is parameter-efficient by default (LoRA through ``peft``, practical on a
CPU); full fine-tuning is available. ``dtype="bfloat16"`` runs the forward and backward passes under
bf16 autocast (CPUs with AMX and GPUs multiply bf16 several times faster than fp32) while the
weights, their gradients and the optimizer stay fp32, so small LoRA updates are not rounded away.
Checkpoints hold the trainable weights, the optimizer and the history, so an interrupted run resumes
where it stopped and ends with the same weights as an uninterrupted one in the same dtype.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from fairpath._exceptions import FairpathInputError
from fairpath._io import atomic_folder, atomic_path
from fairpath._progress import progress as progress_bar
from fairpath._validation import Boolean, validate_params
from fairpath.text.debias._config import TRAINING_LOG_NAME, DebiasConfig
from fairpath.text.debias._corpus import CounterfactualPair
from fairpath.text.debias._representations import encode, forward_with_representation
from fairpath.text.debias._sentiment_head import load_tensor_file

CHECKPOINT_NAME = "checkpoint.pt"


def cosine_distance(a: torch.Tensor, b: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean of 1 - cos(a, b) over the batch (and over unmasked positions for per-token tensors)."""
    distance = 1 - F.cosine_similarity(a, b, dim=-1, eps=1e-8)
    if mask is None:
        return distance.mean()
    mask = mask.to(distance.dtype)
    return ((distance * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)).mean()


def _prepare_model(model, config: DebiasConfig):
    """Wrap with LoRA (only adapter weights train) or unfreeze everything for full fine-tuning."""
    if config.method == "full":
        model.requires_grad_(True)
        return model
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha, lora_dropout=0.0,
                      target_modules=config.lora_target_modules, bias="none", task_type="CAUSAL_LM")
    with torch.random.fork_rng(devices=[]):  # seeded adapter initialisation, global RNG left alone
        torch.manual_seed(config.seed)
        return get_peft_model(model, lora)


def lm_labels(tokenizer, encoded, texts: Sequence[str], continuation_starts: Sequence[int], max_length: int) -> torch.Tensor:
    """The language-model targets of a right-padded batch: every token that ends after its text's
    ``continuation_start`` (a character offset), -100 (no loss) for padding and the prompt's tokens.

    The loss on a sampled continuation only is what makes plain fine-tuning a no-op in expectation at the
    base (its expected gradient over the model's own samples is zero); the prompts are fixed text, not
    samples, and fitting them would move the model. Offsets come from a fast tokenizer; a start of 0 (a
    user's text) keeps every token, and then no offsets are needed.
    """
    labels = encoded["input_ids"].masked_fill(encoded["attention_mask"] == 0, -100)
    if not any(continuation_starts):
        return labels
    if not getattr(tokenizer, "is_fast", False):
        raise FairpathInputError(f"the loss on continuations only finds the prompt's tokens through character offsets, "
                                 f"which tokenizer {type(tokenizer).__name__} does not give; use a fast (Rust) tokenizer")
    offsets = tokenizer(list(texts), return_tensors="pt", padding=True, padding_side="right", truncation=True,
                        max_length=max_length, return_offsets_mapping=True)["offset_mapping"]
    starts = torch.as_tensor(list(continuation_starts)).unsqueeze(1)
    return labels.masked_fill(offsets[..., 1].to(labels.device) <= starts.to(labels.device), -100)


class DebiasTrainer:
    """Fine-tune a causal LM with the fairness regularizer on counterfactual pairs.

    Parameters
    ----------
    model, tokenizer : a Hugging Face causal LM and its tokenizer (the model is modified in place).
    pairs : :class:`CounterfactualPair` training examples.
    config : :class:`DebiasConfig`.
    sentiment_head : the frozen f_s (``SentimentHead``), required for ``regularizer="sentiment"``, fitted
        on the training's representation (:func:`fit_sentiment_projection` with ``config.representation``).
    checkpoint_dir : where checkpoints go; training resumes from one found there.

    After :meth:`fit`: ``history_`` (one dict per step: lm_loss, fair_loss, loss) and ``model_``.
    """

    @validate_params({"progress": Boolean()})
    def __init__(self, model, tokenizer, pairs: Sequence[CounterfactualPair], config: DebiasConfig, *,
                 sentiment_head=None, checkpoint_dir: str | Path | None = None, progress: bool = True):
        if not pairs:
            raise FairpathInputError("no counterfactual pairs to train on; the corpus has no sentences with sensitive tokens")
        if config.regularizer == "sentiment" and sentiment_head is None:
            raise FairpathInputError("regularizer 'sentiment' needs a fitted sentiment head (SentimentProjection().fit(...).head_)")
        fitted_on = getattr(sentiment_head, "representation", None)
        if config.regularizer == "sentiment" and fitted_on is not None and fitted_on != config.representation:
            raise FairpathInputError(
                f"the sentiment head was fitted on h computed as {fitted_on} but training computes {config.representation}; "
                "refit the head with the training's representation (fit_sentiment_projection(..., representation=config.representation))"
            )
        self.config = config
        self.pairs = list(pairs)
        self.tokenizer = tokenizer
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.checkpoint_dir = Path(checkpoint_dir) if checkpoint_dir is not None else None
        self.progress = progress
        if config.pooling == "sensitive":  # every mention must fit in max_length: refused now, not mid-run
            encode(tokenizer, [p.text for p in self.pairs] + [p.counterfactual for p in self.pairs], config.max_length,
                   [p.end for p in self.pairs] + [p.counterfactual_end for p in self.pairs])
        self.model_ = _prepare_model(model, config)
        self.model_.train()
        device = next(self.model_.parameters()).device
        self.sentiment_head = sentiment_head.to(device) if sentiment_head is not None else None
        self._trainable = {n: p for n, p in self.model_.named_parameters() if p.requires_grad}
        self.optimizer = torch.optim.AdamW(self._trainable.values(), lr=config.learning_rate, weight_decay=0.0)
        self.history_: list[dict] = []
        self.step_ = 0

    # -- data ---------------------------------------------------------------------------------
    def batch_pairs(self, step: int) -> list[CounterfactualPair]:
        """The pairs of a step: epochs of seeded permutations, a pure function of the step (so resumes align)."""
        n, size = len(self.pairs), self.config.batch_size
        chosen = []
        for position in range(step * size, (step + 1) * size):
            epoch, index = divmod(position, n)
            order = np.random.default_rng([self.config.seed, epoch]).permutation(n)
            chosen.append(self.pairs[order[index]])
        return chosen

    def _encode(self, texts: list[str], ends: list[int]) -> tuple[dict, torch.Tensor | None]:
        """The batch on the model's device, with the sensitive-token positions when pooling needs them."""
        encoded, positions = encode(self.tokenizer, texts, self.config.max_length,
                                    ends if self.config.pooling == "sensitive" else None)
        device = next(self.model_.parameters()).device
        return encoded.to(device), positions.to(device) if positions is not None else None

    def _autocast(self):
        device = next(self.model_.parameters()).device
        return torch.autocast(device.type, dtype=self.config.autocast_dtype, enabled=self.config.autocast_dtype is not None)

    # -- losses -------------------------------------------------------------------------------
    def _fairness_loss(self, h_x, h_cf, mask) -> torch.Tensor:
        """1 - cos(h(x), h(x̃)), or 1 - cos(f_s(h(x)), f_s(h(x̃))) for the sentiment regularizer (in fp32)."""
        h_x, h_cf = h_x.float(), h_cf.float()
        if self.config.regularizer == "sentiment":
            h_x, h_cf = self.sentiment_head.features(h_x), self.sentiment_head.features(h_cf)
        position_mask = self.config.representation.token_mask(mask) if self.config.pooling == "position" else None
        return cosine_distance(h_x, h_cf, position_mask)

    def losses(self, pairs: Sequence[CounterfactualPair]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(total, L_LM, L_fair) for a batch.

        With pooling ``"sensitive"`` the counterfactual is read at its mention only, and in a causal model
        no later token changes the state there: x̃ runs cut after its mention (about a third of x's
        tokens), apart from x. With the other poolings the sentences and their counterfactuals run in one
        forward pass (one batch of 2n rows, the LM loss on the first n only): twice the rows per matrix
        product, half the passes. With λ = 0 the counterfactuals carry no gradient, so they run without
        building a graph.
        """
        representation = self.config.representation
        n = len(pairs)
        texts, ends = [p.text for p in pairs], [p.end for p in pairs]
        starts = [p.continuation_start for p in pairs]
        cf_texts, cf_ends = [p.counterfactual for p in pairs], [p.counterfactual_end for p in pairs]
        apart = self.config.lam == 0 or self.config.pooling == "sensitive"
        if self.config.pooling == "sensitive":
            cf_texts = [text[:end] for text, end in zip(cf_texts, cf_ends)]
        with self._autocast():
            if apart:
                x, positions = self._encode(texts, ends)
                labels = lm_labels(self.tokenizer, x, texts, starts, self.config.max_length)
                outputs, h_x = forward_with_representation(self.model_, x["input_ids"], x["attention_mask"],
                                                           labels, representation, positions)
                # λ = 0 is plain LM fine-tuning: the fairness loss is only logged, and nothing else touches the graph
                with torch.set_grad_enabled(torch.is_grad_enabled() and self.config.lam != 0):
                    cf, cf_positions = self._encode(cf_texts, cf_ends)
                    self._check_aligned(x["attention_mask"], cf["attention_mask"])
                    _, h_cf = forward_with_representation(self.model_, cf["input_ids"], cf["attention_mask"], None,
                                                          representation, cf_positions)
                    fair = self._fairness_loss(h_x if self.config.lam else h_x.detach(), h_cf, x["attention_mask"])
                return (outputs.loss + self.config.lam * fair if self.config.lam else outputs.loss), outputs.loss, fair
            both, positions = self._encode(texts + cf_texts, ends + cf_ends)
            mask = both["attention_mask"]
            self._check_aligned(mask[:n], mask[n:])
            labels = lm_labels(self.tokenizer, both, texts + cf_texts, starts + [0] * n, self.config.max_length)
            labels[n:] = -100  # the language-model loss is on x only
            outputs, h = forward_with_representation(self.model_, both["input_ids"], mask, labels, representation, positions)
            fair = self._fairness_loss(h[:n], h[n:], mask[:n])
            return outputs.loss + self.config.lam * fair, outputs.loss, fair

    def _check_aligned(self, mask_x, mask_cf) -> None:
        if self.config.pooling == "position" and not torch.equal(mask_x.sum(dim=1), mask_cf.sum(dim=1)):
            raise FairpathInputError("position-wise pooling needs counterfactuals with as many tokens as their originals; "
                                     "use pooling='sensitive' or 'mean'")

    def evaluate(self, pairs: Sequence[CounterfactualPair] | None = None) -> dict:
        """Mean L_LM and L_fair over ``pairs`` (all training pairs by default), without gradients."""
        pairs = list(self.pairs if pairs is None else pairs)
        was_training = self.model_.training
        self.model_.eval()
        totals = {"lm_loss": 0.0, "fair_loss": 0.0}
        with torch.no_grad():
            for start in range(0, len(pairs), self.config.batch_size):
                batch = pairs[start:start + self.config.batch_size]
                _, lm, fair = self.losses(batch)
                totals["lm_loss"] += lm.item() * len(batch)
                totals["fair_loss"] += fair.item() * len(batch)
        self.model_.train(was_training)
        return {name: value / len(pairs) for name, value in totals.items()}

    def train_step(self) -> dict:
        """One optimisation step on the next batch; gradients stay on the parameters for inspection."""
        self.optimizer.zero_grad(set_to_none=True)
        total, lm, fair = self.losses(self.batch_pairs(self.step_))
        total.backward()
        self.optimizer.step()
        record = {"step": self.step_ + 1, "loss": total.item(), "lm_loss": lm.item(), "fair_loss": fair.item()}
        self.history_.append(record)
        self.step_ += 1
        return record

    # -- checkpoints --------------------------------------------------------------------------
    @property
    def checkpoint_path(self) -> Path | None:
        return self.checkpoint_dir / CHECKPOINT_NAME if self.checkpoint_dir is not None else None

    def save_checkpoint(self) -> None:
        if self.checkpoint_path is None:
            return
        state = {
            "config": asdict(self.config),
            "step": self.step_,
            "trainable": {n: p.detach().clone() for n, p in self._trainable.items()},
            "optimizer": self.optimizer.state_dict(),
            "history": self.history_,
            "rng": torch.get_rng_state(),
        }
        with atomic_path(self.checkpoint_path) as temporary:  # a kill never leaves half a checkpoint
            torch.save(state, temporary)

    def _resume(self) -> None:
        if self.checkpoint_path is None or not self.checkpoint_path.exists():
            return
        state = load_tensor_file(self.checkpoint_path, "checkpoint", "delete it to restart")
        saved = {k: v for k, v in state["config"].items() if k not in ("steps", "checkpoint_every")}
        current = {k: v for k, v in asdict(self.config).items() if k not in ("steps", "checkpoint_every")}
        if saved != current:
            changed = sorted(k for k in current if saved.get(k) != current[k])
            raise FairpathInputError(
                f"checkpoint {str(self.checkpoint_path)!r} was made with other settings ({', '.join(changed)}); "
                "use another output folder or delete the checkpoint"
            )
        with torch.no_grad():
            for name, value in state["trainable"].items():
                self._trainable[name].copy_(value)
        self.optimizer.load_state_dict(state["optimizer"])
        self.history_ = list(state["history"])
        self.step_ = int(state["step"])
        torch.set_rng_state(state["rng"])

    def fit(self, stop_after: int | None = None) -> "DebiasTrainer":
        """Train up to ``config.steps`` steps (resuming from a checkpoint); ``stop_after`` ends earlier."""
        self._resume()
        last = self.config.steps if stop_after is None else min(self.config.steps, stop_after)
        label = f"{self.config.regularizer} λ={self.config.lam:g}"
        with progress_bar(total=self.config.steps, initial=self.step_, desc=label, enabled=self.progress, unit="step") as bar:
            while self.step_ < last:
                record = self.train_step()
                bar.update(1)
                bar.set_postfix(lm=f"{record['lm_loss']:.3f}", fair=f"{record['fair_loss']:.4f}")
                if self.step_ % self.config.checkpoint_every == 0 or self.step_ == last:
                    self.save_checkpoint()
        return self

    # -- export -------------------------------------------------------------------------------
    def merged_model(self):
        """The fine-tuned model as a plain causal LM (LoRA weights merged into the base weights)."""
        model = self.model_
        if hasattr(model, "merge_and_unload"):
            model = model.merge_and_unload()
            self.model_ = model
        model.eval()
        return model

    def save_pretrained(self, path: str | Path, extra: dict | None = None) -> Path:
        """Save a Hugging Face folder that ``fairpath text audit --model PATH`` loads, whole or not at all."""
        path = Path(path)
        model = self.merged_model()
        with atomic_folder(path) as folder:
            model.save_pretrained(folder, safe_serialization=True)
            self.tokenizer.save_pretrained(folder)
            log = {"config": asdict(self.config), "history": self.history_, **(extra or {})}
            (folder / TRAINING_LOG_NAME).write_text(json.dumps(log, indent=1), encoding="utf-8")
        return path
