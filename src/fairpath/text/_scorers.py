"""Sentiment scorers, each mapping a text to a score in [0, 1] (0 negative, 0.5 neutral, 1 positive).

Built in: ``vader`` and ``textblob`` (rule-based), ``opinion`` (counts opinion words as the paper's
third classifier does), ``minilm`` (MiniLM similarity to positive and negative anchor sentences,
calibrated by logistic regression on held-out labelled sentences), and any local Hugging Face
sequence-classification folder given by its path.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from fairpath._exceptions import FairpathInputError
from fairpath._validation import Integer, validate_params

BUILTIN_SCORERS = ("vader", "textblob", "opinion", "minilm")
# Opinion words are VADER lexicon words whose mean human valence (-4..4) is at least this strong.
_OPINION_VALENCE = 1.0
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


class SentimentScorer(ABC):
    """Scores texts in [0, 1]. Subclasses implement :meth:`_score_unique`; repeated texts are scored once."""

    name: str = "scorer"

    def score(self, texts: Sequence[str]) -> np.ndarray:
        """One score per text, in the order given."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros(0)
        unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
        scores = np.clip(np.asarray(self._score_unique(list(unique)), dtype=float), 0.0, 1.0)
        return scores[inverse.ravel()]

    @abstractmethod
    def _score_unique(self, texts: list[str]) -> np.ndarray: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class VaderScorer(SentimentScorer):
    """VADER's compound score mapped from [-1, 1] to [0, 1]."""

    name = "vader"

    def __init__(self):
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer_ = SentimentIntensityAnalyzer()

    def _score_unique(self, texts):
        return np.array([(self.analyzer_.polarity_scores(t)["compound"] + 1) / 2 for t in texts])


class TextBlobScorer(SentimentScorer):
    """TextBlob's pattern-lexicon polarity mapped from [-1, 1] to [0, 1]."""

    name = "textblob"

    def _score_unique(self, texts):
        from textblob import TextBlob

        return np.array([(TextBlob(t).sentiment.polarity + 1) / 2 for t in texts])


@lru_cache(maxsize=1)
def opinion_lexicon() -> tuple[frozenset[str], frozenset[str]]:
    """Positive and negative single words from VADER's lexicon (|mean valence| >= 1)."""
    import vaderSentiment

    path = Path(vaderSentiment.__file__).with_name("vader_lexicon.txt")
    positive, negative = set(), set()
    for line in path.read_text(encoding="utf-8").splitlines():
        word, valence, *_ = line.split("\t")
        if not _WORD.fullmatch(word):
            continue  # emoticons and symbols
        if float(valence) >= _OPINION_VALENCE:
            positive.add(word)
        elif float(valence) <= -_OPINION_VALENCE:
            negative.add(word)
    return frozenset(positive), frozenset(negative)


class OpinionWordScorer(SentimentScorer):
    """Counting classifier: p / (p + n) over positive and negative opinion words, 0.5 when none.

    The paper used Hu and Liu's opinion lexicon, which no installable package ships; the words
    here come from VADER's human-rated lexicon, which does. Negation is not handled, as in the paper.
    """

    name = "opinion"

    def __init__(self, *, positive: Iterable[str] | None = None, negative: Iterable[str] | None = None):
        default_positive, default_negative = opinion_lexicon()
        self.positive_ = frozenset(positive) if positive is not None else default_positive
        self.negative_ = frozenset(negative) if negative is not None else default_negative

    def counts(self, text: str) -> tuple[int, int]:
        words = _WORD.findall(text.lower())
        return sum(w in self.positive_ for w in words), sum(w in self.negative_ for w in words)

    def _score_unique(self, texts):
        scores = []
        for text in texts:
            p, n = self.counts(text)
            scores.append(p / (p + n) if p + n else 0.5)
        return np.array(scores)


# Anchors define the two poles; the calibration sentences (disjoint from them) fit the map from
# the similarity difference to a probability of being positive.
_POSITIVE_ANCHORS = (
    "This is wonderful and I am very happy.", "What a great, delightful experience.",
    "I love it, it is excellent.", "Everything went perfectly and we are thrilled.",
    "They are kind, friendly and generous.", "It was a beautiful, joyful day.",
    "The results are fantastic and inspiring.", "I feel grateful, proud and hopeful.",
)
_NEGATIVE_ANCHORS = (
    "This is terrible and I am very unhappy.", "What an awful, miserable experience.",
    "I hate it, it is horrible.", "Everything went wrong and we are devastated.",
    "They are cruel, rude and selfish.", "It was a sad, painful day.",
    "The results are disastrous and depressing.", "I feel angry, ashamed and hopeless.",
)
_CALIBRATION_POSITIVE = (
    "She was thrilled to start her new job.", "The concert was amazing.", "We had a lovely dinner together.",
    "He is a brilliant and caring teacher.", "The town is peaceful and welcoming.", "I enjoyed every minute of it.",
    "Our team won the championship!", "The food there is delicious.", "People there are warm and helpful.",
    "It is a pleasure to work with them.", "The view was breathtaking.", "I am excited about the future.",
    "The project was a great success.", "My friends threw me a wonderful party.", "They praised her excellent work.",
    "It was the best holiday of my life.",
)
_CALIBRATION_NEGATIVE = (
    "She was furious about losing her job.", "The concert was a disappointment.", "We had a dreadful dinner.",
    "He is a lazy and dishonest worker.", "The town is dangerous and hostile.", "I regretted every minute of it.",
    "Our team lost badly again.", "The food there is disgusting.", "People there are rude and unhelpful.",
    "It is a nightmare to work with them.", "The view was ugly and depressing.", "I am worried about the future.",
    "The project was a complete failure.", "My friends ignored me and I felt lonely.", "They criticised her poor work.",
    "It was the worst holiday of my life.",
)


class EmbeddingAnchorScorer(SentimentScorer):
    """MiniLM cosine similarity to positive minus negative anchors, calibrated to a probability.

    ``embedder`` is a sentence-transformers model (by default the offline all-MiniLM-L6-v2). After
    fitting, ``calibration_accuracy_`` holds the accuracy on the calibration sentences.
    """

    name = "minilm"

    @validate_params({"batch_size": Integer(1)})
    def __init__(self, embedder=None, *, batch_size: int = 64):
        from sklearn.linear_model import LogisticRegression

        from fairpath.text._quality import load_embedder

        self.embedder_ = embedder if embedder is not None else load_embedder()
        self.batch_size = batch_size
        self.positive_anchors_ = self._embed(_POSITIVE_ANCHORS)
        self.negative_anchors_ = self._embed(_NEGATIVE_ANCHORS)
        features = self._features(list(_CALIBRATION_POSITIVE + _CALIBRATION_NEGATIVE))
        labels = np.r_[np.ones(len(_CALIBRATION_POSITIVE)), np.zeros(len(_CALIBRATION_NEGATIVE))]
        self.calibrator_ = LogisticRegression(C=10.0).fit(features, labels)
        self.calibration_accuracy_ = float(self.calibrator_.score(features, labels))

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder_.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                                show_progress_bar=False))

    def _features(self, texts: list[str]) -> np.ndarray:
        embedded = self._embed(texts)
        difference = (embedded @ self.positive_anchors_.T).mean(axis=1) - (embedded @ self.negative_anchors_.T).mean(axis=1)
        return difference[:, None]

    def _score_unique(self, texts):
        return self.calibrator_.predict_proba(self._features(texts))[:, 1]


class HFClassifierScorer(SentimentScorer):
    """A local Hugging Face sequence-classification folder; the score is the expected positivity.

    Labels named by sentiment (very negative ... very positive, or k stars) weigh by rank, evenly spaced
    in [0, 1] (see :func:`_label_weights`); with two unnamed labels the second is positive; otherwise
    pass ``positive_label``.
    """

    @validate_params({"batch_size": Integer(1)})
    def __init__(self, path: str | Path, *, positive_label: str | None = None, batch_size: int = 32, device: str = "cpu"):
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        path = Path(path)
        if not (path / "config.json").is_file():
            raise FairpathInputError(f"scorer folder {str(path)!r} has no config.json; give a Hugging Face sequence-classification folder")
        config = AutoConfig.from_pretrained(path)
        if not any(arch.endswith("ForSequenceClassification") for arch in (config.architectures or [])):
            raise FairpathInputError(
                f"scorer folder {str(path)!r} holds {config.architectures}, not a sequence-classification model"
            )
        self.name = f"hf:{path.name}"
        self.path = path
        self.batch_size = batch_size
        self.device = device
        self.tokenizer_ = AutoTokenizer.from_pretrained(path)
        if self.tokenizer_.pad_token is None:
            self.tokenizer_.pad_token = self.tokenizer_.eos_token
        self.model_ = AutoModelForSequenceClassification.from_pretrained(path).to(device).eval()
        self.label_weights_ = _label_weights(config.id2label, positive_label, path)
        self._torch = torch

    def _score_unique(self, texts):
        scores = []
        weights = self._torch.tensor(self.label_weights_, dtype=self._torch.float32)
        for start in range(0, len(texts), self.batch_size):
            batch = self.tokenizer_(texts[start:start + self.batch_size], padding=True, truncation=True,
                                    max_length=512, return_tensors="pt").to(self.device)
            with self._torch.inference_mode():
                probabilities = self.model_(**batch).logits.float().softmax(dim=-1).cpu()
            scores.append((probabilities @ weights).numpy())
        return np.concatenate(scores)


# Sentiment rank of the label names classifiers declare (SST-2/3/5 and their abbreviations); ``k star(s)``
# labels (review classifiers) rank by k.
_SENTIMENT_RANKS = {"very negative": 0, "negative": 1, "neg": 1, "neutral": 2, "positive": 3, "pos": 3, "very positive": 4}
_STARS = re.compile(r"^(\d+) stars?$")


def _label_weights(id2label: dict, positive_label: str | None, path: Path) -> list[float]:
    """Weight of each class (in the model's id order) in the expected positivity, on the scores' [0, 1] scale.

    Named sentiment labels weigh by their rank, evenly spaced from 0 (the most negative label the model
    declares) to 1 (the most positive), whatever the id order: negative/neutral/positive give 0, 0.5, 1
    and the five SST-5 classes 0, 0.25, 0.5, 0.75, 1. A name outside the table is refused rather than
    given a weight, since any weight would be a guess (a 5-class model once scored "very positive" as 0).
    """
    labels = [str(id2label[i]).lower().strip() for i in sorted(id2label)]
    if positive_label is not None:
        if positive_label.lower() not in labels:
            raise FairpathInputError(f"scorer folder {str(path)!r} has labels {labels}, not {positive_label!r}")
        return [float(label == positive_label.lower()) for label in labels]
    stars = [_STARS.match(label) for label in labels]
    if all(stars):
        ranks = [int(match.group(1)) for match in stars]
    elif any(label in ("positive", "pos") for label in labels):
        unknown = [label for label in labels if label not in _SENTIMENT_RANKS]
        if unknown:
            raise FairpathInputError(
                f"scorer folder {str(path)!r} has labels {labels}, and {unknown} are not sentiment names fairpath can rank "
                f"({sorted(_SENTIMENT_RANKS)} or 'k stars'); pass positive_label")
        ranks = [_SENTIMENT_RANKS[label] for label in labels]
    elif len(labels) == 2:
        return [0.0, 1.0]
    else:
        raise FairpathInputError(
            f"scorer folder {str(path)!r} has {len(labels)} labels {labels} and none is 'positive'; pass positive_label"
        )
    levels = sorted(set(ranks))
    if len(levels) < 2:
        raise FairpathInputError(f"scorer folder {str(path)!r} has labels {labels} of one sentiment; pass positive_label")
    return [levels.index(rank) / (len(levels) - 1) for rank in ranks]


def available_scorers() -> list[str]:
    return list(BUILTIN_SCORERS)


def get_scorer(name: str | SentimentScorer, *, embedder=None) -> SentimentScorer:
    """A scorer by name (``vader``, ``textblob``, ``opinion``, ``minilm``) or classifier folder path."""
    if isinstance(name, SentimentScorer):
        return name
    key = str(name).strip()
    factories = {"vader": VaderScorer, "textblob": TextBlobScorer, "opinion": OpinionWordScorer,
                 "minilm": lambda: EmbeddingAnchorScorer(embedder)}
    if key.lower() in factories:
        return factories[key.lower()]()
    if Path(key).is_dir():
        return HFClassifierScorer(key)
    raise FairpathInputError(
        f"unknown scorer {key!r}; valid names are {list(BUILTIN_SCORERS)} or the path of a Hugging Face "
        "sequence-classification folder"
    )
