"""Sentence representations h(x): the last layers' hidden states, normalised, averaged, and read at the
sensitive token (or pooled over tokens).

Huang et al. (2020) regularise this representation: it is what the fairness losses compare between a
sentence and its counterfactual, and what the sentiment head f_s reads. Their h(x) is the hidden
state at the sensitive token, the end of the prefix that holds the sensitive value, averaged over
the last two layers. In a causal LM that state depends only on the text up to the value, so x and x̃
need not have the same length. That is the default here (``pooling="sensitive"``): h(x) is read at
the last token of the first value mentioned in x, and h(x̃) at the last token of the value it became.
``"mean"`` (the average over every token, continuation included) and ``"position"`` (every position,
for aligned pairs) remain available.

The last two layers of the post-norm Transformer of the paper all have a comparable scale. In a
pre-norm model (Llama, SmolLM2) only the output of the final norm is normalised: the layer before it
is the raw residual stream (token norms ≈ 1300 in SmolLM2, against ≈ 43 after the final norm) and
its first token carries a "massive activation" (norm ≈ 9500). So, by default, each layer goes
through the model's final norm before the average (the state the language-model head reads; the
last layer has had it already), and mean pooling leaves the first position out.

Why the sensitive token (``benchmarks/representation_distances.py``, SmolLM2-135M-Instruct, mean
cosine distance between h(x) and h(x̃) over counterfactual pairs of sampled-style sentences, 16 per
attribute):

=============================================  ==========  =======
representation                                 occupation  country
=============================================  ==========  =======
mean over tokens, last two layers (before)         0.0136   0.0248
sensitive token, last two layers (default)         0.1598   0.0676
sensitive token, last layer only                   0.1769   0.0734
mean over tokens, last layer only                  0.0175   0.0345
=============================================  ==========  =======

The sensitive token is 3-12 times further apart than the mean over tokens. The last layer alone is
about 10% further still; the default keeps the paper's two layers, which measure nearly the same.
Averaged over the whole text, the continuation (identical words in x and x̃) dilutes the swap: the
regularizer would have little left to shrink, and what it shrinks is mostly the state of words that
are the same on both sides. At the sensitive token the representation is the model's reading of the
value itself, the signal the paper regularises.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, Options, validate_params
from fairpath.text._parameters import NORMALISATIONS, POOLINGS


@validate_params({"normalisation": Options(NORMALISATIONS), "pooling": Options(POOLINGS)}, on="__post_init__")
@dataclass(frozen=True, kw_only=True)
class Representation:
    """How h(x) is computed from a forward pass run with ``output_hidden_states=True``.

    Parameters
    ----------
    layers : indices into ``hidden_states`` (``-1`` is the output of the final norm), averaged.
    normalisation : ``"final_norm"`` passes every layer but the last through the model's final norm
        before averaging; ``"l2"`` scales every token vector of every layer to unit length;
        ``"none"`` averages the raw hidden states.
    pooling : ``"sensitive"`` reads the token that ends each text's first sensitive mention (its
        index is given, see :func:`encode`); ``"mean"`` averages the tokens; ``"position"`` keeps
        every position (``[batch, tokens, hidden]``, for pairs of aligned tokens).
    skip_first_token : mean and position pooling leave position 0 out (its activation is an outlier
        in most decoder-only models); a one-token sentence keeps it.
    """

    layers: tuple[int, ...] = (-2, -1)
    normalisation: str = "final_norm"
    pooling: str = "sensitive"
    skip_first_token: bool = True

    def __post_init__(self):
        layers = tuple(int(layer) for layer in self.layers)
        if not layers:
            raise FairpathInputError("representation layers is empty; give hidden-state indices such as (-2, -1)")
        object.__setattr__(self, "layers", layers)

    def layer_average(self, outputs, model, positions: torch.Tensor | None = None) -> torch.Tensor:
        """The averaged (normalised) layers: one vector per position (``[batch, tokens, hidden]``), or only
        at ``positions`` (one index per row: ``[batch, hidden]``; every norm here acts on each vector alone)."""
        hidden_states = getattr(outputs, "hidden_states", None)
        depth = len(hidden_states) if hidden_states is not None else 0
        if depth == 0 or any(not -depth <= layer < depth for layer in self.layers):
            returned = f"{depth} hidden states" if depth else "no hidden states"
            raise FairpathInputError(
                f"model {type(model).__name__} returned {returned} when called with output_hidden_states=True, but h "
                f"reads layers {list(self.layers)}; use a Hugging Face causal LM (AutoModelForCausalLM) that supports "
                "output_hidden_states, or other representation layers"
            )
        norm = final_norm(model) if self.normalisation == "final_norm" else None
        rows = torch.arange(len(positions), device=positions.device) if positions is not None else None
        vectors = []
        for layer in self.layers:
            state = hidden_states[layer] if positions is None else hidden_states[layer][rows, positions]
            if norm is not None and layer % depth != depth - 1:  # the last entry is already normed
                state = norm(state)
            elif self.normalisation == "l2":
                state = F.normalize(state, dim=-1)
            vectors.append(state)
        return torch.stack(vectors).mean(dim=0)

    def token_mask(self, attention_mask: torch.Tensor) -> torch.Tensor:
        """The positions mean and position pooling read: the non-padding ones, without position 0 where a sentence has more."""
        mask = attention_mask.clone()
        if self.skip_first_token and mask.shape[1] > 1:
            longer = mask[:, 1:].sum(dim=1) > 0
            mask[longer, 0] = 0
        return mask

    def pool(self, outputs, attention_mask: torch.Tensor, model, positions: torch.Tensor | None = None) -> torch.Tensor:
        """h: ``[batch, hidden]`` (``"sensitive"``, ``"mean"``) or ``[batch, tokens, hidden]`` (``"position"``).

        ``positions`` (``"sensitive"`` only) holds the index of each row's sensitive token.
        """
        if self.pooling == "sensitive":
            if positions is None:
                raise FairpathInputError("pooling 'sensitive' reads the token of each text's sensitive mention, but no "
                                         "mention positions were given; encode the texts with their mention ends")
            return self.layer_average(outputs, model, positions)
        per_token = self.layer_average(outputs, model)
        if self.pooling == "position":
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


def encode(tokenizer, texts: Sequence[str], max_length: int, mention_ends: Sequence[int] | None = None):
    """Tokenize ``texts`` right-padded (every sentence at positions 0..n-1, as in plain LM training); with
    ``mention_ends``, also the index of the token holding each text's character ``end - 1``: the last
    token of its sensitive mention (found through the fast tokenizer's character offsets).

    Returns ``(encoded, positions)``, positions None without ``mention_ends``.
    """
    if mention_ends is not None and not getattr(tokenizer, "is_fast", False):
        raise FairpathInputError(f"pooling 'sensitive' finds the sensitive token through character offsets, which tokenizer "
                                 f"{type(tokenizer).__name__} does not give; use a fast (Rust) tokenizer or pooling='mean'")
    encoded = tokenizer(list(texts), return_tensors="pt", padding=True, padding_side="right", truncation=True,
                        max_length=max_length, return_offsets_mapping=mention_ends is not None)
    if mention_ends is None:
        return encoded, None
    offsets = encoded.pop("offset_mapping")
    ends = torch.as_tensor(list(mention_ends)).unsqueeze(1)
    starts, stops = offsets[..., 0], offsets[..., 1]
    # real tokens (special tokens have empty spans) that start before the mention ends; the last is its token
    before = (encoded["attention_mask"] == 1) & (stops > starts) & (starts < ends)
    index = torch.arange(offsets.shape[1]).expand_as(before)
    positions = torch.where(before, index, -1).max(dim=1).values
    covered = stops.gather(1, positions.clamp(min=0).unsqueeze(1)) >= ends
    lost = [(text, int(end)) for text, end, ok in zip(texts, ends[:, 0], (positions >= 0) & covered[:, 0]) if not ok]
    if lost:
        text, end = lost[0]
        raise FairpathInputError(
            f"{len(lost)} texts have their sensitive mention beyond max_length={max_length} tokens (for example {text[:60]!r}, "
            f"whose mention ends at character {end}); raise max_length or shorten the texts before their first value"
        )
    return encoded, positions


def _accepts_logits_to_keep(model) -> bool:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def forward_with_representation(model, input_ids, attention_mask, labels=None,
                                representation: Representation | None = None, positions: torch.Tensor | None = None):
    """One forward pass returning the model outputs (with the LM loss when ``labels`` is given) and h.

    Without labels only h is needed, so models that support it compute the vocabulary projection for
    the last position only (with a 49k-token vocabulary that projection costs as much as several layers).
    """
    extra = {"logits_to_keep": 1} if labels is None and _accepts_logits_to_keep(model) else {}
    outputs = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, output_hidden_states=True, **extra)
    return outputs, (representation or Representation()).pool(outputs, attention_mask, model, positions)


@validate_params({"batch_size": Integer(1), "max_length": Integer(1)})
def sentence_representations(model, tokenizer, texts: Sequence[str], *, batch_size: int = 16, max_length: int = 64,
                             representation: Representation | None = None,
                             mention_ends: Sequence[int] | None = None) -> torch.Tensor:
    """h for each text (``[len(texts), hidden]``), without gradients, in the model's eval mode.

    The default sensitive-token representation needs ``mention_ends``: the character end of each
    text's first sensitive mention (``CounterfactualPair.end``, ``FairnessSpec.first_mention_end``).
    """
    representation = representation or Representation()
    if not texts:
        raise FairpathInputError("no texts were given to compute representations from")
    if representation.pooling == "position":
        raise FairpathInputError("sentence_representations gives one vector per text, which pooling 'position' does not; "
                                 "use pooling 'sensitive' or 'mean'")
    if representation.pooling == "sensitive" and (mention_ends is None or len(mention_ends) != len(texts)):
        given = "no mention ends" if mention_ends is None else f"{len(mention_ends)} mention ends"
        raise FairpathInputError(
            f"pooling 'sensitive' reads each text at its sensitive mention, but {given} were given for {len(texts)} texts; "
            "give mention_ends (FairnessSpec.first_mention_end of each text) or use Representation(pooling='mean')"
        )
    was_training = model.training
    model.eval()
    chunks = []
    device = next(model.parameters()).device
    with torch.no_grad():
        for start in range(0, len(texts), batch_size):
            ends = mention_ends[start : start + batch_size] if representation.pooling == "sensitive" else None
            batch, positions = encode(tokenizer, texts[start : start + batch_size], max_length, ends)
            batch = batch.to(device)
            _, pooled = forward_with_representation(model, batch["input_ids"], batch["attention_mask"],
                                                    representation=representation,
                                                    positions=positions.to(device) if positions is not None else None)
            chunks.append(pooled.float().cpu())
    model.train(was_training)
    return torch.cat(chunks)
