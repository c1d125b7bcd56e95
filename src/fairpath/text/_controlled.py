"""A generator with a known amount of bias, for checking the metrics end to end without a language model.

``PoolGenerator`` is a real :class:`GenerationBackend`: for a prompt filled with value ``v`` it
writes a sentence from a fixed positive pool with probability ``mixing[v]`` and otherwise from a
fixed negative pool, each sentence equally likely. The score distribution of value ``v`` is then the
mixture ``m_v P_pos + (1 - m_v) P_neg``, so for any scorer

    W1(P_a, P_b) = |m_a - m_b| * W1(P_pos, P_neg)

exactly (the CDFs differ by ``(m_a - m_b)(F_pos - F_neg)``), which gives the analytic individual and
group fairness that the estimates must recover.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Mapping, Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Probability, check_probability, validate_params
from fairpath.text._generation import GenerationBackend, GenerationSettings, SampleRequest, sample_uniforms
from fairpath.text._metrics import wasserstein1
from fairpath.text._spec import FairnessSpec

POSITIVE_POOL = (
    " enjoying a wonderful new life, and everyone is happy.",
    " having a great time with friends who love the place.",
    " proud of the excellent work and grateful for the support.",
    " thrilled about the beautiful city and its friendly people.",
    " celebrating a fantastic success with a joyful party.",
    " relaxing, smiling and feeling hopeful about the future.",
)
NEGATIVE_POOL = (
    " stuck in a terrible situation, and everyone is miserable.",
    " worried about the violence and the awful news.",
    " angry about the unfair treatment and the broken promises.",
    " afraid of the dangerous streets and the hostile people.",
    " mourning a painful loss after a horrible accident.",
    " exhausted, lonely and hopeless about the future.",
)


class PoolGenerator(GenerationBackend):
    """Writes from a positive or a negative sentence pool with value-dependent probability.

    Parameters
    ----------
    spec : FairnessSpec
        Maps each prompt back to its value.
    mixing : mapping value -> probability of the positive pool
        Values left out get ``default_mixing``; equal probabilities give an unbiased generator.
    """

    @validate_params({"default_mixing": Probability(open_ends=False)})
    def __init__(self, spec: FairnessSpec, *, mixing: Mapping[str, float] | None = None, default_mixing: float = 0.5,
                 positive: Sequence[str] = POSITIVE_POOL, negative: Sequence[str] = NEGATIVE_POOL):
        mixing = dict(mixing or {})
        unknown = sorted(set(mixing) - set(spec.value_names))
        if unknown:
            raise FairpathInputError(f"mixing names values {unknown} that attribute {spec.attribute!r} does not have")
        self.spec = spec
        self.mixing = {v: check_probability(f"mixing[{v!r}]", mixing.get(v, default_mixing), open_ends=False) for v in spec.value_names}
        self.positive, self.negative = tuple(positive), tuple(negative)
        prompts = spec.prompts()
        self._value_of_prompt = dict(zip(prompts["prompt"], prompts["value"]))

    @property
    def model_id(self) -> str:
        key = json.dumps([sorted(self.mixing.items()), self.positive, self.negative])
        return f"pool-generator-{hashlib.sha256(key.encode()).hexdigest()[:12]}"

    def generate_requests(self, requests: Sequence[SampleRequest], settings: GenerationSettings) -> list[str]:
        texts = []
        for prompt, sample_index in requests:
            if prompt not in self._value_of_prompt:
                raise FairpathInputError(f"PoolGenerator got prompt {prompt!r}, which its specification does not produce")
            choose_pool, choose_sentence = sample_uniforms(prompt, sample_index, settings.seed, 2)
            pool = self.positive if choose_pool < self.mixing[self._value_of_prompt[prompt]] else self.negative
            texts.append(pool[min(int(choose_sentence * len(pool)), len(pool) - 1)])
        return texts

    def pool_distance(self, scorer) -> float:
        """W1 between the score distributions of the two pools (each sentence equally likely)."""
        return wasserstein1(scorer.score(list(self.positive)), scorer.score(list(self.negative)))

    def expected_individual_fairness(self, scorer) -> float:
        """Mean over pairs of values of |m_a - m_b| W1(pos, neg) (every template behaves alike)."""
        gaps = [abs(a - b) for a, b in itertools.combinations(self.mixing.values(), 2)]
        return float(np.mean(gaps)) * self.pool_distance(scorer)

    def expected_group_fairness(self, scorer) -> float:
        """Mean over subgroups of |mean m in subgroup - mean m overall| W1(pos, neg), equal samples per value."""
        overall = np.mean(list(self.mixing.values()))
        by_group = {}
        for value in self.spec.values:
            by_group.setdefault(value.subgroup, []).append(self.mixing[value.name])
        gaps = [abs(np.mean(ms) - overall) for ms in by_group.values()]
        return float(np.mean(gaps)) * self.pool_distance(scorer)
