"""Damaged sample stores and bad prompt frames raise FairpathInputError naming the problem."""

import pandas as pd
import pytest

from fairpath._exceptions import FairpathInputError
from fairpath.text import GenerationSettings, HFGenerator
from fairpath.text._samples import SAMPLE_COLUMNS, SampleStore, generate_samples


def _one_sample():
    return pd.DataFrame([["m", "Italy is", "t0", "country", "Italy", "h", 0, 0, " great"]], columns=SAMPLE_COLUMNS)


def test_corrupted_part_is_named(tmp_path):
    store = SampleStore(tmp_path / "samples")
    part = store.append(_one_sample())
    part.write_bytes(part.read_bytes()[:40])  # truncated, as a full disk would leave it
    with pytest.raises(FairpathInputError, match=f"samples file '{part}' cannot be read.*delete it"):
        store.load()


def test_foreign_parquet_in_store(tmp_path):
    store = SampleStore(tmp_path / "samples")
    store.append(_one_sample())
    foreign = store.path / "part-zzz.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(foreign)
    with pytest.raises(FairpathInputError, match=f"samples file '{foreign}' lacks the columns"):
        store.missing("m", ["Italy is"], GenerationSettings())


def test_store_path_is_a_file(tmp_path):
    path = tmp_path / "samples.parquet"
    path.write_text("x")
    with pytest.raises(FairpathInputError, match="samples.parquet' is a file"):
        SampleStore(path)


def test_append_needs_all_columns(tmp_path):
    with pytest.raises(FairpathInputError, match=r"lack the columns \['text'\]"):
        SampleStore(tmp_path / "s").append(_one_sample().drop(columns="text"))


def test_leftover_temporary_file_is_ignored(tmp_path):
    store = SampleStore(tmp_path / "samples")
    store.append(_one_sample())
    (store.path / ".part-1.parquet.tmp").write_bytes(b"half written")
    assert len(store.load()) == 1


@pytest.fixture(scope="module")
def generator(tiny_byte_lm_path):
    return HFGenerator(tiny_byte_lm_path)


@pytest.mark.parametrize(
    "frame, message",
    [
        (pd.DataFrame({"text": ["Italy is"]}), "with a 'prompt' column"),
        (pd.DataFrame({"prompt": []}), "has no rows"),
        (pd.DataFrame({"prompt": ["Italy is", " ", None]}), r"2 empty or non-text prompts \(rows \[1, 2\]\)"),
        (pd.DataFrame({"prompt": ["Italy is"], "text": ["x"]}), r"has the columns \['text'\], which the samples add"),
    ],
)
def test_bad_prompts_frame(generator, tmp_path, frame, message):
    with pytest.raises(FairpathInputError, match=message):
        generate_samples(generator, frame, GenerationSettings(n_samples=1), SampleStore(tmp_path / "s"), progress=False)
