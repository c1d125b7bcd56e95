"""The declared settings of the text audits (see ``fairpath._validation.validate_params``), in a module
without torch, so that the command line takes its flag types from them without loading a model library."""

from __future__ import annotations

from fairpath._validation import MAX_PERMUTATIONS, MAX_SAMPLES_PER_PROMPT, Boolean, Integer, Optional, Options, Probability, Real, Seed, Splits, Text

# Every permutation test: counterfactual_fairness, compare_models, audit_text, audit_samples.
TEST_SETTINGS = {"n_permutations": Integer(1, MAX_PERMUTATIONS), "alpha": Probability(), "seed": Seed()}

# S.S. and S.S.c in audit_text and audit_samples (cosines lie in [-1, 1]).
QUALITY_SETTINGS = {"quality_per_prompt": Integer(1), "similarity_threshold": Optional(Real(-1.0, 1.0)),
                    "context_threshold": Optional(Real(-1.0, 1.0))}

# GenerationSettings.
GENERATION_SETTINGS = {
    "temperature": Real(),  # > 0 when sampling, checked with do_sample
    "top_k": Optional(Integer(0)),  # 0 keeps every token, as None
    "top_p": Real(0.0, 1.0, open_low=True), "max_new_tokens": Integer(1), "n_samples": Integer(1, MAX_SAMPLES_PER_PROMPT),
    "batch_size": Integer(1), "seed": Seed(), "do_sample": Boolean(),
}

# Precision of sampling, perplexity and training: "auto" is bfloat16 where the device computes it natively.
DTYPES = ("auto", "bfloat16", "float32")
DEFAULT_DTYPE = "auto"
# HFGenerator ("auto" workers: one per core; Splits is "auto" or a count, as the cross-fitting splits).
HF_GENERATOR_SETTINGS = {"dtype": Options(DTYPES), "workers": Splits()}

REGULARIZERS = ("embedding", "sentiment")
TRAINING_METHODS = ("lora", "full")
POOLINGS = ("sensitive", "mean", "position")
TRAINING_DTYPES = ("float32", "bfloat16")  # DebiasConfig's: a study resolves "auto" for its device first

# DebiasConfig (the fairness weight lam is checked there: its message names it lambda, as the flag --lambdas).
DEBIAS_SETTINGS = {
    "regularizer": Options(REGULARIZERS), "steps": Integer(1), "batch_size": Integer(1), "learning_rate": Real(0.0, None, open_low=True),
    "max_length": Integer(1), "method": Options(TRAINING_METHODS), "lora_rank": Integer(1), "pooling": Options(POOLINGS),
    "dtype": Options(TRAINING_DTYPES), "checkpoint_every": Integer(1), "seed": Seed(),
}

ENDPOINTS = ("completions", "chat")

# OpenAICompatibleBackend.
ENDPOINT_SETTINGS = {
    "model": Text("naming the model the server serves"), "endpoint": Options(ENDPOINTS), "concurrency": Integer(1), "max_n": Integer(1),
    "timeout": Real(0.0, None, open_low=True), "max_retries": Integer(0), "send_seed": Boolean(),
}
