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
