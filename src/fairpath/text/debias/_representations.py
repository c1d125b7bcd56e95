"""Sentence representations h̄: the last layers' hidden states, normalised, averaged and pooled over tokens.

Huang et al. (2020) regularise this representation: it is what the fairness losses compare between a
sentence and its counterfactual, and what the sentiment head f_sh reads. Their h̄ averages the last
two layers of a post-norm Transformer, whose hidden states all have a comparable scale. In a pre-norm
model (Llama, SmolLM2) only the output of the final norm is normalised: the layer before it is the
raw residual stream (token norms ≈ 1300 in SmolLM2, against ≈ 43 after the final norm) and its first
token carries a "massive activation" (norm ≈ 9500). Averaged as they are, h̄ is that first token of
layer −2, and the cosine distance between counterfactual sentences shrinks about 7-fold.

So, by default (:class:`Representation`), each layer goes through the model's final norm before the
average (the state the language-model head reads; the last layer has had it already) and the first
position is left out of the pooling. Measured on SmolLM2-135M-Instruct over 8 counterfactual pairs
(occupation and country), the mean cosine distance between h̄(x) and h̄(x̃) is 0.0048 for the raw
average of the last two layers over all tokens, 0.040 for the final layer alone, 0.036 for this
default, and 0.079 for per-token L2 normalisation (``normalisation="l2"``), which weighs every
token's direction equally whatever the model's final-norm gains.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, validate_params

NORMALISATIONS = ("final_norm", "l2", "none")
POOLINGS = ("mean", "none")


@dataclass(frozen=True)
class Representation:
    """How h̄ is computed from a forward pass run with ``output_hidden_states=True``.

    Parameters
    ----------
    layers : indices into ``hidden_states`` (``-1`` is the output of the final norm), averaged.
    normalisation : ``"final_norm"`` passes every layer but the last through the model's final norm
        before averaging; ``"l2"`` scales every token vector of every layer to unit length;
        ``"none"`` averages the raw hidden states.
    skip_first_token : leave position 0 out of the mean (its activation is an outlier in most
        decoder-only models); a one-token sentence keeps it.
    """

    layers: tuple[int, ...] = (-2, -1)
    normalisation: str = "final_norm"
    skip_first_token: bool = True

    def __post_init__(self):
        layers = tuple(int(layer) for layer in self.layers)
        if not layers:
            raise FairpathInputError("representation layers is empty; give hidden-state indices such as (-2, -1)")
        object.__setattr__(self, "layers", layers)
        if self.normalisation not in NORMALISATIONS:
            raise FairpathInputError(f"normalisation {self.normalisation!r} is unknown; use one of {', '.join(NORMALISATIONS)}")

    def per_token(self, outputs, model) -> torch.Tensor:
        """The averaged (normalised) layers, one vector per position: ``[batch, tokens, hidden]``."""
        hidden_states = getattr(outputs, "hidden_states", None)
        depth = len(hidden_states) if hidden_states is not None else 0
        if depth == 0 or any(not -depth <= layer < depth for layer in self.layers):
            returned = f"{depth} hidden states" if depth else "no hidden states"
            raise FairpathInputError(
                f"model {type(model).__name__} returned {returned} when called with output_hidden_states=True, but h̄ "
                f"reads layers {list(self.layers)}; use a Hugging Face causal LM (AutoModelForCausalLM) that supports "
                "output_hidden_states, or other representation layers"
            )
        norm = final_norm(model) if self.normalisation == "final_norm" else None
        vectors = []
        for layer in self.layers:
            state = hidden_states[layer]
            if norm is not None and layer % depth != depth - 1:  # the last entry is already normed
                state = norm(state)
            elif self.normalisation == "l2":
                state = F.normalize(state, dim=-1)
            vectors.append(state)
        return torch.stack(vectors).mean(dim=0)

    def token_mask(self, attention_mask: torch.Tensor) -> torch.Tensor:
        """The positions pooled: the non-padding ones, without position 0 where a sentence has more."""
        mask = attention_mask.clone()
        if self.skip_first_token and mask.shape[1] > 1:
            longer = mask[:, 1:].sum(dim=1) > 0
            mask[longer, 0] = 0
        return mask

    def pool(self, outputs, attention_mask: torch.Tensor, model, pooling: str = "mean") -> torch.Tensor:
        """h̄: ``[batch, hidden]`` (``pooling="mean"``) or ``[batch, tokens, hidden]`` (``"none"``)."""
        if pooling not in POOLINGS:
            raise FairpathInputError(f"pooling {pooling!r} is unknown; use 'mean' or 'none'")
        per_token = self.per_token(outputs, model)
        if pooling == "none":
            return per_token
        mask = self.token_mask(attention_mask).unsqueeze(-1).to(per_token.dtype)
        return (per_token * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


def final_norm(model) -> torch.nn.Module:
    """The norm a causal LM applies before its output head (``model.model.norm`` in Llama)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    decoder = base.get_decoder() if hasattr(base, "get_decoder") else getattr(base, "model", None)
    for name in ("norm", "final_layer_norm", "ln_f", "final_layernorm"):
        module = getattr(decoder, name, None)
        if isinstance(module, torch.nn.Module):
            return module
    raise FairpathInputError(
        f"no final norm found in model {type(base).__name__} (looked for norm, final_layer_norm, ln_f); "
        "use Representation(normalisation='l2') or normalisation='none'"
    )


def pool_hidden_states(outputs, attention_mask: torch.Tensor, model=None, pooling: str = "mean",
                       representation: Representation | None = None) -> torch.Tensor:
    """h̄ from a forward pass run with ``output_hidden_states=True`` (see :class:`Representation`).

    ``pooling="mean"`` averages over the pooled tokens, giving one vector per sentence
    (``[batch, hidden]``), so a sentence and its counterfactual may have different token counts.
    ``pooling="none"`` keeps one vector per position (``[batch, tokens, hidden]``) for position-wise
    comparisons, which need aligned sequences.
    """
    return (representation or Representation()).pool(outputs, attention_mask, model, pooling)


def _accepts_logits_to_keep(model) -> bool:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def forward_with_representation(model, input_ids, attention_mask, labels=None, pooling: str = "mean",
                                representation: Representation | None = None):
    """One forward pass returning the model outputs (with the LM loss when ``labels`` is given) and h̄.

    Without labels only h̄ is needed, so models that support it compute the vocabulary projection for
    the last position only (with a 49k-token vocabulary that projection costs as much as several layers).
    """
    extra = {"logits_to_keep": 1} if labels is None and _accepts_logits_to_keep(model) else {}
    outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, output_hidden_states=True, **extra)
    return outputs, pool_hidden_states(outputs, attention_mask, model, pooling, representation)


@validate_params({"batch_size": Integer(1), "max_length": Integer(1)})
def sentence_representations(model, tokenizer, texts: Sequence[str], batch_size: int = 16, max_length: int = 64,
                             representation: Representation | None = None) -> torch.Tensor:
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
            _, pooled = forward_with_representation(model, batch["input_ids"], batch["attention_mask"],
                                                    representation=representation)
            chunks.append(pooled.float().cpu())
    model.train(was_training)
    return torch.cat(chunks)
