"""Counterfactual sentiment-bias audits of language models (Huang et al., Findings of EMNLP 2020).

The pieces work separately or together:

- :class:`FairnessSpec` (attribute, values, subgroups, templates; built-in ``country``,
  ``occupation``, ``name``, ``gender``; YAML; intersections of two attributes whose values are cells such as
  ``Syria/woman``: built-in ``country,gender`` and ``occupation,gender``, ``attributes: [A, B]`` in YAML, or
  :func:`combine_specs`; :meth:`TextAuditResult.cells`, ``margins`` and ``swaps`` break an audit of one down);
- generation backends (:class:`HFGenerator` for local causal LMs, :class:`OpenAICompatibleBackend`
  for served models, :class:`PoolGenerator` with a known bias) and :class:`SampleStore` / :func:`generate_samples` (resumable Parquet storage);
- sentiment scorers in [0, 1] (:func:`get_scorer`: ``vader``, ``textblob``, ``opinion``,
  ``minilm`` or a Hugging Face classifier folder);
- metrics (:func:`wasserstein1`, :func:`individual_fairness`, :func:`group_fairness`,
  :func:`counterfactual_fairness` with permutation tests and noise floors, :func:`compare_models`
  for two models on the same prompts; :func:`individual_fairness_power` for the samples per prompt
  a comparison needs); :func:`value_spread` (the between-value spread of mean sentiment, free of the
  samples per prompt, with a bootstrap interval), :func:`compare_spread` (its one-sided paired test
  against a reference model) and :func:`spread_power`;
- quality (:func:`semantic_similarity`, :func:`calibrate_similarity_threshold`, :func:`perplexity`;
  :func:`quality_subset`, the continuations S.S. and S.S.c are computed on);
- :func:`audit_text`, returning a :class:`TextAuditResult` with a report; :func:`audit_samples` (with
  :func:`read_generations`) for continuations generated elsewhere.
"""

from fairpath._lazy import lazy_attributes

from fairpath.text._audit import DEFAULT_SCORERS, TextAuditResult, audit_samples, audit_text, score_samples
from fairpath.text._metrics import (
    FairnessResult,
    ModelComparison,
    PermutationTest,
    compare_models,
    counterfactual_fairness,
    group_fairness,
    individual_fairness,
    pairwise_wasserstein1,
    wasserstein1,
)
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
# The declared settings (fairpath._validation.validate_params) and GenerationSettings, without torch: the command
# line's flag types, defaults and choices.
from fairpath.text._parameters import (DEBIAS_SETTINGS, DEFAULT_DTYPE, DTYPES, ENDPOINT_SETTINGS, GENERATION_SETTINGS, HF_GENERATOR_SETTINGS,
                                       POOLINGS, QUALITY_SETTINGS, TEST_SETTINGS, GenerationSettings)
from fairpath.text._spread import (
    SpreadAtNoiseFloorError,
    SpreadComparison,
    SpreadEstimate,
    SpreadPower,
    SpreadTest,
    ValueSpread,
    compare_spread,
    spread_power,
    value_spread,
)
from fairpath.text._spec import FairnessSpec, SensitiveValue, combine_specs, indefinite_article
from fairpath.text._stored import GENERATION_COLUMNS, read_generations

# Names whose modules import torch load on first access, so that specifications, scorers and
# metrics work without it (``import fairpath.text`` does not import torch).
_LAZY = {
    "PoolGenerator": "_controlled",
    "GenerationBackend": "_generation",
    "HFGenerator": "_generation",
    "SampleRequest": "_generation",
    "load_causal_lm": "_models",
    "model_id": "_models",
    "OpenAICompatibleBackend": "_openai_backend",
    "PerplexityResult": "_quality",
    "SimilarityCalibration": "_quality",
    "calibrate_similarity_threshold": "_quality",
    "individual_fairness_power": "_power",
    "resolve_device": "_models",
    "resolve_dtype_name": "_generation",
    "perplexity": "_quality",
    "prompt_similarities": "_quality",
    "quality_subset": "_quality",
    "semantic_similarity": "_quality",
    "SampleStore": "_samples",
    "generate_samples": "_samples",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "DEBIAS_SETTINGS",
    "DEFAULT_DTYPE",
    "DTYPES",
    "HF_GENERATOR_SETTINGS",
    "POOLINGS",
    "QUALITY_SETTINGS",
    "DEFAULT_SCORERS",
    "ENDPOINT_SETTINGS",
    "GENERATION_SETTINGS",
    "TEST_SETTINGS",
    "EmbeddingAnchorScorer",
    "GENERATION_COLUMNS",
    "FairnessResult",
    "FairnessSpec",
    "GenerationBackend",
    "GenerationSettings",
    "HFClassifierScorer",
    "HFGenerator",
    "ModelComparison",
    "OpenAICompatibleBackend",
    "OpinionWordScorer",
    "PermutationTest",
    "PerplexityResult",
    "PoolGenerator",
    "SampleRequest",
    "SampleStore",
    "SensitiveValue",
    "SentimentScorer",
    "SimilarityCalibration",
    "SpreadComparison",
    "SpreadEstimate",
    "SpreadAtNoiseFloorError",
    "SpreadPower",
    "SpreadTest",
    "TextAuditResult",
    "TextBlobScorer",
    "ValueSpread",
    "VaderScorer",
    "audit_samples",
    "audit_text",
    "available_scorers",
    "calibrate_similarity_threshold",
    "combine_specs",
    "compare_models",
    "compare_spread",
    "counterfactual_fairness",
    "generate_samples",
    "get_scorer",
    "group_fairness",
    "indefinite_article",
    "individual_fairness",
    "individual_fairness_power",
    "resolve_device",
    "resolve_dtype_name",
    "load_causal_lm",
    "model_id",
    "pairwise_wasserstein1",
    "perplexity",
    "prompt_similarities",
    "quality_subset",
    "read_generations",
    "score_samples",
    "semantic_similarity",
    "spread_power",
    "value_spread",
    "wasserstein1",
]
