"""Cosine distance between h(x) and h(x̃) on SmolLM2-135M-Instruct, for each way of computing h.

Why the default representation of debiasing is the state at the sensitive token: the distance the
fairness loss starts from, per representation, over counterfactual pairs of the occupation and
country attributes (every value swapped, as in training). The texts are the training prompts of
the attribute followed by a neutral continuation of about 20 words, the shape of the sampled corpus.

    PYTHONPATH=src python benchmarks/representation_distances.py
"""

from __future__ import annotations

import os
import time

import torch
import torch.nn.functional as F

from fairpath.text._models import load_causal_lm
from fairpath.text._spec import FairnessSpec
from fairpath.text.debias import Representation, make_pairs, sentence_representations
from fairpath.text.debias._corpus import DEFAULT_PROMPTS

CONTINUATIONS = (
    " the meeting would start later than planned, because the train from the north was delayed again by the snow.",
    " everything seemed quiet on the street, and the shops were opening one after another in the cold morning.",
    " a long letter arrived with news about the old house, the garden and the people who used to live there.",
    " nobody expected the results to come so soon, and the whole team gathered around the table to read them.",
)
REPRESENTATIONS = {
    "mean, last two layers (previous default)": Representation(pooling="mean"),
    "sensitive token, last two layers (default)": Representation(pooling="sensitive"),
    "sensitive token, last layer only": Representation(layers=(-1,), pooling="sensitive"),
    "mean, last layer only": Representation(layers=(-1,), pooling="mean"),
}
N_PAIRS = 16


def pairs_for(attribute: str):
    spec = FairnessSpec.load(attribute)
    templates = DEFAULT_PROMPTS[attribute]
    texts = []
    for i in range(N_PAIRS):
        value = spec.values[i % len(spec.values)]
        prompt = templates[i % len(templates)].format(value=value.slots[spec.placeholders[0]], a=value.slots.get("article", "a"))
        texts.append(prompt + CONTINUATIONS[i % len(CONTINUATIONS)])
    pairs, _ = make_pairs(texts, spec, seed=0)
    return pairs


def mean_distance(model, tokenizer, pairs, representation: Representation) -> float:
    x = sentence_representations(model, tokenizer, [p.text for p in pairs], representation=representation,
                                 mention_ends=[p.end for p in pairs])
    cf = sentence_representations(model, tokenizer, [p.counterfactual for p in pairs], representation=representation,
                                  mention_ends=[p.counterfactual_end for p in pairs])
    return float((1 - F.cosine_similarity(x, cf, dim=-1)).mean())


def main() -> None:
    torch.manual_seed(0)
    started = time.perf_counter()
    model, tokenizer = load_causal_lm("default")
    pairs = {attribute: pairs_for(attribute) for attribute in ("occupation", "country")}
    print(f"SmolLM2-135M-Instruct, {len(pairs['occupation'])} occupation and {len(pairs['country'])} country pairs; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'representation':<45} {'occupation':>10} {'country':>10}")
    for name, representation in REPRESENTATIONS.items():
        row = [mean_distance(model, tokenizer, pairs[a], representation) for a in ("occupation", "country")]
        print(f"{name:<45} {row[0]:>10.4f} {row[1]:>10.4f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
