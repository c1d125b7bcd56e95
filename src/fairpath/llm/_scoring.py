"""A language model's score of each prompt: the mean value of its answer, from next-token probabilities or samples.

Public contract
---------------
``score_prompts(backend, prompts, options, *, store=None, batch_size=64, samples=10, seed=0, progress=True) -> DataFrame``
    One row per distinct prompt (index: the prompt text) with ``score`` (the mean of the options' values under the
    model's probabilities normalised over the options), ``mass`` (the probability the model puts on the options
    at all, or the share of samples that parsed), ``method`` ("probabilities" or "sampled") and ``answers`` (the
    samples asked; 0 with probabilities). Probabilities come from ``backend.answer_probabilities``; a prompt for
    which the backend returns none (an endpoint without log probabilities), or none on any option, is asked
    ``samples`` times at temperature 1 and its answers parsed by :func:`parse_answer`; a prompt none of whose
    answers parse keeps a NaN score (the audit keeps its rows out and says how many). Prompts already in
    ``store`` (a :class:`ScoreStore`) are not asked again; each batch is stored as it is scored, so an
    interrupted run resumes where it stopped.
``parse_answer(text, options) -> int | None``
    The option an answer names: the text's first word (letters and digits, after any leading spaces,
    punctuation or markup), compared without case with every spelling; None when it matches no option.
``ScoreStore(path)``
    A folder of Parquet parts keyed by (model id, options, prompt).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from fairpath._exceptions import FairpathInputError
from fairpath._io import write_parquet
from fairpath._progress import progress as progress_bar
from fairpath._validation import Boolean, Integer, Seed, validate_params

_FIRST_WORD = re.compile(r"[^\W_]+")
_LEADING = " \t\n\r*_`\"'([{:#>-.,"  # what may precede an answer's first word: space, punctuation, markdown
_SCORE_COLUMNS = ["score", "mass", "method", "answers"]  # what score_prompts returns per prompt
_STORE_COLUMNS = ["model", "options", "prompt", *_SCORE_COLUMNS]
SAMPLED_TOKENS = 4  # tokens of a sampled answer: enough for "Yes." or "4/5", never an essay


def options_key(options) -> str:
    """A short digest of the options (answers, values and spellings): scores under other options are not reused."""
    payload = json.dumps([[o.answer, o.value, list(o.spellings)] for o in options])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def parse_answer(text: str, options) -> int | None:
    """The index of the option ``text`` names by its first word, or None (see the module docstring)."""
    match = _FIRST_WORD.match(text.lstrip(_LEADING))
    if match is None:
        return None
    word = match.group(0).casefold()
    named = [k for k, option in enumerate(options) if any(word == s.casefold() for s in option.spellings)]
    return named[0] if len(named) == 1 else None


class ScoreStore:
    """Scores kept as Parquet parts in the folder ``path`` (created on the first batch)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise FairpathInputError(f"score store {str(self.path)!r} is a file; give a folder (it is created if missing)")

    def load(self, model: str, options: str) -> pd.DataFrame:
        """The stored scores of ``model`` under ``options``, indexed by prompt."""
        parts = sorted(self.path.glob("part-*.parquet")) if self.path.is_dir() else []
        frames = []
        for part in parts:
            try:
                frame = pd.read_parquet(part)
            except Exception as error:  # pyarrow raises several types for damaged files
                raise FairpathInputError(f"score store part {str(part)!r} cannot be read ({error}); delete it to score its prompts again") from None
            if list(frame.columns) != _STORE_COLUMNS:
                raise FairpathInputError(f"score store part {str(part)!r} has the columns {list(frame.columns)}, not a score store's "
                                         f"{_STORE_COLUMNS}; remove it from the folder, or score into another folder (another --out)")
            frames.append(frame[(frame["model"] == model) & (frame["options"] == options)])
        stored = pd.concat(frames) if frames else pd.DataFrame(columns=_STORE_COLUMNS)
        return stored.drop_duplicates("prompt", keep="last").set_index("prompt")[_SCORE_COLUMNS]

    def append(self, frame: pd.DataFrame) -> None:
        write_parquet(frame[_STORE_COLUMNS], self.path / f"part-{uuid.uuid4().hex}.parquet")


def _from_probabilities(probabilities: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    mass = probabilities.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = (probabilities @ values) / mass
    return pd.DataFrame({"score": np.where(mass > 0, score, np.nan), "mass": mass, "method": "probabilities", "answers": 0})


def _from_samples(backend, prompts: list[str], options, values: np.ndarray, samples: int, seed: int) -> pd.DataFrame:
    from fairpath.text import GenerationSettings

    settings = GenerationSettings(temperature=1.0, max_new_tokens=SAMPLED_TOKENS, n_samples=samples, seed=seed)
    rows = []
    for answers in backend.generate(prompts, settings=settings):
        parsed = [k for k in (parse_answer(text, options) for text in answers) if k is not None]
        rows.append({"score": float(values[parsed].mean()) if parsed else np.nan, "mass": len(parsed) / len(answers),
                     "method": "sampled", "answers": len(answers)})
    return pd.DataFrame(rows)


@validate_params({"batch_size": Integer(1), "samples": Integer(1, 1000), "seed": Seed(), "progress": Boolean()})
def score_prompts(backend, prompts, options, *, store: ScoreStore | None = None, batch_size: int = 64, samples: int = 10, seed: int = 0,
                  progress: bool = True) -> pd.DataFrame:
    """Score every distinct prompt (see the module docstring)."""
    prompts = list(dict.fromkeys(prompts))
    model, key = backend.model_id, options_key(options)
    stored = store.load(model, key) if store is not None else pd.DataFrame(columns=_SCORE_COLUMNS)
    missing = [p for p in prompts if p not in stored.index]
    values = np.array([o.value for o in options])
    spellings = [o.spellings for o in options]
    scored = [stored]
    bar = progress_bar(total=len(missing), desc=f"scoring {len(missing):,} prompts with {model}", enabled=progress)
    for start in range(0, len(missing), batch_size):
        batch = missing[start : start + batch_size]
        frame = _from_probabilities(backend.answer_probabilities(batch, spellings, batch_size=batch_size), values)
        unread = np.flatnonzero(frame["score"].isna().to_numpy())
        if len(unread):
            sampled = _from_samples(backend, [batch[i] for i in unread], options, values, samples, seed).set_axis(unread)
            frame = pd.concat([frame.drop(index=unread), sampled]).sort_index()
        frame = frame.assign(model=model, options=key, prompt=batch)
        if store is not None:
            store.append(frame)
        scored.append(frame.set_index("prompt")[_SCORE_COLUMNS])
        bar.update(len(batch))
    bar.close()
    result = pd.concat(scored)
    return result.loc[prompts].astype({"score": float, "mass": float, "method": str, "answers": int})
