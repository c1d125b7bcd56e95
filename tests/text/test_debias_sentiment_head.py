"""The sentiment head f_s."""

import numpy as np
import torch

from fairpath.text.debias import SentimentProjection
from fairpath.text.debias._sentiment_head import agreed_scores


def test_head_learns_a_separable_sentiment_and_reports_held_out_accuracy(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    labels = rng.integers(0, 2, n)
    features = rng.normal(size=(n, 16)) + 1.5 * (2 * labels[:, None] - 1) * np.eye(16)[0]
    scores = np.where(labels == 1, 1, -1) * rng.uniform(0.75, 1.0, n)
    scores[:40] = rng.uniform(-0.7, 0.7, 40)  # unconfident: discarded
    projection = SentimentProjection(random_state=0).fit(features, scores)
    assert projection.n_discarded_ == 40 and projection.n_confident_ == 160
    assert projection.n_train_ + projection.n_heldout_ == 160
    assert projection.heldout_accuracy_ > 0.85
    probabilities = projection.head_(torch.as_tensor(features[:5], dtype=torch.float32))
    assert torch.allclose(probabilities.sum(dim=1), torch.ones(5))
    loaded = SentimentProjection.load(projection.save(tmp_path / "head.pt"))
    assert np.array_equal(loaded.predict(features), projection.predict(features))
    assert loaded.heldout_accuracy_ == projection.heldout_accuracy_


def test_head_on_noise_is_near_chance_on_held_out_sentences():
    rng = np.random.default_rng(1)
    scores = rng.choice([-0.9, 0.9], 400)
    projection = SentimentProjection(random_state=0).fit(rng.normal(size=(400, 32)), scores)
    assert projection.heldout_accuracy_ < 0.7  # held-out accuracy is honest: no signal, no accuracy


def test_labels_come_from_the_scorers_agreement():
    # VADER's score where TextBlob gives the same sign; a text on which they disagree (or one reads 0) gets none
    vader = np.array([0.9, -0.8, 0.75, -0.95, 0.1])
    textblob = np.array([0.2, 0.3, 0.0, -0.5, 0.4])
    assert agreed_scores([vader, textblob]).tolist() == [0.9, 0.0, 0.0, -0.95, 0.1]
    assert agreed_scores([vader]).tolist() == vader.tolist()
