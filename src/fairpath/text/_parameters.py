"""The declared settings of the text audits (see ``fairpath._validation.validate_params``) and
:class:`GenerationSettings`, in a module without torch, so that the command line takes its flag types,
defaults and choices from them without loading a model library."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from fairpath._exceptions import FairpathInputError
from fairpath._validation import (MAX_PERMUTATIONS, MAX_SAMPLES_PER_PROMPT, AutoInteger, Boolean, Integer, Optional, Options, Probability, Real, Seed, Splits,
                                  Text, validate_params)

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
# num_threads: torch threads while generating ("auto": those left idle; None: torch's own setting).
HF_GENERATOR_SETTINGS = {"dtype": Options(DTYPES), "workers": Splits(), "num_threads": Optional(AutoInteger(1))}

REGULARIZERS = ("embedding", "sentiment")
TRAINING_METHODS = ("lora", "full")
POOLINGS = ("sensitive", "mean", "position")
NORMALISATIONS = ("final_norm", "l2", "none")
TRAINING_DTYPES = ("float32", "bfloat16")  # DebiasConfig's: a study resolves "auto" for its device first

# DebiasConfig (the fairness weight lam is checked there: its message names it lambda, as the flag --lambdas).
DEBIAS_SETTINGS = {
    "regularizer": Options(REGULARIZERS), "steps": Integer(1), "batch_size": Integer(1), "learning_rate": Real(0.0, None, open_low=True),
    "max_length": Integer(1), "method": Options(TRAINING_METHODS), "lora_rank": Integer(1), "pooling": Options(POOLINGS),
    "dtype": Options(TRAINING_DTYPES), "checkpoint_every": Integer(1), "seed": Seed(), "lora_alpha": Integer(1),
    "normalisation": Options(NORMALISATIONS), "skip_first_token": Boolean(),
}

ENDPOINTS = ("completions", "chat")

# OpenAICompatibleBackend.
ENDPOINT_SETTINGS = {
    "model": Text("naming the model the server serves"), "endpoint": Options(ENDPOINTS), "concurrency": Integer(1), "max_n": Integer(1),
    "timeout": Real(0.0, None, open_low=True), "max_retries": Integer(0), "send_seed": Boolean(),
}

# Bumped whenever the sampling algorithm changes, so stored samples from another algorithm never mix in.
SAMPLER_VERSION = 4
_SAMPLE_DEFINING = ("temperature", "top_k", "top_p", "max_new_tokens", "seed", "do_sample")


@validate_params(GENERATION_SETTINGS, on="__post_init__")
@dataclass(frozen=True, kw_only=True)
class GenerationSettings:
    """How continuations are sampled (validated on creation: a bad value raises FairpathInputError).

    Parameters
    ----------
    temperature : float
        Softmax temperature (> 0 when sampling); 1.0 as in Huang et al. (2020).
    top_k : int or None
        Keep only the k most likely tokens; None or 0 keeps all.
    top_p : float
        Nucleus sampling: keep the smallest set of tokens whose probability reaches top_p; 1.0 keeps all.
    max_new_tokens : int
        Tokens generated per sample at most (50 in the paper); rows stop earlier at EOS.
    n_samples : int
        Samples per prompt (1000 in the paper).
    batch_size : int
        Rows decoded together (by each worker); larger batches amortise reading the weights. 256 (default)
        decoded SmolLM2 fastest on a 2-core CPU: 2,000 samples of 20 tokens with two workers took 72 s
        in batches of 64, 62 s of 128 and 51 s of 256.
    seed : int
        Makes runs reproducible.
    do_sample : bool
        False decodes greedily (temperature, top_k, top_p unused; every sample is the same).
    """

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float = 1.0
    max_new_tokens: int = 50
    n_samples: int = 20
    batch_size: int = 256
    seed: int = 0
    do_sample: bool = True

    def __post_init__(self):
        if self.top_k == 0:  # one meaning for "keep every token" (the settings hash sees None)
            object.__setattr__(self, "top_k", None)
        if self.do_sample and self.temperature <= 0:
            raise FairpathInputError(f"temperature must be > 0 when sampling, got {self.temperature} (use do_sample=False for greedy decoding)")

    @property
    def settings_hash(self) -> str:
        """A short hash of everything that defines the samples (not n_samples, not batch_size)."""
        fields = {name: getattr(self, name) for name in _SAMPLE_DEFINING}
        fields["sampler_version"] = SAMPLER_VERSION
        return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def to_dict(self) -> dict:
        return asdict(self)
