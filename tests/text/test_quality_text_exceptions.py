import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text._models import load_causal_lm
from fairpath.text._quality import perplexity, prompt_similarities


def test_mismatched_lengths():
    with pytest.raises(FairpathInputError, match="got 2 prompts but 1 continuations"):
        prompt_similarities(["a", "b"], ["c"])


def test_empty_corpus(tiny_byte_lm_path):
    model, tokenizer = load_causal_lm(tiny_byte_lm_path)
    with pytest.raises(FairpathInputError, match="the perplexity corpus has no non-empty lines"):
        perplexity(model, tokenizer, ["", "  "])


def test_quality_subset_names_missing_columns_and_a_bad_count():
    import pandas as pd

    from fairpath.text import quality_subset

    samples = pd.DataFrame({"prompt": ["a", "a", "b"], "sample_index": [1, 0, 0], "text": ["x", "y", "z"]})
    assert quality_subset(samples, per_prompt=1)["text"].tolist() == ["y", "z"]  # the lowest index of every prompt
    with pytest.raises(FairpathInputError, match=r"samples lack column\(s\) \['sample_index'\]; S.S. is computed on the lowest sample "
                                                 r"indices of every prompt"):
        quality_subset(samples.drop(columns="sample_index"), per_prompt=1)
    for bad in (0, -1, 1.5):
        with pytest.raises(FairpathInputError, match=r"per_prompt must be an integer( ≥ 1)?, got "):
            quality_subset(samples, per_prompt=bad)
