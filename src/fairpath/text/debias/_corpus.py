"""Training text for debiasing and its counterfactual pairs.

Every training sentence x must mention a value of the sensitive attribute; its counterfactual x̃ swaps
every value it mentions (with its article a/an) for another value of the attribute and changes nothing
else. The text is either a corpus given by the user or, by default, text sampled from the base model
with generic prompts that mention the attribute's values. Those prompts are kept disjoint from the
evaluation templates of the audit, so the model is never trained on what it is evaluated on.

The sampled text is drawn exactly as the audit draws continuations (temperature 1, the full
vocabulary, the text kept as sampled), and training puts the language-model loss on the continuation
only (``CounterfactualPair.continuation_start``): the base model's expected gradient of that loss
over its own samples is zero, so fine-tuning without the regularizer (λ = 0) moves the model only by
optimiser noise. Texts sampled with top-k = 50 were not the model's distribution: training on them
sharpened the model's own pattern (Country: individual-fairness excess 0.0040 at the base, 0.0177
after plain fine-tuning, paired p 0.001).

The held-out text (perplexity before and after fine-tuning) must be text the fine-tuning never saw
nor anything like it. Continuations of the prompts the training text comes from are not: fine-tuning
on 80% of them lowered the perplexity of the other 20% by 37-49% whatever λ, so that perplexity
measured fitting to the prompts, not the cost of debiasing. A sampled corpus therefore holds out
whole prompts (:data:`HELDOUT_PROMPTS` of the attribute's prompts and of the neutral ones, every
value of them): no training pair comes from a held-out prompt. A user corpus has no prompts, so it
keeps a random split of its texts.
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
# Share of each family of prompts (the attribute's, the neutral ones) whose continuations are held out
# whole: the last quarter, at least one (2 of 8). Fixed, not drawn, so every seed holds out the same prompts.
HELDOUT_PROMPT_SHARE = 0.25


def heldout_prompts(prompts: Sequence[str]) -> list[str]:
    """The prompts of a family held out of training (see :data:`HELDOUT_PROMPT_SHARE`)."""
    n_heldout = max(1, int(round(HELDOUT_PROMPT_SHARE * len(prompts))))
    return list(prompts[len(prompts) - n_heldout:])


@dataclass(frozen=True)
class SampledTexts:
    """The default corpus as sampled: each text (prompt and continuation as sampled), the prompt it continues,
    and whether that prompt is held out.

    ``heldout_prompts`` names the held-out prompts (templates with ``{value}`` for the attribute's).
    :func:`build_corpus` holds out exactly the texts of those prompts.
    """

    texts: list[str]
    prompts: list[str]
    heldout: list[bool]
    heldout_prompts: list[str]
    sampling: dict = field(default_factory=dict)

    def __post_init__(self):
        if not len(self.texts) == len(self.prompts) == len(self.heldout) or not all(
                text.startswith(prompt) for text, prompt in zip(self.texts, self.prompts)):
            raise FairpathInputError(
                f"sampled texts ({len(self.texts)}), their prompts ({len(self.prompts)}) and held-out flags "
                f"({len(self.heldout)}) must describe the same texts, each text starting with its prompt; build them "
                "with sample_corpus"
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
    """A training sentence x and its counterfactual x̃, with where their sensitive mention ends.

    ``value`` is the first value x mentions and ``counterfactual_value`` the value it became; any
    other value mentioned was swapped too. ``end`` and ``counterfactual_end`` are the character ends
    of that first mention in ``text`` and in ``counterfactual``: the representation is read at the
    token that ends there (pooling ``"sensitive"``), so training needs no specification.
    ``continuation_start`` is where the sampled continuation begins in ``text`` (the prompt's length;
    0 for a user's text, which has no prompt): the language-model loss covers the tokens after it.
    """

    text: str
    counterfactual: str
    value: str
    counterfactual_value: str
    end: int
    counterfactual_end: int
    continuation_start: int = 0


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

    @property
    def train_mentions(self) -> tuple[list[str], list[int]]:
        """The distinct training texts and the character end of each one's first sensitive mention
        (what :func:`fit_sentiment_projection` reads with the sensitive-token representation)."""
        ends = {p.text: p.end for p in self.train_pairs}
        return list(ends), list(ends.values())

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


def _choose_targets(rng, spec: FairnessSpec, text: str, present: list[str], token_counts) -> dict[str, str] | None:
    """Each value present -> a distinct random value of another subgroup, absent from the text, whose swap is
    unambiguous (and, if asked, as long); None when some value has none left or the swaps together are ambiguous.

    As in Huang et al. (2020) the counterfactual crosses subgroups: a female name becomes a male one
    (each country and occupation is its own subgroup, so there any other value qualifies).
    """
    swaps: dict[str, str] = {}
    for source in present:
        subgroup = spec.value(source).subgroup
        candidates = [v.name for v in spec.values
                      if v.subgroup != subgroup and v.name not in present and v.name not in swaps.values()]
        if token_counts is not None:
            candidates = [v for v in candidates if token_counts[v] == token_counts[source]]
        candidates = [v for v in candidates if not spec.ambiguities(text, source, v)]
        if not candidates:
            return None
        swaps[source] = candidates[rng.integers(len(candidates))]
    return None if spec.swap_ambiguities(text, swaps) else swaps


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
def make_pairs(texts: Sequence[str], spec: FairnessSpec, *, seed: int = 0, tokenizer=None,
               continuation_starts: Sequence[int] | None = None) -> tuple[list[CounterfactualPair], int]:
    """Counterfactual pairs for the texts that mention a value; returns (pairs, texts left unused).

    Every value mentioned is swapped (with its article and, across subgroups, its pronouns), each for
    a distinct random value of another subgroup not in the text: a counterfactual that kept one of
    the original values ("the nurse and the doctor" -> "the lawyer and the doctor") would still carry
    the attribute the pair is meant to vary. With a ``tokenizer`` (position-wise comparison), values
    are swapped only for values with the same token count, and every pair is checked for equal
    length. A text whose counterfactual would equal it, or would still mention an original value, is
    counted as unused (never kept as a pair). ``continuation_starts`` (one per text, default 0) is where
    each text's sampled continuation begins (:attr:`CounterfactualPair.continuation_start`).
    """
    rng = np.random.default_rng(seed)
    token_counts = check_alignable(spec, tokenizer) if tokenizer is not None else None
    starts = [0] * len(texts) if continuation_starts is None else list(continuation_starts)
    pairs, n_unused = [], 0
    for text, start in zip(texts, starts):
        present = values_in(spec, text)
        swaps = _choose_targets(rng, spec, text, present, token_counts) if present else None
        counterfactual = spec.swap(text, swaps) if swaps is not None else text
        # None: no value, or some value has no other value left that is absent and unambiguous
        if counterfactual == text or set(present) & set(values_in(spec, counterfactual)):
            n_unused += 1
            continue
        pairs.append(CounterfactualPair(text, counterfactual, present[0], swaps[present[0]],
                                        spec.first_mention_end(text), spec.first_mention_end(counterfactual), start))
    if tokenizer is not None:
        check_pair_lengths(pairs, tokenizer)
    return pairs, n_unused


@validate_params({"heldout_fraction": Real(0.0, 1.0, open_high=True), "seed": Seed()})
def build_corpus(texts: Sequence[str] | SampledTexts, spec: FairnessSpec, *, source: str, heldout_fraction: float = 0.2,
                 seed: int = 0, tokenizer=None) -> DebiasCorpus:
    """Split texts into training pairs and held-out text; reject a corpus without sensitive tokens.

    Texts sampled by :func:`sample_corpus` are split by prompt: the texts of its held-out prompts are
    the held-out text and nothing else is (``heldout_fraction`` does not apply). Other texts (a
    user's corpus, which has no prompts) are split at random, ``heldout_fraction`` of them held out.
    ``tokenizer`` is given only for position-wise comparison (see :func:`make_pairs`).
    """
    if isinstance(texts, SampledTexts):
        settings = {"heldout_prompts": list(texts.heldout_prompts), "seed": seed, "sampling": texts.sampling}
        # as sampled (only trailing blanks dropped): the model's own text, its prompt a prefix of it
        kept = [(t.rstrip(), h, len(p)) for t, h, p in zip(texts.texts, texts.heldout, texts.prompts) if t[len(p):].strip()]
        texts, is_heldout = [t for t, _, _ in kept], np.array([h for _, h, _ in kept], dtype=bool)
        starts = [start for _, _, start in kept]
    else:
        texts = [t.strip() for t in texts if t and t.strip()]
        is_heldout, starts = None, [0] * len(texts)
    flags = [spec.contains_sensitive_token(t) for t in texts]
    if not any(flags):
        names = spec.value_names
        raise FairpathInputError(
            f"none of the {len(texts)} texts of corpus {source!r} mentions a value of attribute {spec.attribute!r} "
            f"(values: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}); debiasing needs "
            "sentences with sensitive tokens to make counterfactuals from"
        )
    if is_heldout is None:
        order = np.random.default_rng(seed).permutation(len(texts))
        n_heldout = int(round(heldout_fraction * len(texts)))
        heldout, train = np.sort(order[:n_heldout]), np.sort(order[n_heldout:])
        settings = {"heldout_fraction": heldout_fraction, "seed": seed}
    else:
        heldout, train = np.flatnonzero(is_heldout), np.flatnonzero(~is_heldout)
    pairs, n_unused = make_pairs([texts[i] for i in train], spec, seed=seed, tokenizer=tokenizer,
                                 continuation_starts=[starts[i] for i in train])
    if not pairs:
        raise FairpathInputError(
            f"after holding out {len(heldout)} texts, no training text of corpus {source!r} gives a counterfactual for "
            f"attribute {spec.attribute!r}; give more sentences with sensitive tokens or a smaller heldout_fraction"
        )
    return DebiasCorpus(
        attribute=spec.attribute,
        train_pairs=pairs,
        heldout_texts=[texts[i] for i in heldout],
        heldout_sensitive=[flags[i] for i in heldout],
        source=source,
        n_train_unused=n_unused,
        settings=settings,
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
def sample_corpus(generator, spec: FairnessSpec, *, samples_per_prompt: int = 2, max_new_tokens: int = 40,
                  seed: int = 0, top_k: int | None = None) -> SampledTexts:
    """The default training text: base-model continuations of generic prompts (with and without values).

    ``generator`` is a :class:`fairpath.text._generation.GenerationBackend` (for example
    ``HFGenerator(model, tokenizer=tokenizer)``). Each text is the prompt followed by its continuation exactly
    as sampled, and keeps its prompt; the prompts of :func:`heldout_prompts` (of the attribute's prompts,
    with every value, and of :data:`NEUTRAL_PROMPTS`) are marked held out. Sampled as the audit samples
    (temperature 1, every token: ``top_k`` None), so that plain fine-tuning on the text is a no-op in
    expectation (see the module docstring); a ``top_k`` samples a sharpened distribution.
    """
    from fairpath.text._parameters import GenerationSettings

    templates = DEFAULT_PROMPTS.get(spec.attribute, GENERIC_PROMPTS)
    held = heldout_prompts(templates) + heldout_prompts(NEUTRAL_PROMPTS)
    filled = training_prompts(spec)  # template by template, every value of each
    prompt_heldout = [templates[i // len(spec.values)] in held for i in range(len(filled))]
    prompts = filled + list(NEUTRAL_PROMPTS)
    prompt_heldout += [p in held for p in NEUTRAL_PROMPTS]
    settings = GenerationSettings(top_k=top_k, max_new_tokens=max_new_tokens, n_samples=samples_per_prompt, seed=seed)
    continuations = generator.generate(prompts, settings=settings)
    rows = [(prompt + text, prompt, flag) for prompt, flag, texts in zip(prompts, prompt_heldout, continuations) for text in texts]
    sampling = {"temperature": settings.temperature, "top_k": settings.top_k, "top_p": settings.top_p,
                "max_new_tokens": max_new_tokens, "samples_per_prompt": samples_per_prompt}
    return SampledTexts(texts=[r[0] for r in rows], prompts=[r[1] for r in rows], heldout=[r[2] for r in rows],
                        heldout_prompts=held, sampling=sampling)


def check_disjoint(training: Sequence[str], evaluation: Sequence[str]) -> None:
    """Refuse training prompts that coincide with, extend or are extended by an evaluation prompt."""
    evaluation = [e.strip().lower() for e in evaluation]
    clashes = [t for t in training if any(t.strip().lower().startswith(e) or e.startswith(t.strip().lower()) for e in evaluation)]
    if clashes:
        raise FairpathInputError(
            f"{len(clashes)} training prompts overlap the evaluation templates (for example {clashes[0]!r}); "
            "training text must stay disjoint from what the audit evaluates"
        )
