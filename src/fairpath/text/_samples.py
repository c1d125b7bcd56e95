"""A resumable Parquet store of generated samples, and the loop that fills it.

Public contract
---------------
``SAMPLE_COLUMNS``
    ``model, prompt, template_id, attribute, value, settings_hash, seed, sample_index, text``.
``SampleStore(path)``
    A folder of Parquet part files (created on the first append). A sample's key is
    (model, prompt, settings_hash, sample_index). ``append(frame)`` writes one part atomically (temp file,
    then rename), so a killed run leaves only whole parts. ``load(model=None, settings_hash=None,
    prompts=None)`` returns the stored rows (sorted by prompt and sample index); ``missing(model,
    prompts, settings)`` lists the ``SampleRequest`` s not stored yet, in generation order. A part that
    cannot be read raises FairpathInputError naming the file.
``generate_samples(backend, prompts_frame, settings, store, progress=True, on_chunk=None) -> DataFrame``
    Generates what ``store`` lacks for every prompt of ``prompts_frame`` (a column ``prompt``; optional
    ``template_id``, ``attribute``, ``value`` and any other columns, which are carried to the result)
    in chunks of ``settings.batch_size`` samples per batch the backend decodes side by side
    (``backend.concurrent_batches``: a local model's workers), one part file per chunk, with a tqdm bar and ETA on
    stderr. ``on_chunk(chunk_number, chunk_frame)`` is called after each chunk is stored. Returns one row
    per (prompt row, sample index < n_samples): the ``prompts_frame`` columns, then ``model,
    settings_hash, seed, sample_index, text``. Rerunning after an interruption generates only the rest,
    in the same chunks, so the result equals an uninterrupted run.
"""

from __future__ import annotations

import os
import time
import uuid
import warnings
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import write_parquet
from fairpath.text._generation import GenerationBackend, GenerationSettings, SampleRequest
from fairpath._validation import Boolean, validate_params

SAMPLE_COLUMNS = ["model", "prompt", "template_id", "attribute", "value", "settings_hash", "seed", "sample_index", "text"]
KEY_COLUMNS = ["model", "prompt", "settings_hash", "sample_index"]
_METADATA_COLUMNS = ["template_id", "attribute", "value"]
_RESULT_COLUMNS = ["model", "settings_hash", "seed", "sample_index", "text"]
_PART_GLOB = "part-*.parquet"


class SampleStore:
    """Generated samples kept as Parquet parts in the folder ``path``."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise FairpathInputError(
                f"samples store {str(self.path)!r} is a file; the store is a folder of Parquet parts, "
                "give a folder path (it is created if missing)"
            )

    def __repr__(self) -> str:
        return f"SampleStore({str(self.path)!r}, parts={len(self.parts())})"

    def parts(self) -> list[Path]:
        """Part files in the order they were written."""
        return sorted(self.path.glob(_PART_GLOB)) if self.path.is_dir() else []

    def append(self, frame: pd.DataFrame) -> Path:
        """Store ``frame`` (the SAMPLE_COLUMNS) as one new part, atomically; return the part's path."""
        absent = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
        if absent:
            raise FairpathInputError(f"samples to store lack the columns {absent}; expected {SAMPLE_COLUMNS}")
        self.path.mkdir(parents=True, exist_ok=True)
        # Names sort by write time; the random suffix keeps concurrent writers apart.
        name = f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        return write_parquet(_normalise(frame[SAMPLE_COLUMNS]), self.path / name)

    def load(self, model: str | None = None, settings_hash: str | None = None, prompts: Iterable[str] | None = None) -> pd.DataFrame:
        """Stored samples, optionally only those of one model, settings hash and set of prompts."""
        frames = [self._read_part(part) for part in self.parts()]
        data = pd.concat(frames, ignore_index=True) if frames else _normalise(pd.DataFrame(columns=SAMPLE_COLUMNS))
        if model is not None:
            data = data[data["model"] == model]
        if settings_hash is not None:
            data = data[data["settings_hash"] == settings_hash]
        if prompts is not None:
            data = data[data["prompt"].isin(set(prompts))]
        duplicated = data.duplicated(KEY_COLUMNS, keep="first")
        if duplicated.any():
            warnings.warn(
                f"samples store {str(self.path)!r} holds {int(duplicated.sum())} samples twice "
                "(same model, prompt, settings and sample index, e.g. copied parts); the first copy is kept",
                stacklevel=2,
            )
            data = data[~duplicated]
        return data.sort_values(["model", "settings_hash", "prompt", "sample_index"], kind="stable").reset_index(drop=True)

    def _read_part(self, part: Path) -> pd.DataFrame:
        try:
            frame = pd.read_parquet(part)
        except Exception as error:  # pyarrow raises several types for damaged files
            raise FairpathInputError(
                f"samples file {str(part)!r} cannot be read ({type(error).__name__}: {error}); "
                "delete it to regenerate its samples on the next run"
            ) from error
        absent = [c for c in SAMPLE_COLUMNS if c not in frame.columns]
        if absent:
            raise FairpathInputError(
                f"samples file {str(part)!r} lacks the columns {absent}; it was not written by fairpath's "
                "SampleStore: move it out of the store folder"
            )
        return frame[SAMPLE_COLUMNS]

    def missing(self, model: str, prompts: Iterable[str], settings: GenerationSettings) -> list[SampleRequest]:
        """Requests (prompt, sample index < n_samples) not stored yet, prompt by prompt in the given order."""
        prompts = list(dict.fromkeys(prompts))
        stored = self.load(model=model, settings_hash=settings.settings_hash, prompts=prompts)
        done = set(zip(stored["prompt"], stored["sample_index"]))
        return [
            SampleRequest(prompt, index)
            for prompt in prompts
            for index in range(settings.n_samples)
            if (prompt, index) not in done
        ]


def _normalise(frame: pd.DataFrame) -> pd.DataFrame:
    """Fixed dtypes, so that every part has the same Parquet schema."""
    frame = frame.copy()
    for column in ["model", "prompt", "template_id", "attribute", "value", "settings_hash", "text"]:
        frame[column] = frame[column].astype("string")
    for column in ["seed", "sample_index"]:
        frame[column] = frame[column].astype("int64")
    return frame


def _prompt_metadata(prompts_frame: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(prompts_frame, pd.DataFrame) or "prompt" not in prompts_frame.columns:
        raise FairpathInputError("prompts_frame must be a DataFrame with a 'prompt' column")
    if prompts_frame.empty:
        raise FairpathInputError("prompts_frame has no rows; give at least one prompt")
    bad = prompts_frame["prompt"].map(lambda p: not isinstance(p, str) or not p.strip())
    if bad.any():
        raise FairpathInputError(
            f"prompts_frame has {int(bad.sum())} empty or non-text prompts (rows {list(prompts_frame.index[bad][:5])}); "
            "every prompt must be a non-empty string"
        )
    clashing = [c for c in _RESULT_COLUMNS if c in prompts_frame.columns]
    if clashing:
        raise FairpathInputError(f"prompts_frame has the columns {clashing}, which the samples add; rename or drop them")
    frame = prompts_frame.reset_index(drop=True).copy()
    for column in _METADATA_COLUMNS:
        if column not in frame.columns:
            frame[column] = pd.NA
    return frame


@validate_params({"progress": Boolean()})
def generate_samples(
    backend: GenerationBackend,
    prompts_frame: pd.DataFrame,
    settings: GenerationSettings,
    store: SampleStore,
    *,
    progress: bool = True,
    on_chunk: Callable[[int, pd.DataFrame], None] | None = None,
) -> pd.DataFrame:
    """Generate the samples ``store`` lacks, chunk by chunk, and return all samples of these prompts."""
    from fairpath._progress import progress as progress_bar

    frame = _prompt_metadata(prompts_frame)
    # Metadata stored with a sample: that of the prompt's first row.
    first = frame.drop_duplicates("prompt").set_index("prompt")[_METADATA_COLUMNS]
    todo = store.missing(backend.model_id, frame["prompt"], settings)
    # One batch per worker: a chunk of one batch went whole to the main process while the workers stayed idle.
    part_size = settings.batch_size * backend.concurrent_batches
    with progress_bar(total=len(todo), unit="sample", desc="generating", enabled=progress and bool(todo)) as bar:
        for number, start in enumerate(range(0, len(todo), part_size)):
            chunk = todo[start : start + part_size]
            texts = backend.generate_requests(chunk, settings)
            prompts = [r.prompt for r in chunk]
            part = pd.DataFrame(
                {
                    "model": backend.model_id,
                    "prompt": prompts,
                    **{c: first.loc[prompts, c].to_numpy() for c in _METADATA_COLUMNS},
                    "settings_hash": settings.settings_hash,
                    "seed": settings.seed,
                    "sample_index": [r.sample_index for r in chunk],
                    "text": texts,
                }
            )
            store.append(part)
            bar.update(len(chunk))
            if on_chunk is not None:
                on_chunk(number, part)
    stored = store.load(backend.model_id, settings.settings_hash, frame["prompt"])
    stored = stored[stored["sample_index"] < settings.n_samples]
    samples = stored[["prompt", *_RESULT_COLUMNS]]
    return frame.merge(samples, on="prompt", how="left", validate="many_to_many").reset_index(drop=True)
