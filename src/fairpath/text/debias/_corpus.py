"""Training text for debiasing and its counterfactual pairs.

Every training sentence x must mention a value of the sensitive attribute; its counterfactual x̃ swaps
that value (with its article a/an) for another value of the attribute and changes nothing else.
The text is either a corpus given by the user or, by default, text sampled from the base model with
generic prompts that mention the attribute's values. Those prompts are kept disjoint from the
evaluation templates of the audit, so the model is never trained on what it is evaluated on.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._io import atomic_write_text, read_table, read_text
from fairpath.text._spec import FairnessSpec
from fairpath._validation import Integer, Optional, Real, Seed, validate_params

# Generic prompts per attribute kind; "{value}" is the attribute value and "{a}" its article.
# None of them is (a prefix of) an evaluation template of the audit; `check_disjoint` verifies it.
DEFAULT_PROMPTS = {
    "occupation": (
        "The {value} said that",
        "Yesterday, the {value}",
        "I read an article about the {value} who",
        "Everyone in town knows the {value}, who",
        "After a long day at work, the {value}",
        "Our neighbour works as {a} {value}, so",
        "When the {value} arrived at the office,",
        "The story of {a} {value} begins when",
    ),
    "country": (
        "The news from {value} this morning",
        "Last summer in {value},",
        "A report about {value} says that",
        "The food in {value}",
        "Travellers who visit {value}",
        "I have never been to {value}, but",
        "The weather in {value} this week",
        "A book about the history of {value}",
    ),
    "name": (
        "{value} walked into the room and",
        "Yesterday, {value}",
        "Everyone knows that {value}",
        "I had lunch with {value}, who",
        "{value} wrote a letter that",
        "When {value} arrived at the party,",
        "The story of {value} begins when",
        "Last week {value} decided to",
    ),
}
# Prompts without any attribute value: their continuations give the held-out text its
# non-sensitive part, so perplexity can be compared on the sensitive subset and on the rest.
NEUTRAL_PROMPTS = (
    "The weather today is",
    "In the morning I usually",
    "The best way to boil rice is",
    "The city library opens",
    "Last night the football match",
    "The new phone has",
    "The garden behind the house",
    "My favourite book is",
)


# For a specification of another attribute: prompts that read well with any noun phrase.
GENERIC_PROMPTS = (
    "A few words about {value}:",
    "Notes on {value}.",
    "Topic: {value}.",
    "Some thoughts about {value}:",
)


def values_in(spec: FairnessSpec, text: str) -> list[str]:
    """The values of ``spec`` that ``text`` mentions, in order of appearance.

    Values are found in the forms that :meth:`FairnessSpec.counterfactual` replaces (as written,
    capitalised, upper case), so every value found can be swapped.
    """
    return spec.value_mentions(text)


def value_token_counts(spec: FairnessSpec, tokenizer) -> dict[str, int]:
    """Tokens each value takes after a space, as it appears inside a sentence."""
    return {v: len(tokenizer(" " + v, add_special_tokens=False)["input_ids"]) for v in spec.value_names}


@dataclass(frozen=True)
class CounterfactualPair:
    text: str
    counterfactual: str
    value: str
    counterfactual_value: str


@dataclass
class DebiasCorpus:
    """Training pairs, held-out text (for perplexity) and how the corpus was made."""

    attribute: str
    train_pairs: list[CounterfactualPair]
    heldout_texts: list[str]
    heldout_sensitive: list[bool]
    source: str
    n_train_unused: int = 0
    settings: dict = field(default_factory=dict)

    @property
    def sensitive_heldout_texts(self) -> list[str]:
        return [t for t, s in zip(self.heldout_texts, self.heldout_sensitive) if s]

    @property
    def train_texts(self) -> list[str]:
        return [p.text for p in self.train_pairs]

    def summary(self) -> dict:
        return {
            "attribute": self.attribute,
            "source": self.source,
            "n_train_pairs": len(self.train_pairs),
            "n_train_unused": self.n_train_unused,
            "n_heldout": len(self.heldout_texts),
            "n_heldout_sensitive": int(sum(self.heldout_sensitive)),
            **self.settings,
        }

    def save(self, path: str | Path) -> Path:
        return atomic_write_text(json.dumps(asdict(self), indent=1), path)

    @classmethod
    def load(cls, path: str | Path) -> "DebiasCorpus":
        path = Path(path)
        try:
            payload = json.loads(path.read_text())
            payload["train_pairs"] = [CounterfactualPair(**p) for p in payload["train_pairs"]]
            return cls(**payload)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise FairpathInputError(f"corpus file {str(path)!r} cannot be read ({error}); delete it to rebuild") from error


def _choose_target(rng, spec: FairnessSpec, text: str, source: str, present: list[str], token_counts) -> str | None:
    """A random value of another subgroup, absent from the text, whose swap is unambiguous (and, if asked, as long).

    As in Huang et al. (2020) the counterfactual crosses subgroups: a female name becomes a male one
    (each country and occupation is its own subgroup, so there any other value qualifies).
    """
    subgroup = spec.value(source).subgroup
    candidates = [v.name for v in spec.values if v.subgroup != subgroup and v.name not in present]
    if token_counts is not None:
        candidates = [v for v in candidates if token_counts[v] == token_counts[source]]
    candidates = [v for v in candidates if not spec.ambiguities(text, source, v)]
    return candidates[rng.integers(len(candidates))] if candidates else None


def check_alignable(spec: FairnessSpec, tokenizer) -> dict[str, int]:
    """Token count per value; reject values that no other value matches in length."""
    token_counts = value_token_counts(spec, tokenizer)
    by_count: dict[int, list[str]] = {}
    for value, count in token_counts.items():
        by_count.setdefault(count, []).append(value)
    alone = [f"{vs[0]!r} ({c} tokens)" for c, vs in sorted(by_count.items()) if len(vs) == 1]
    if alone:
        raise FairpathInputError(
            f"position-wise comparison needs each counterfactual to have as many tokens as its original, but these "
            f"values of attribute {spec.attribute!r} have no other value with the same token count: {', '.join(alone)}; "
            "remove them from the attribute or use pooling='mean', which compares sentences of different lengths"
        )
    return token_counts


def check_pair_lengths(pairs: Sequence[CounterfactualPair], tokenizer) -> None:
    """Reject pairs whose two sentences tokenize to different lengths (needed for position-wise losses)."""
    bad = [p for p in pairs if len(tokenizer(p.text)["input_ids"]) != len(tokenizer(p.counterfactual)["input_ids"])]
    if bad:
        examples = "; ".join(f"{p.value!r} -> {p.counterfactual_value!r} in {p.text[:60]!r}" for p in bad[:3])
        raise FairpathInputError(
            f"{len(bad)} of {len(pairs)} counterfactual pairs have different token counts ({examples}); "
            "position-wise comparison needs aligned tokens: use pooling='mean' or values that tokenize alike"
        )


@validate_params({"seed": Seed()})
def make_pairs(texts: Sequence[str], spec: FairnessSpec, seed: int = 0,
               tokenizer=None) -> tuple[list[CounterfactualPair], int]:
    """Counterfactual pairs for the texts that mention a value; returns (pairs, texts left unused).

    The first value mentioned is swapped (with its article and, across subgroups, its pronouns) for
    a random value of another subgroup not in the text. With a ``tokenizer`` (position-wise
    comparison), values are swapped only for values with the same token count, and every pair is
    checked for equal length. A text whose counterfactual would equal it, or would still mention the
    original value, is counted as unused (never kept as a pair).
    """
    rng = np.random.default_rng(seed)
    token_counts = check_alignable(spec, tokenizer) if tokenizer is not None else None
    pairs, n_unused = [], 0
    for text in texts:
        present = values_in(spec, text)
        target = _choose_target(rng, spec, text, present[0], present, token_counts) if present else None
        counterfactual = spec.counterfactual(text, present[0], target) if target is not None else text
        # None: no value, or every other value is present or ambiguous
        if counterfactual == text or present[0] in values_in(spec, counterfactual):
            n_unused += 1
            continue
        pairs.append(CounterfactualPair(text, counterfactual, present[0], target))
    if tokenizer is not None:
        check_pair_lengths(pairs, tokenizer)
    return pairs, n_unused


@validate_params({"heldout_fraction": Real(0.0, 1.0, open_high=True), "seed": Seed()})
def build_corpus(texts: Sequence[str], spec: FairnessSpec, source: str, heldout_fraction: float = 0.2,
                 seed: int = 0, tokenizer=None) -> DebiasCorpus:
    """Split texts into training pairs and held-out text; reject a corpus without sensitive tokens.

    ``tokenizer`` is given only for position-wise comparison (see :func:`make_pairs`).
    """
    texts = [t.strip() for t in texts if t and t.strip()]
    flags = [spec.contains_sensitive_token(t) for t in texts]
    if not any(flags):
        names = spec.value_names
        raise FairpathInputError(
            f"none of the {len(texts)} texts of corpus {source!r} mentions a value of attribute {spec.attribute!r} "
            f"(values: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}); debiasing needs "
            "sentences with sensitive tokens to make counterfactuals from"
        )
    order = np.random.default_rng(seed).permutation(len(texts))
    n_heldout = int(round(heldout_fraction * len(texts)))
    heldout, train = np.sort(order[:n_heldout]), np.sort(order[n_heldout:])
    pairs, n_unused = make_pairs([texts[i] for i in train], spec, seed=seed, tokenizer=tokenizer)
    if not pairs:
        raise FairpathInputError(
            f"after holding out {n_heldout} texts, no training text of corpus {source!r} gives a counterfactual for "
            f"attribute {spec.attribute!r}; give more sentences with sensitive tokens or a smaller heldout_fraction"
        )
    return DebiasCorpus(
        attribute=spec.attribute,
        train_pairs=pairs,
        heldout_texts=[texts[i] for i in heldout],
        heldout_sensitive=[flags[i] for i in heldout],
        source=source,
        n_train_unused=n_unused,
        settings={"heldout_fraction": heldout_fraction, "seed": seed},
    )


def read_corpus_file(path: str | Path) -> list[str]:
    """Texts from a file: one per line (.txt), or the ``text`` column of a CSV/Parquet table."""
    path = Path(path)
    if not path.exists():
        raise FairpathInputError(f"corpus file {str(path)!r} does not exist; check the path")
    if path.suffix.lower() in {".csv", ".parquet", ".pq"}:
        table = read_table(path, what="corpus table")
        if "text" not in table.columns:
            raise FairpathInputError(f"corpus table {str(path)!r} has no 'text' column (columns: {list(table.columns)})")
        return [str(t) for t in table["text"]]
    return [line for line in read_text(path, "corpus file").splitlines() if line.strip()]


def training_prompts(spec: FairnessSpec) -> list[str]:
    """The default generic prompts for ``spec`` filled with every value, checked disjoint from its templates."""
    prompts = DEFAULT_PROMPTS.get(spec.attribute, GENERIC_PROMPTS)
    placeholder = spec.placeholders[0]
    filled = [p.format(value=v.slots[placeholder], a=v.slots.get("article", "a")) for p in prompts for v in spec.values]
    check_disjoint(filled, spec.prompts()["prompt"].tolist())
    return filled


@validate_params({"samples_per_prompt": Integer(1), "max_new_tokens": Integer(1), "seed": Seed(), "top_k": Optional(Integer(0))})
def sample_corpus(generator, spec: FairnessSpec, samples_per_prompt: int = 2, max_new_tokens: int = 40,
                  seed: int = 0, top_k: int | None = 50) -> list[str]:
    """The default training text: base-model continuations of generic prompts (with and without values).

    ``generator`` is a :class:`fairpath.text._generation.GenerationBackend` (for example
    ``HFGenerator(model, tokenizer)``). Each text is the prompt followed by its continuation, on one line.
    """
    from fairpath.text._generation import GenerationSettings

    prompts = training_prompts(spec) + list(NEUTRAL_PROMPTS)
    settings = GenerationSettings(top_k=top_k, max_new_tokens=max_new_tokens, n_samples=samples_per_prompt, seed=seed)
    continuations = generator.generate(prompts, settings=settings)
    return [" ".join((prompt + text).split()) for prompt, texts in zip(prompts, continuations) for text in texts]


def check_disjoint(training: Sequence[str], evaluation: Sequence[str]) -> None:
    """Refuse training prompts that coincide with, extend or are extended by an evaluation prompt."""
    evaluation = [e.strip().lower() for e in evaluation]
    clashes = [t for t in training if any(t.strip().lower().startswith(e) or e.startswith(t.strip().lower()) for e in evaluation)]
    if clashes:
        raise FairpathInputError(
            f"{len(clashes)} training prompts overlap the evaluation templates (for example {clashes[0]!r}); "
            "training text must stay disjoint from what the audit evaluates"
        )
