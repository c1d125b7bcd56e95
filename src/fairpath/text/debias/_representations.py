"""Sentence representations h̄: the mean of the last two layers' hidden states, pooled over tokens.

Huang et al. (2020) regularise this representation: it is what the fairness losses compare between a
sentence and its counterfactual, and what the sentiment head f_sh reads.
"""

from __future__ import annotations

import inspect
from typing import Sequence

import torch

from fairpath._exceptions import FairpathInputError


def _last_two_layers(outputs, model) -> tuple[torch.Tensor, torch.Tensor]:
    hidden_states = getattr(outputs, "hidden_states", None)
    if hidden_states is None or len(hidden_states) < 2:
        name = type(model).__name__
        raise FairpathInputError(
            f"model {name} returned no hidden states (at least two layers are needed) when called with "
            "output_hidden_states=True; the debiasing losses read the last two layers, so use a Hugging Face "
            "causal LM (AutoModelForCausalLM) that supports output_hidden_states"
        )
    return hidden_states[-1], hidden_states[-2]


def pool_hidden_states(outputs, attention_mask: torch.Tensor, model=None, pooling: str = "mean") -> torch.Tensor:
    """h̄ from a forward pass run with ``output_hidden_states=True``.

    ``pooling="mean"`` averages over the non-padding tokens, giving one vector per sentence
    (``[batch, hidden]``), so a sentence and its counterfactual may have different token counts.
    ``pooling="none"`` keeps one vector per position (``[batch, tokens, hidden]``) for position-wise
    comparisons, which need aligned sequences.
    """
    last, before_last = _last_two_layers(outputs, model)
    per_token = (last + before_last) / 2
    if pooling == "none":
        return per_token
    if pooling != "mean":
        raise FairpathInputError(f"pooling {pooling!r} is unknown; use 'mean' or 'none'")
    mask = attention_mask.unsqueeze(-1).to(per_token.dtype)
    return (per_token * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


def _accepts_logits_to_keep(model) -> bool:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def forward_with_representation(model, input_ids, attention_mask, labels=None, pooling: str = "mean"):
    """One forward pass returning the model outputs (with the LM loss when ``labels`` is given) and h̄.

    Without labels only h̄ is needed, so models that support it compute the vocabulary projection for
    the last position only (with a 49k-token vocabulary that projection costs as much as several layers).
    """
    extra = {"logits_to_keep": 1} if labels is None and _accepts_logits_to_keep(model) else {}
    outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, output_hidden_states=True, **extra)
    return outputs, pool_hidden_states(outputs, attention_mask, model=model, pooling=pooling)


def sentence_representations(model, tokenizer, texts: Sequence[str], batch_size: int = 16, max_length: int = 64) -> torch.Tensor:
    """h̄ for each text (``[len(texts), hidden]``), without gradients, in the model's eval mode."""
    if not texts:
        raise FairpathInputError("no texts were given to compute representations from")
    was_training = model.training
    model.eval()
    chunks = []
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            batch = tokenizer(
                list(texts[start : start + batch_size]),
                return_tensors="pt",
                padding=True,
                padding_side="right",
                truncation=True,
                max_length=max_length,
            )
            batch = batch.to(next(model.parameters()).device)
            _, pooled = forward_with_representation(model, batch["input_ids"], batch["attention_mask"])
            chunks.append(pooled.float().cpu())
    model.train(was_training)
    return torch.cat(chunks)
