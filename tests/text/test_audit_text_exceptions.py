import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text import FairnessSpec, GenerationSettings, PoolGenerator, audit_text

SPEC = FairnessSpec.from_dict({"attribute": "country", "values": ["A", "B"], "templates": ["{country} is"]})


def test_unknown_scorer_fails_before_generating(tmp_path):
    with pytest.raises(FairpathInputError, match="unknown scorer 'sentiment'"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["sentiment"], store=tmp_path / "samples", progress=False)
    assert not (tmp_path / "samples").exists()


def test_corrupted_samples_file(tmp_path):
    store = tmp_path / "samples"
    store.mkdir()
    (store / "part-00000000000000000001-abcdef12.parquet").write_bytes(b"this is not parquet at all")
    with pytest.raises(FairpathInputError, match=r"samples file '.*part-00000000000000000001-abcdef12.parquet' cannot be read"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], store=store, quality=False,
                   settings=GenerationSettings(n_samples=2), progress=False)


def test_perplexity_is_refused_before_generating_by_a_backend_that_cannot_score_text(tmp_path):
    # PoolGenerator samples from word pools: it has no model to score text with, and says so through the backend contract
    backend = PoolGenerator(SPEC)
    assert not backend.scores_perplexity
    message = (r"perplexity is not measurable with this backend \(PoolGenerator\): it samples continuations but cannot score text; "
               r"measure perplexity with a local model \(HFGenerator\), or pass no corpus")
    with pytest.raises(FairpathInputError, match=message):
        audit_text(SPEC, backend, scorers=["vader"], quality=False, corpus=["A is nice."], store=tmp_path / "samples",
                   settings=GenerationSettings(n_samples=2), n_permutations=5, progress=False)
    assert not (tmp_path / "samples").exists()
    with pytest.raises(FairpathInputError, match=message):
        backend.token_log_likelihoods(["A is nice."])


def test_an_empty_corpus_is_refused_before_generating(tiny_lm_path, tmp_path):
    from fairpath.text import HFGenerator

    with pytest.raises(FairpathInputError, match="the perplexity corpus has no non-empty lines"):
        audit_text(SPEC, HFGenerator(tiny_lm_path), scorers=["vader"], quality=False, corpus=["", "  "], store=tmp_path / "samples",
                   progress=False)
    assert not (tmp_path / "samples").exists()


def test_a_backend_must_be_a_generation_backend(tmp_path):
    with pytest.raises(FairpathInputError, match=r"backend must be a GenerationBackend \(HFGenerator, OpenAICompatibleBackend, "
                                                 r"PoolGenerator or a subclass\), got str"):
        audit_text(SPEC, "gpt2", scorers=["vader"], store=tmp_path / "samples", progress=False)
    assert not (tmp_path / "samples").exists()


def test_options_after_the_spec_and_backend_are_keyword_only():
    with pytest.raises(TypeError, match="too many positional arguments"):
        audit_text(SPEC, PoolGenerator(SPEC), ["vader"])


def test_bad_permutation_settings_fail_before_generating(tmp_path):
    with pytest.raises(FairpathInputError, match="n_permutations must be an integer ≥ 1, got 0"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], store=tmp_path / "samples", n_permutations=0, progress=False)
    with pytest.raises(FairpathInputError, match=r"alpha must lie in \(0, 1\), got 5"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], store=tmp_path / "samples", alpha=5, progress=False)
    assert not (tmp_path / "samples").exists()


@pytest.mark.parametrize("bad, message", [({"quality_per_prompt": 0}, "quality_per_prompt must be an integer ≥ 1, got 0"),
                                          ({"quality_per_prompt": 2.5}, r"quality_per_prompt must be an integer, got 2\.5 \(float\)"),
                                          ({"similarity_threshold": 1.5}, r"similarity_threshold must .*1.*got 1\.5"),
                                          ({"context_threshold": "high"}, r"context_threshold must be .*got 'high'")])
def test_quality_settings_fail_before_generating(tmp_path, bad, message):
    with pytest.raises(FairpathInputError, match=message):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], store=tmp_path / "samples", progress=False, **bad)
    assert not (tmp_path / "samples").exists()


def _stored_samples():
    continuations = ["a lovely day", "a terrible place", "fine and calm", "awful news"]
    return pd.DataFrame([{"template": "{country} is", "value": value, "continuation": text, "sample_index": i}
                         for value in ("A", "B") for i, text in enumerate(continuations)])


def test_one_scorer_name_is_one_scorer_not_its_characters():
    from fairpath.text import audit_samples

    as_text = audit_samples(_stored_samples(), SPEC, scorers="vader", n_permutations=9, quality=False)
    as_list = audit_samples(_stored_samples(), SPEC, scorers=["vader"], n_permutations=9, quality=False)
    assert as_text.scorers == ["vader"]
    pd.testing.assert_frame_equal(as_text.to_frame(), as_list.to_frame())
    with pytest.raises(FairpathInputError, match=r"scorers must be a scorer name, classifier folder or scorer object or a list of them, got 7 \(int\)"):
        audit_samples(_stored_samples(), SPEC, scorers=7, n_permutations=9, quality=False)


def test_seed_beyond_numpy_fails_before_generating(tmp_path):
    with pytest.raises(FairpathInputError, match="seed must be an integer ≤ 4294967295, got 4294967296"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], store=tmp_path / "samples", seed=2**32, progress=False)
    assert not (tmp_path / "samples").exists()


def test_settings_must_be_generation_settings(tmp_path):
    with pytest.raises(FairpathInputError, match=r"settings must be a GenerationSettings, got dict; e\.g\. GenerationSettings\(n_samples=20"):
        audit_text(SPEC, PoolGenerator(SPEC), scorers=["vader"], settings={"n_samples": 2}, store=tmp_path / "samples", progress=False)
    assert not (tmp_path / "samples").exists()


@pytest.mark.parametrize("bad, message", [({"mixing": {"A": 1.5}}, r"mixing\['A'\] must lie in \[0, 1\], got 1\.5"),
                                          ({"mixing": {"B": "high"}}, r"mixing\['B'\] must be a number, got 'high' \(str\)"),
                                          ({"default_mixing": -0.1}, r"default_mixing must lie in \[0, 1\], got -0\.1"),
                                          ({"mixing": {"Z": 0.5}}, r"mixing names values \['Z'\] that attribute 'country' does not have")])
def test_pool_generator_mixing_is_checked(bad, message):
    with pytest.raises(FairpathInputError, match=message):
        PoolGenerator(SPEC, **bad)


def test_one_corpus_string_is_one_passage(tiny_lm_path):
    from fairpath.text import HFGenerator
    from fairpath.text._quality import backend_perplexity

    backend = HFGenerator(tiny_lm_path)
    assert backend_perplexity(backend, "A is nice.").n_texts == 1
    with pytest.raises(FairpathInputError, match=r"corpus must be a passage or a list of them, got 7 \(int\)"):
        backend_perplexity(backend, 7)
