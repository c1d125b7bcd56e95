"""The sentiment head f_s: a small classifier from h to sentiment, used by sentiment regularization.

As in Huang et al. (2020), sentences are scored by a sentiment scorer, only confidently labelled ones
(|score| > 0.7 on [-1, 1]) are kept, and a 3-layer MLP with hidden size 128 is trained on their h.
Its output is the pair of class probabilities (negative, positive); the fairness loss compares its
last hidden layer (:meth:`SentimentHead.features`) between a sentence and its counterfactual, with the
head frozen during debiasing.

The head reads the representation the training compares, by default the state at the sensitive
token, and learns from it the sentiment of the whole text (VADER's score of the text). That state
sees only the prefix up to the value, so the head learns what the model's reading of the value
predicts about the sentiment of what follows: the dependence the sentiment regularizer is meant to
remove. A head fitted on another representation would be fed vectors unlike any it was fitted on.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from fairpath._io import atomic_path
from fairpath._exceptions import FairpathInputError
from fairpath.text.debias._representations import Representation
from fairpath._validation import Integer, Probability, Real, Seed, validate_params

_MIN_PER_CLASS = 4


class SentimentHead(nn.Module):
    """f_s: standardise h, then Linear-ReLU-Linear-ReLU-Linear to two logits, returned as probabilities.

    ``representation`` records how the h it was fitted on were computed (layers, normalisation,
    pooling), so that training can refuse to feed it anything else.
    """

    def __init__(self, input_size: int, hidden_size: int = 128, representation: Representation | None = None):
        super().__init__()
        self.representation = representation
        self.register_buffer("center", torch.zeros(input_size))
        self.register_buffer("scale", torch.ones(input_size))
        self.layers = nn.Sequential(
            nn.Linear(input_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Linear(hidden_size, 2),
        )

    def features(self, representations: torch.Tensor) -> torch.Tensor:
        """The last hidden layer (after its ReLU): what the sentiment regularizer compares (see ``._training``)."""
        return self.layers[:-1]((representations - self.center) / self.scale)

    def logits(self, representations: torch.Tensor) -> torch.Tensor:
        return self.layers[-1](self.features(representations))

    def forward(self, representations: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.logits(representations), dim=-1)


@validate_params({"epochs": Integer(1), "learning_rate": Real(0.0, None, open_low=True), "test_size": Probability(), "random_state": Seed()})
class SentimentProjection:
    """Fit f_s on sentence representations and their sentiment scores on [-1, 1].

    Parameters
    ----------
    threshold : keep sentences with ``|score| > threshold`` (label: positive when score > 0).
    hidden_size, epochs, learning_rate : the MLP and its full-batch Adam training.
    test_size : share of the confident sentences held out to report accuracy.
    random_state : seeds the split and the initialisation.

    Fitted attributes: ``head_`` (a frozen :class:`SentimentHead`), ``heldout_accuracy_``,
    ``train_accuracy_``, ``n_confident_``, ``n_discarded_``, ``n_train_``, ``n_heldout_``.
    """

    def __init__(self, *, threshold: float = 0.7, hidden_size: int = 128, epochs: int = 300,
                 learning_rate: float = 1e-3, test_size: float = 0.25, random_state: int = 0):
        self.threshold = threshold
        self.hidden_size = hidden_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.test_size = test_size
        self.random_state = random_state

    def _confident_labels(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if scores.ndim != 1 or np.any(np.abs(scores) > 1) or not np.all(np.isfinite(scores)):
            raise FairpathInputError("sentiment scores must be a 1-d array of finite values on [-1, 1]")
        confident = np.flatnonzero(np.abs(scores) > self.threshold)
        labels = (scores[confident] > 0).astype(np.int64)
        counts = np.bincount(labels, minlength=2)
        if counts.min() < _MIN_PER_CLASS:
            raise FairpathInputError(
                f"only {counts[0]} negative and {counts[1]} positive sentences have |score| > {self.threshold} "
                f"(out of {len(scores)}); the sentiment head needs at least {_MIN_PER_CLASS} of each: give a larger "
                "or more varied corpus, or lower the threshold"
            )
        return confident, labels

    def _split(self, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Stratified split so both classes appear in training and held-out sets."""
        rng = np.random.default_rng(self.random_state)
        train, heldout = [], []
        for label in (0, 1):
            members = rng.permutation(np.flatnonzero(labels == label))
            n_heldout = max(1, int(round(self.test_size * len(members))))
            heldout.extend(members[:n_heldout])
            train.extend(members[n_heldout:])
        return np.sort(train), np.sort(heldout)

    def fit(self, representations, scores) -> "SentimentProjection":
        features = torch.as_tensor(np.asarray(representations, dtype=np.float32))
        scores = np.asarray(scores, dtype=float)
        if features.ndim != 2 or len(features) != len(scores):
            raise FairpathInputError(
                f"representations ({tuple(features.shape)}) and scores ({len(scores)}) must describe the same sentences"
            )
        confident, labels = self._confident_labels(scores)
        train, heldout = self._split(labels)
        x, y = features[confident], torch.as_tensor(labels)

        with torch.random.fork_rng(devices=[]):  # seeded initialisation, global RNG left alone
            torch.manual_seed(self.random_state)
            head = SentimentHead(features.shape[1], self.hidden_size)
        head.center.copy_(x[train].mean(dim=0))
        head.scale.copy_(x[train].std(dim=0).clamp(min=1e-6) if len(train) > 1 else torch.ones(x.shape[1]))
        optimizer = torch.optim.Adam(head.parameters(), lr=self.learning_rate)
        loss_fn = nn.CrossEntropyLoss()
        for _ in range(self.epochs):  # full batch: the confident sentences are few
            optimizer.zero_grad()
            loss_fn(head.logits(x[train]), y[train]).backward()
            optimizer.step()
        head.eval()
        head.requires_grad_(False)

        with torch.no_grad():
            predicted = head.logits(x).argmax(dim=-1)
        self.head_ = head
        self.train_accuracy_ = float((predicted[train] == y[train]).float().mean())
        self.heldout_accuracy_ = float((predicted[heldout] == y[heldout]).float().mean())
        self.n_confident_ = int(len(confident))
        self.n_discarded_ = int(len(scores) - len(confident))
        self.n_train_, self.n_heldout_ = int(len(train)), int(len(heldout))
        return self

    def predict(self, representations) -> np.ndarray:
        """Labels (1 = positive) for representations."""
        with torch.no_grad():
            features = torch.as_tensor(np.asarray(representations, dtype=np.float32))
            return self.head_.logits(features).argmax(dim=-1).numpy()

    def summary(self) -> dict:
        return {
            "labelled_by": getattr(self, "labelled_by_", "the scores given to fit"),
            "threshold": self.threshold,
            "hidden_size": self.hidden_size,
            "n_confident": self.n_confident_,
            "n_discarded": self.n_discarded_,
            "n_train": self.n_train_,
            "n_heldout": self.n_heldout_,
            "train_accuracy": self.train_accuracy_,
            "heldout_accuracy": self.heldout_accuracy_,
        }

    def save(self, path: str | Path) -> Path:
        """Write the fitted head and its summary (one torch file, atomically)."""
        representation = self.head_.representation
        with atomic_path(path) as temporary:
            torch.save({"params": self.get_params(), "summary": self.summary(), "input_size": self.head_.center.numel(),
                        "representation": asdict(representation) if representation is not None else None,
                        "state": self.head_.state_dict()}, temporary)
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> "SentimentProjection":
        saved = load_tensor_file(path, "sentiment head file", "delete it to refit")
        projection = cls(**saved["params"])
        representation = saved.get("representation")
        head = SentimentHead(saved["input_size"], projection.hidden_size,
                             Representation(**representation) if representation is not None else None)
        head.load_state_dict(saved["state"])
        head.eval()
        head.requires_grad_(False)
        projection.head_ = head
        summary = saved["summary"]
        projection.train_accuracy_, projection.heldout_accuracy_ = summary["train_accuracy"], summary["heldout_accuracy"]
        projection.n_confident_, projection.n_discarded_ = summary["n_confident"], summary["n_discarded"]
        projection.n_train_, projection.n_heldout_ = summary["n_train"], summary["n_heldout"]
        projection.labelled_by_ = summary.get("labelled_by", "the scores given to fit")
        return projection

    def get_params(self) -> dict:
        return {"threshold": self.threshold, "hidden_size": self.hidden_size, "epochs": self.epochs,
                "learning_rate": self.learning_rate, "test_size": self.test_size, "random_state": self.random_state}

    def __repr__(self) -> str:
        if not hasattr(self, "head_"):
            return f"SentimentProjection(threshold={self.threshold}, hidden_size={self.hidden_size}, unfitted)"
        return (f"SentimentProjection(held-out accuracy {self.heldout_accuracy_:.3f} on {self.n_heldout_} sentences, "
                f"trained on {self.n_train_}; {self.n_discarded_} sentences with |score| <= {self.threshold} discarded)")


def load_tensor_file(path: str | Path, what: str, remedy: str):
    """A file written by ``torch.save`` that holds only tensors and plain data (``weights_only=True``): a pickle of
    anything else is refused unread, because unpickling it could run code from whoever wrote the file."""
    try:
        return torch.load(Path(path), weights_only=True)
    except Exception as error:  # torch raises several types for damaged and for refused files
        # torch's own message would suggest weights_only=False, the very thing that must not be done with such a file
        reason = "it holds objects other than tensors and plain data" if "weights only" in str(error).lower() else str(error)
        raise FairpathInputError(f"{what} {str(path)!r} cannot be read ({reason}); fairpath loads only tensors and plain "
                                 f"data, never pickled objects that could run code: {remedy}") from None


def agreed_scores(scores: Sequence[np.ndarray]) -> np.ndarray:
    """The first scorer's scores (on [-1, 1]) where every scorer gives the same sign, 0 (no label) elsewhere.

    A head labelled by one scorer and judged on it is circular: the regularizer learns that scorer's quirks.
    Labels on which VADER and TextBlob agree carry what both read as sentiment.
    """
    first = np.asarray(scores[0], dtype=float)
    agree = np.all([np.sign(np.asarray(s, dtype=float)) == np.sign(first) for s in scores[1:]], axis=0)
    return np.where(agree, first, 0.0)


def fit_sentiment_projection(model, tokenizer, texts: Sequence[str], scorer: str | Sequence[str] = ("vader", "textblob"),
                             representation: Representation | None = None, mention_ends: Sequence[int] | None = None,
                             **params) -> SentimentProjection:
    """Score ``texts`` with fairpath scorers (mapped back to [-1, 1]) and fit f_s on the model's h.

    With several scorers a text is labelled by the first one's score when all agree in sign (see
    :func:`agreed_scores`): by default VADER confident (|score| > threshold) with TextBlob of the same sign.

    The head records ``representation`` (the default :class:`Representation` when None), the h it
    reads; :class:`DebiasTrainer` refuses a head fitted on another one. The default reads each text
    at its sensitive mention, so it needs ``mention_ends``, the character end of each text's first
    mention (``DebiasCorpus.train_mentions`` gives the training texts with theirs).
    """
    from fairpath.text._scorers import get_scorer
    from fairpath.text.debias._representations import sentence_representations

    representation = representation or Representation()
    texts = list(texts)
    representations = sentence_representations(model, tokenizer, texts, representation=representation,
                                               mention_ends=mention_ends)
    scorers = [scorer] if isinstance(scorer, str) else list(scorer)
    scores = agreed_scores([2 * np.asarray(get_scorer(name).score(texts)) - 1 for name in scorers])
    projection = SentimentProjection(**params).fit(representations.numpy(), scores)
    projection.head_.representation = representation
    projection.labelled_by_ = (f"{scorers[0]} |score| > {projection.threshold}"
                               + (f", where {' and '.join(scorers[1:])} agree in sign" if len(scorers) > 1 else ""))
    return projection
