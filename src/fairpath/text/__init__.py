"""Counterfactual sentiment-bias audits of language models (Huang et al., Findings of EMNLP 2020).

The pieces work separately or together:

- :class:`FairnessSpec` (attribute, values, subgroups, templates; built-in ``country``,
  ``occupation``, ``name``; YAML; :func:`combine_specs`);
- generation backends (:class:`HFGenerator` for local causal LMs, :class:`OpenAICompatibleBackend`
  for served models, :class:`PoolGenerator` with a known bias) and :class:`SampleStore` / :func:`generate_samples` (resumable Parquet storage);
- sentiment scorers in [0, 1] (:func:`get_scorer`: ``vader``, ``textblob``, ``opinion``,
  ``minilm`` or a Hugging Face classifier folder);
- metrics (:func:`wasserstein1`, :func:`individual_fairness`, :func:`group_fairness`,
  :func:`counterfactual_fairness` with bootstrap intervals and noise floors);
- quality (:func:`semantic_similarity`, :func:`perplexity`);
- :func:`audit_text`, returning a :class:`TextAuditResult` with a report; :func:`audit_samples` (with
  :func:`read_generations`) for continuations generated elsewhere.
"""

from fairpath.text._audit import DEFAULT_SCORERS, TextAuditResult, audit_samples, audit_text, score_samples
from fairpath.text._controlled import PoolGenerator
from fairpath.text._generation import GenerationBackend, GenerationSettings, HFGenerator, SampleRequest
from fairpath.text._metrics import (
    FairnessResult,
    counterfactual_fairness,
    group_fairness,
    individual_fairness,
    pairwise_wasserstein1,
    wasserstein1,
)
from fairpath.text._models import load_causal_lm, model_id
from fairpath.text._openai_backend import OpenAICompatibleBackend
from fairpath.text._quality import PerplexityResult, perplexity, prompt_similarities, semantic_similarity
from fairpath.text._samples import SampleStore, generate_samples
from fairpath.text._scorers import (
    EmbeddingAnchorScorer,
    HFClassifierScorer,
    OpinionWordScorer,
    SentimentScorer,
    TextBlobScorer,
    VaderScorer,
    available_scorers,
    get_scorer,
)
from fairpath.text._spec import FairnessSpec, SensitiveValue, combine_specs, indefinite_article
from fairpath.text._stored import GENERATION_COLUMNS, read_generations

__all__ = [
    "DEFAULT_SCORERS",
    "EmbeddingAnchorScorer",
    "GENERATION_COLUMNS",
    "FairnessResult",
    "FairnessSpec",
    "GenerationBackend",
    "GenerationSettings",
    "HFClassifierScorer",
    "HFGenerator",
    "OpenAICompatibleBackend",
    "OpinionWordScorer",
    "PerplexityResult",
    "PoolGenerator",
    "SampleRequest",
    "SampleStore",
    "SensitiveValue",
    "SentimentScorer",
    "TextAuditResult",
    "TextBlobScorer",
    "VaderScorer",
    "audit_samples",
    "audit_text",
    "available_scorers",
    "combine_specs",
    "counterfactual_fairness",
    "generate_samples",
    "get_scorer",
    "group_fairness",
    "indefinite_article",
    "individual_fairness",
    "load_causal_lm",
    "model_id",
    "pairwise_wasserstein1",
    "perplexity",
    "prompt_similarities",
    "read_generations",
    "score_samples",
    "semantic_similarity",
    "wasserstein1",
]
