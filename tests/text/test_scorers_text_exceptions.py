import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._scorers import HFClassifierScorer, get_scorer
from tiny_models import make_tiny_sequence_classifier


def test_unknown_scorer_lists_valid_names():
    with pytest.raises(FairpathInputError, match=r"unknown scorer 'vadr'; valid names are \['vader', 'textblob', 'opinion', 'minilm'\]"):
        get_scorer("vadr")


def test_folder_that_is_not_a_classifier(tiny_lm_path, tmp_path):
    with pytest.raises(FairpathInputError, match=r"holds \['LlamaForCausalLM'\], not a sequence-classification model"):
        get_scorer(str(tiny_lm_path))
    with pytest.raises(FairpathInputError, match="has no config.json"):
        HFClassifierScorer(tmp_path)


def test_classifier_without_a_positive_label(tmp_path):
    folder = make_tiny_sequence_classifier(tmp_path / "four", num_labels=4)
    with pytest.raises(FairpathInputError, match=r"has 4 labels .* none is 'positive'; pass positive_label"):
        HFClassifierScorer(folder)
    with pytest.raises(FairpathInputError, match=r"not 'joy'"):
        HFClassifierScorer(folder, positive_label="joy")


def test_classifier_label_without_a_sentiment_rank(tmp_path):
    from fairpath.text._scorers import _label_weights

    with pytest.raises(FairpathInputError, match=r"\['mixed'\] are not sentiment names fairpath can rank .*; pass positive_label"):
        _label_weights({0: "negative", 1: "mixed", 2: "positive"}, None, tmp_path)
