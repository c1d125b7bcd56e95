"""Debiasing language models by embedding and sentiment regularization (Huang et al., 2020)."""

from fairpath.text.debias._corpus import (
    CounterfactualPair,
    DebiasCorpus,
    SampledTexts,
    build_corpus,
    make_pairs,
    read_corpus_file,
    sample_corpus,
    training_prompts,
    values_in,
)
from fairpath.text.debias._representations import Representation, sentence_representations
from fairpath.text.debias._sentiment_head import SentimentHead, SentimentProjection, fit_sentiment_projection
from fairpath.text.debias._study import BASE, SCORES_NAME, DebiasStudy, DebiasStudyResult
from fairpath.text.debias._training import DebiasConfig, DebiasTrainer

__all__ = [
    "BASE",
    "SCORES_NAME",
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
    "fit_sentiment_projection",
    "make_pairs",
    "read_corpus_file",
    "sample_corpus",
    "sentence_representations",
    "training_prompts",
    "values_in",
]
