"""The settings of one debiasing fine-tuning run, in a module without torch, so that the command line
takes its defaults and choices from them without loading a model library."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fairpath._exceptions import FairpathInputError
from fairpath._validation import validate_params
from fairpath.text._parameters import DEBIAS_SETTINGS

TRAINING_LOG_NAME = "fairpath_debias.json"  # in a trained model's folder: its settings and loss history


@validate_params(DEBIAS_SETTINGS, on="__post_init__")
@dataclass(kw_only=True)
class DebiasConfig:
    """Settings of one debiasing fine-tuning run (one regularizer, one λ); validated on creation."""

    regularizer: str = "embedding"
    lam: float = 1.0
    steps: int = 100
    batch_size: int = 8
    learning_rate: float = 5e-4
    max_length: int = 48
    method: str = "lora"
    lora_rank: int = 8
    lora_alpha: int = 16
    lora_target_modules: str | list[str] = "all-linear"
    pooling: str = "sensitive"
    dtype: str = "float32"
    layers: tuple[int, ...] = (-2, -1)
    normalisation: str = "final_norm"
    skip_first_token: bool = True
    checkpoint_every: int = 20
    seed: int = 0

    def __post_init__(self):
        self.layers = self.representation.layers  # validated, and a tuple also when loaded from JSON
        if not isinstance(self.lam, (int, float)) or not math.isfinite(self.lam) or self.lam < 0:
            raise FairpathInputError(f"lambda must be a finite number >= 0 (it weighs the fairness loss), got {self.lam!r}")
        if self.regularizer == "sentiment" and self.pooling == "position":
            raise FairpathInputError(
                "regularizer 'sentiment' compares f_s(h) of one vector per sentence, the kind the sentiment head is "
                "fitted on; pooling='position' applies to the embedding regularizer only: use pooling 'sensitive' or 'mean'"
            )

    @property
    def representation(self):
        """How h is computed (see :class:`Representation`)."""
        from fairpath.text.debias._representations import Representation

        return Representation(layers=tuple(self.layers), normalisation=self.normalisation, pooling=self.pooling,
                              skip_first_token=self.skip_first_token)

    @property
    def autocast_dtype(self):
        """The torch dtype of autocast for forward and backward (None: plain fp32)."""
        import torch

        return torch.bfloat16 if self.dtype == "bfloat16" else None
