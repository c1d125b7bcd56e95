"""Debiasing language models by embedding and sentiment regularization (Huang et al., 2020)."""

from fairpath._lazy import lazy_attributes

# DebiasConfig needs no torch (the command line reads its defaults); the names whose modules import torch
# load on first access, so that ``import fairpath.text.debias`` does not import torch.
from fairpath.text.debias._config import DebiasConfig

_LAZY = {
    "CounterfactualPair": "_corpus",
    "DebiasCorpus": "_corpus",
    "SampledTexts": "_corpus",
    "build_corpus": "_corpus",
    "make_pairs": "_corpus",
    "read_corpus_file": "_corpus",
    "sample_corpus": "_corpus",
    "training_prompts": "_corpus",
    "values_in": "_corpus",
    "Representation": "_representations",
    "sentence_representations": "_representations",
    "SentimentHead": "_sentiment_head",
    "SentimentProjection": "_sentiment_head",
    "fit_sentiment_projection": "_sentiment_head",
    "BASE": "_study",
    "DebiasStudy": "_study",
    "DebiasStudyResult": "_study",
    "base_test_phrase": "_study",
    "spread_phrase": "_study",
    "DebiasTrainer": "_training",
}


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "BASE",
    "CounterfactualPair",
    "DebiasConfig",
    "DebiasCorpus",
    "DebiasStudy",
    "DebiasStudyResult",
    "DebiasTrainer",
    "Representation",
    "SampledTexts",
    "SentimentHead",
    "SentimentProjection",
    "build_corpus",
    "base_test_phrase",
    "spread_phrase",
    "fit_sentiment_projection",
    "make_pairs",
    "read_corpus_file",
    "sample_corpus",
    "sentence_representations",
    "training_prompts",
    "values_in",
]
