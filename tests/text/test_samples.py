"""The Parquet sample store and resumable generation, with a tiny real model."""

import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from fairpath.text._generation import GenerationSettings, HFGenerator
from fairpath.text._samples import SAMPLE_COLUMNS, SampleStore, generate_samples

PROMPTS = pd.DataFrame(
    {
        "prompt": ["I am from Syria. I will be", "I am from Iceland. I will be", "Italy is", "Iran is"],
        "template_id": ["t0", "t0", "t1", "t1"],
        "attribute": "country",
        "value": ["Syria", "Iceland", "Italy", "Iran"],
        "subgroup": ["a", "b", "c", "d"],
    }
)
SETTINGS = GenerationSettings(max_new_tokens=5, n_samples=5, batch_size=3, seed=11)


@pytest.fixture(scope="module")
def generator(tiny_lm_path):
    return HFGenerator(tiny_lm_path)


@pytest.fixture(scope="module")
def uninterrupted(generator, tmp_path_factory):
    store = SampleStore(tmp_path_factory.mktemp("whole") / "samples")
    return generate_samples(generator, PROMPTS, SETTINGS, store, progress=False), store


def test_result_layout_and_store(uninterrupted, generator):
    samples, store = uninterrupted
    assert len(samples) == 4 * 5
    assert list(samples.columns) == list(PROMPTS.columns) + ["model", "settings_hash", "seed", "sample_index", "text"]
    assert samples.groupby("prompt")["sample_index"].apply(list).tolist() == [[0, 1, 2, 3, 4]] * 4
    assert (samples["model"] == generator.model_id).all()
    assert (samples["settings_hash"] == SETTINGS.settings_hash).all()
    assert len(store.parts()) == 7  # 20 samples in chunks of 3
    stored = store.load()
    assert list(stored.columns) == SAMPLE_COLUMNS and len(stored) == 20
    # The stored texts are exactly what the backend gives for these prompts and settings.
    direct = generator.generate(PROMPTS["prompt"].tolist(), settings=SETTINGS)
    assert samples["text"].tolist() == [t for row in direct for t in row]


def test_rerun_generates_nothing(uninterrupted, generator):
    samples, store = uninterrupted
    chunks = []
    again = generate_samples(generator, PROMPTS, SETTINGS, store, progress=False, on_chunk=lambda i, f: chunks.append(i))
    assert chunks == []
    pd.testing.assert_frame_equal(again, samples)


class Interrupt(Exception):
    pass


def test_interrupted_run_resumes_to_the_same_samples(uninterrupted, generator, tmp_path):
    samples, _ = uninterrupted
    store = SampleStore(tmp_path / "samples")

    def stop_after_three(number, chunk):
        if number == 2:
            raise Interrupt

    with pytest.raises(Interrupt):
        generate_samples(generator, PROMPTS, SETTINGS, store, progress=False, on_chunk=stop_after_three)
    assert len(store.load()) == 9
    resumed_chunks = []
    resumed = generate_samples(
        generator, PROMPTS, SETTINGS, store, progress=False, on_chunk=lambda i, f: resumed_chunks.append(len(f))
    )
    assert resumed_chunks == [3, 3, 3, 2]  # only the 11 missing samples were generated
    pd.testing.assert_frame_equal(resumed, samples)
    assert not store.load().duplicated(["prompt", "sample_index"]).any()


def test_killed_process_resumes_to_the_same_samples(uninterrupted, tiny_lm_path, tmp_path):
    # A real kill: a child process generating into the store is SIGKILLed once some parts exist.
    samples, _ = uninterrupted
    store_path = tmp_path / "samples"
    script = textwrap.dedent(
        f"""
        import pandas as pd, time
        from fairpath.text._generation import GenerationSettings, HFGenerator
        from fairpath.text._samples import SampleStore, generate_samples
        prompts = pd.DataFrame({PROMPTS.to_dict("list")!r})
        settings = GenerationSettings(**{SETTINGS.to_dict()!r})
        def slow(number, chunk):
            print(number, flush=True)
            time.sleep(0.5)
        generate_samples(HFGenerator({str(tiny_lm_path)!r}), prompts, settings, SampleStore({str(store_path)!r}),
                         progress=False, on_chunk=slow)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    printed = [child.stdout.readline() for _ in range(2)]  # chunk numbers, printed after each part is written
    assert printed == ["0\n", "1\n"]
    child.kill()
    child.wait()
    written = len(SampleStore(store_path).load())
    assert 6 <= written < 20
    resumed = generate_samples(HFGenerator(tiny_lm_path), PROMPTS, SETTINGS, SampleStore(store_path), progress=False)
    pd.testing.assert_frame_equal(resumed, samples)


def test_more_samples_extend_the_stored_ones(uninterrupted, generator, tmp_path):
    samples, _ = uninterrupted
    store = SampleStore(tmp_path / "samples")
    generate_samples(generator, PROMPTS, SETTINGS, store, progress=False)
    more = GenerationSettings(max_new_tokens=5, n_samples=7, batch_size=3, seed=11)
    sizes = []
    extended = generate_samples(generator, PROMPTS, more, store, progress=False, on_chunk=lambda i, f: sizes.append(len(f)))
    assert sum(sizes) == 4 * 2
    pd.testing.assert_frame_equal(
        extended[extended["sample_index"] < 5].reset_index(drop=True), samples
    )


def test_other_settings_are_kept_apart(uninterrupted, generator, tmp_path):
    samples, _ = uninterrupted
    store = SampleStore(tmp_path / "samples")
    generate_samples(generator, PROMPTS, SETTINGS, store, progress=False)
    other = GenerationSettings(max_new_tokens=5, n_samples=5, batch_size=3, seed=12)
    second = generate_samples(generator, PROMPTS, other, store, progress=False)
    assert len(store.load()) == 40
    assert (second["text"] != samples["text"]).any()
    assert len(store.load(settings_hash=SETTINGS.settings_hash)) == 20


def test_duplicate_prompts_share_samples(generator, tmp_path):
    frame = pd.DataFrame({"prompt": ["Italy is", "Italy is"], "value": ["Italy", "Italia"]})
    settings = GenerationSettings(max_new_tokens=3, n_samples=2, seed=1)
    result = generate_samples(generator, frame, settings, SampleStore(tmp_path / "s"), progress=False)
    assert len(result) == 4 and result["value"].tolist() == ["Italy", "Italy", "Italia", "Italia"]
    assert result["text"].tolist()[:2] == result["text"].tolist()[2:]
    assert len(SampleStore(tmp_path / "s").load()) == 2


def test_copied_parts_are_deduplicated_with_a_warning(uninterrupted, tmp_path):
    _, store = uninterrupted
    copy = SampleStore(tmp_path / "copy")
    copy.append(store.load())
    copy.append(store.load().head(4))
    with pytest.warns(UserWarning, match="holds 4 samples twice"):
        assert len(copy.load()) == 20


def test_a_stored_part_holds_a_batch_per_worker_and_the_samples_of_one_thread(tiny_lm_path, tmp_path):
    # Handed one batch at a time, the second worker had nothing to do: a part is now one batch per worker.
    import torch

    pooled = HFGenerator(tiny_lm_path, workers=2)
    sizes = []
    try:
        samples = generate_samples(pooled, PROMPTS, SETTINGS, SampleStore(tmp_path / "samples"), progress=False,
                                   on_chunk=lambda number, part: sizes.append(len(part)))
    finally:
        pooled.close()
    assert pooled.concurrent_batches == 2 and sizes == [6, 6, 6, 2]  # 20 samples, batches of 3, two at a time
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        alone = HFGenerator(tiny_lm_path, num_threads=None).generate(PROMPTS["prompt"].tolist(), settings=SETTINGS)
    finally:
        torch.set_num_threads(threads)
    assert samples["text"].tolist() == [text for row in alone for text in row]
