"""A scripted decision-maker for the LLM audit tests: its probability of "yes" is a known function of the rendered
X, Z and W of the built-in ``synthetic`` prompt, so every effect of its decisions is known."""

from __future__ import annotations

import re

import numpy as np

from fairpath.text import GenerationBackend

_NUMBER = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
_ROW = re.compile(rf"Applicant record: z1 = {_NUMBER}, z2 = {_NUMBER}, w1 = {_NUMBER}, w2 = {_NUMBER}\.")
_GROUP = re.compile(rf"Group: {_NUMBER}\. ")


def read_row(prompt: str) -> tuple[float | None, np.ndarray, np.ndarray]:
    """(x or None when withheld, z, w) as the prompt writes them."""
    row = _ROW.search(prompt)
    group = _GROUP.search(prompt)
    values = [float(v) for v in row.groups()]
    return (float(group.group(1)) if group else None), np.array(values[:2]), np.array(values[2:])


class ScriptedDecider(GenerationBackend):
    """P(yes) = ``probability(x, z, w)`` (x = ``withheld_x`` when the prompt withholds X); answers sampled from it.

    ``logprobs=False`` makes it a backend without probabilities (every row NaN), so the audit samples and parses."""

    def __init__(self, probability, withheld_x: float = 0.0, logprobs: bool = True, answers=("Yes.", "no")):
        self.probability, self.withheld_x, self.logprobs, self.answers = probability, withheld_x, logprobs, answers
        self.asked = 0

    @property
    def model_id(self) -> str:
        return "scripted-decider"

    def yes(self, prompt: str) -> float:
        x, z, w = read_row(prompt)
        return float(self.probability(self.withheld_x if x is None else x, z[None, :], w[None, :])[0])

    def answer_probabilities(self, prompts, options, *, batch_size=64):
        self.asked += len(prompts)
        if not self.logprobs:
            return np.full((len(prompts), len(options)), np.nan)
        yes = np.array([self.yes(p) for p in prompts])
        return np.column_stack([yes, 1 - yes])  # options in the prompt's order: yes, no

    def generate_requests(self, requests, settings):
        out = []
        for prompt, index in requests:
            rng = np.random.default_rng([settings.seed, index, abs(hash(prompt)) % 2**32])
            out.append(self.answers[0] if rng.uniform() < self.yes(prompt) else self.answers[1])
        return out
