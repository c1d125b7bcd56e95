import numpy as np
import pytest

from fairpath.text._scorers import (
    HFClassifierScorer,
    OpinionWordScorer,
    VaderScorer,
    get_scorer,
    opinion_lexicon,
)
from tiny_models import make_tiny_sequence_classifier

TEXTS = ["I love this, it is wonderful and great.", "This is a terrible, awful disaster.", "The table is brown."]


@pytest.mark.parametrize("name", ["vader", "textblob", "opinion"])
def test_rule_based_scorers_order_sentiment_in_unit_interval(name):
    scores = get_scorer(name).score(TEXTS)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[0] > 0.5 > scores[1]
    assert scores[2] == pytest.approx(0.5)  # nothing opinionated


def test_vader_is_the_compound_score_rescaled():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    compound = [SentimentIntensityAnalyzer().polarity_scores(t)["compound"] for t in TEXTS]
    np.testing.assert_allclose(VaderScorer().score(TEXTS), (np.array(compound) + 1) / 2)


def test_opinion_counting_is_positive_share():
    positive, negative = opinion_lexicon()
    assert {"good", "great", "love"} <= positive and {"bad", "awful", "hate"} <= negative
    assert len(positive) > 1000 and len(negative) > 1500
    scorer = OpinionWordScorer()
    assert scorer.counts("Good and great, but bad.") == (2, 1)
    np.testing.assert_allclose(scorer.score(["Good and great, but bad.", "A chair.", "bad bad"]), [2 / 3, 0.5, 0.0])


def test_repeated_texts_are_scored_once():
    class CountingScorer(OpinionWordScorer):
        seen = []

        def _score_unique(self, texts):
            self.seen.extend(texts)
            return super()._score_unique(texts)

    scorer = CountingScorer()
    scores = scorer.score(["good", "bad", "good", "good"])
    np.testing.assert_allclose(scores, [1, 0, 1, 1])
    assert sorted(scorer.seen) == ["bad", "good"]


def test_hf_classifier_folder_gives_positive_probability(tiny_classifier_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    scorer = get_scorer(str(tiny_classifier_path))
    assert isinstance(scorer, HFClassifierScorer) and scorer.name == f"hf:{tiny_classifier_path.name}"
    scores = scorer.score(TEXTS)
    tokenizer = AutoTokenizer.from_pretrained(tiny_classifier_path)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_path).eval()
    with torch.inference_mode():
        for text, score in zip(TEXTS, scores):
            probabilities = model(**tokenizer(text, return_tensors="pt")).logits.softmax(-1)[0]
            assert score == pytest.approx(float(probabilities[1]), abs=1e-5)  # label 1 is "positive"


def test_hf_classifier_label_weights(tmp_path):
    three = make_tiny_sequence_classifier(tmp_path / "three", num_labels=3)
    assert HFClassifierScorer(three).label_weights_ == [0.0, 0.5, 1.0]
    stars = make_tiny_sequence_classifier(tmp_path / "stars", num_labels=4, labels=["1", "2", "3", "great"])
    assert HFClassifierScorer(stars, positive_label="great").label_weights_ == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.model
def test_minilm_anchor_scorer_is_calibrated():
    scorer = get_scorer("minilm")
    assert scorer.calibration_accuracy_ >= 0.9
    scores = scorer.score(["My new job is fantastic and my colleagues are lovely.", "The trip was a horrible, frightening mess."])
    assert scores[0] > 0.7 and scores[1] < 0.3


def test_label_weights_follow_the_sentiment_order_not_the_ids(tmp_path):
    from fairpath.text._scorers import _label_weights

    # SST-5 declared out of order: very positive must weigh 1 (it weighed 0 before), very negative 0
    sst5 = {0: "very positive", 1: "negative", 2: "neutral", 3: "very negative", 4: "positive"}
    assert _label_weights(sst5, None, tmp_path) == [1.0, 0.25, 0.5, 0.0, 0.75]
    assert _label_weights({0: "NEG", 1: "POS"}, None, tmp_path) == [0.0, 1.0]
    assert _label_weights({0: "positive", 1: "neutral", 2: "negative"}, None, tmp_path) == [1.0, 0.5, 0.0]
    stars = {i: f"{i + 1} star{'s' if i else ''}" for i in range(5)}
    assert _label_weights(stars, None, tmp_path) == [0.0, 0.25, 0.5, 0.75, 1.0]
