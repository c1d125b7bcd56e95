"""Sampling continuations from language models, reproducibly and fast.

Public contract
---------------
``GenerationSettings(*, temperature=1.0, top_k=None, top_p=1.0, max_new_tokens=50, n_samples=20,
batch_size=256, seed=0, do_sample=True)`` (fairpath.text._parameters, a module without torch)
    Frozen dataclass, validated on creation (bad values raise FairpathInputError). ``settings_hash``
    (property) identifies what changes the samples: everything except ``n_samples`` and ``batch_size``.
``SampleRequest(prompt, sample_index)``
    One sample to draw: sample ``i`` of a prompt is the same text however many samples are asked for
    and whichever batch it lands in (randomness comes from its own stream, keyed by seed, prompt, i).
``GenerationBackend`` (abstract)
    ``model_id`` (str) and ``generate_requests(requests, settings) -> list[str]`` (continuations only,
    one per request, in order). ``generate(prompts, n_samples=None, settings=None, seed=None)`` returns
    ``list[list[str]]`` (``n_samples`` continuations per prompt). ``describe()`` (where the samples come
    from) and ``dtype`` (the model's precision, "n/a" when unknown) go into an audit's settings. A backend
    that can score text sets ``scores_perplexity = True`` and implements ``token_log_likelihoods(texts)``;
    the others refuse a perplexity corpus. ``answer_probabilities(prompts, options)`` reads the model's
    next-token probability of each answer option (a decision audit's score; backends that cannot refuse it).
    New engines (vLLM, an OpenAI-compatible endpoint) subclass
    this; nothing downstream changes.
``HFGenerator(model="default", *, tokenizer=None, model_id=None, device="cpu", dtype="auto",
num_threads="auto", workers=1)``
    The backend for a local Hugging Face causal LM ('default', a folder, or a loaded model with its
    tokenizer). Each batch runs every distinct prompt once, copies its key/value cache to the rows that
    sample from it into buffers preallocated for the whole continuation, then decodes token by token,
    writing each step's keys and values in place; rows stop at EOS (finished rows leave the batch).
    ``tokens_generated`` counts the tokens it has generated (EOS included). ``dtype="auto"`` is
    bfloat16 on CUDA and on CPUs with AMX or AVX512-BF16; ``workers`` spreads whole batches over
    spawned single-threaded processes (``close()`` stops them).

Reproducibility: the uniforms that pick each token come from a numpy PCG64 stream seeded by
(seed, sha256(prompt), sample_index). The same settings (batch size, precision and thread count
included) give bit-identical samples, also after an interrupted run resumes, and ``workers=N``
gives those of one single-threaded process. Another batch size changes the float rounding of the
logits (matrix products block differently), which flips a picked token where the uniform lies
near a CDF boundary, and the sample diverges from there (how often on SmolLM2 is not yet measured);
on random logits the two-level pick agrees with the exact float64 inverse CDF on 99.98% of rows.
"""

from __future__ import annotations

import contextlib
import copy
import ctypes
import functools
import hashlib
import math
import os
import sys
import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import replace
from typing import NamedTuple, Sequence

import numpy as np
import torch

from fairpath._exceptions import FairpathInputError
from fairpath._validation import validate_params
from fairpath.text._parameters import DEFAULT_DTYPE, HF_GENERATOR_SETTINGS, GenerationSettings


class SampleRequest(NamedTuple):
    """Sample number ``sample_index`` of ``prompt``."""

    prompt: str
    sample_index: int


def sample_uniforms(prompt: str, sample_index: int, seed: int, length: int) -> np.ndarray:
    """The ``length`` uniforms in [0, 1) that pick the tokens of one sample."""
    words = np.frombuffer(hashlib.sha256(prompt.encode("utf-8")).digest()[:16], dtype=np.uint32)
    sequence = np.random.SeedSequence([int(seed), *words.tolist(), int(sample_index)])
    return np.random.default_rng(sequence).random(length)


class GenerationBackend(ABC):
    """A source of continuations. Subclasses implement ``model_id`` and ``generate_requests``; one that can score
    text under its model also sets ``scores_perplexity`` and implements ``token_log_likelihoods``."""

    # Whether token_log_likelihoods is implemented: an audit measures perplexity only with such a backend.
    scores_perplexity: bool = False

    @property
    def concurrent_batches(self) -> int:
        """Batches the backend decodes side by side: a caller that stores samples as it goes hands it this many
        batches at a time, so that none of them waits (HFGenerator: its workers)."""
        return 1

    @property
    @abstractmethod
    def model_id(self) -> str:
        """A stable id of the model, used to key stored samples."""

    @abstractmethod
    def generate_requests(self, requests: Sequence[SampleRequest], settings: GenerationSettings) -> list[str]:
        """One continuation (the generated text only) per request, in the order given."""

    def token_log_likelihoods(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per-token log-likelihoods of each text under the backend's model (the first token is not predicted)."""
        raise perplexity_not_measurable(self)

    def answer_probabilities(self, prompts: Sequence[str], options: Sequence[Sequence[str]], *, batch_size: int = 64) -> np.ndarray:
        """The model's next-token probability of each option after each prompt, shape (prompts, options).

        ``prompts`` are user messages (a chat model reads them through its chat template); option ``k`` is spelled
        by any of ``options[k]``, and its probability is the summed probability of the tokens that spell it, with
        or without leading whitespace. A row is NaN where the backend got no probabilities for that prompt (an
        endpoint that returns none). Backends that cannot read probabilities raise FairpathInputError.
        """
        raise FairpathInputError(f"{type(self).__name__} gives no next-token probabilities; score decisions with a local "
                                 "model (HFGenerator) or an OpenAI-compatible endpoint")

    def describe(self) -> dict:
        """What a report states about where the samples came from (no secrets)."""
        return {"backend": type(self).__name__}

    @property
    def dtype(self) -> str:
        """The precision of the backend's model ("float32", "bfloat16"), or "n/a" where the backend does not know it."""
        return "n/a"

    def generate(
        self,
        prompts: Sequence[str],
        n_samples: int | None = None,
        settings: GenerationSettings | None = None,
        seed: int | None = None,
    ) -> list[list[str]]:
        """``n_samples`` continuations of every prompt (defaults from ``settings``)."""
        settings = settings or GenerationSettings()
        overrides = {k: v for k, v in {"n_samples": n_samples, "seed": seed}.items() if v is not None}
        settings = replace(settings, **overrides)
        prompts = _check_prompts(prompts)
        requests = [SampleRequest(p, i) for p in prompts for i in range(settings.n_samples)]
        texts = self.generate_requests(requests, settings)
        n = settings.n_samples
        return [texts[k * n : (k + 1) * n] for k in range(len(prompts))]


def perplexity_not_measurable(backend: GenerationBackend) -> FairpathInputError:
    """The error of a perplexity asked of a backend without ``scores_perplexity``."""
    return FairpathInputError(f"perplexity is not measurable with this backend ({type(backend).__name__}): it samples continuations "
                              "but cannot score text; measure perplexity with a local model (HFGenerator), or pass no corpus")


def _check_prompts(prompts) -> list[str]:
    if isinstance(prompts, str):
        raise FairpathInputError("prompts must be a list of strings, got a single string; wrap it in a list")
    prompts = list(prompts)
    for prompt in prompts:
        if not isinstance(prompt, str) or not prompt.strip():
            raise FairpathInputError(f"every prompt must be a non-empty string, got {prompt!r}")
    return prompts


class _OwnLoad:
    """This process's part of the 1-minute load average, estimated the way the kernel computes the load.

    The kernel's figure is an exponential average (time constant 60 s) of the runnable threads; this
    one averages the process's own CPU use (cores busy, from its CPU time) between looks the same way.
    """

    TIME_CONSTANT = 60.0

    def __init__(self, wall_clock=time.monotonic, cpu_clock=time.process_time):
        self._wall_clock, self._cpu_clock = wall_clock, cpu_clock
        self._wall, self._cpu, self.value = wall_clock(), cpu_clock(), 0.0

    def update(self) -> float:
        wall, cpu = self._wall_clock(), self._cpu_clock()
        elapsed = wall - self._wall
        if elapsed > 0:
            decay = math.exp(-elapsed / self.TIME_CONSTANT)
            self.value = decay * self.value + (1 - decay) * (cpu - self._cpu) / elapsed
            self._wall, self._cpu = wall, cpu
        return self.value


_OWN_LOAD = _OwnLoad()


def _auto_threads() -> int:
    """Torch's thread count, cut to the cores other processes leave idle (at least one).

    On an oversubscribed machine every parallel region waits for all its threads to be scheduled:
    measured here under a load of 17 on 2 cores, 2 threads decoded ten times slower than 1. The
    process's own part of the load is left out: counted, a run's first batch would leave it on
    one core for good (its own one-core load leaves one core "idle" on two).
    """
    others = max(0.0, os.getloadavg()[0] - _OWN_LOAD.update())
    idle = (os.cpu_count() or 1) - others
    return max(1, min(torch.get_num_threads(), int(idle + 0.5)))


@contextlib.contextmanager
def _torch_threads(num_threads: int | str | None):
    if num_threads is None:
        yield
        return
    if num_threads == "auto":
        num_threads = _auto_threads()
    previous = torch.get_num_threads()
    torch.set_num_threads(num_threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@functools.lru_cache(maxsize=1)
def _reuse_freed_memory() -> None:
    """Make glibc keep freed memory for reuse instead of handing it back to the kernel (once per process).

    Every decoding step allocates tensors of tens of MB (the logits and their probabilities: 50 MB at
    batch 256 for SmolLM2). glibc serves blocks that large with fresh pages from the kernel and returns
    them on free, so each step paid the page faults again: measured on this 2-core Xeon, a float32
    copy of 256 x 49,152 logits took 42 ms, 20 ms with freed memory kept, and bfloat16 decoding at
    batch 256 rose from 245-265 to 290-326 tok/s. The cost is that the heap keeps its peak size (the
    largest step's tensors) after generation. Other C libraries (macOS, musl) are left as they are.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's mallopt parameters
    libc.mallopt(m_mmap_threshold, 1 << 30)
    libc.mallopt(m_trim_threshold, 1 << 30)


def _module_digest(model) -> str:
    """sha256 prefix of a loaded model's weights (for models that have no folder)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()[:16]


def resolve_dtype(dtype: str, device) -> torch.dtype:
    """The weights' precision; "auto" is bfloat16 where the hardware computes it natively.

    bfloat16 matrix products run on AMX or AVX512-BF16 units (here 4.3x float32's matmul rate per
    core) and on every recent GPU; elsewhere they are emulated and slower than float32.
    """
    if dtype != "auto":
        return getattr(torch, dtype)
    if torch.device(device).type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    native = torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    return torch.bfloat16 if torch.device(device).type == "cpu" and native else torch.float32


def resolve_dtype_name(dtype: str, device) -> str:
    """:func:`resolve_dtype` as the name the settings use ("float32" or "bfloat16")."""
    return str(resolve_dtype(dtype, device)).removeprefix("torch.")


class HFGenerator(GenerationBackend):
    """Sample continuations from a local Hugging Face causal LM with shared prompt computation.

    Parameters
    ----------
    model : "default", path or PreTrainedModel
        ``"default"`` (SmolLM2-135M-Instruct), a causal-LM folder, or a model already loaded (then pass
        its ``tokenizer``).
    tokenizer : tokenizer, optional
        Needed only with a loaded model.
    model_id : str, optional
        Overrides the id used to key samples (by default derived from the folder or the weights).
    device : str
        Torch device ("cpu", "cuda").
    dtype : "auto", "float32" or "bfloat16"
        Precision of a model loaded from a folder. "auto" (default) is bfloat16 on CUDA and on CPUs
        with AMX or AVX512-BF16 (2-2.5x float32's speed there, at a small cost in precision), else
        float32. A precision other than float32 is part of the model id, so samples of different
        precisions are never mixed in a store. A loaded model keeps its own.
    num_threads : int, "auto" or None
        Torch threads while generating (restored afterwards). "auto" (default) uses torch's setting
        reduced to the cores left idle by other processes (1-minute load average), at least one;
        None keeps torch's setting.
    workers : int or "auto"
        Processes that generate batches side by side, each with one torch thread and its own copy of
        the model (loaded once, on first use, from the folder). One thread per process does not wait
        on the others at every parallel region, which on a shared machine decides the speed (2 cores at
        load 4.5, bfloat16: 285-300 tok/s against 45-71 for one process with 2 threads); "auto" is one worker per core on CPU and 1 on CUDA. Samples are the
        same as in one process with one thread and the same batch size (each batch goes whole to one
        worker). Only a model given as a folder or "default" can go to workers.

    Generating sets glibc to keep freed memory for reuse (``_reuse_freed_memory``), process-wide.
    """

    scores_perplexity = True  # token_log_likelihoods scores text under the local model

    @validate_params(HF_GENERATOR_SETTINGS)
    def __init__(
        self, model="default", *, tokenizer=None, model_id=None, device="cpu", dtype=DEFAULT_DTYPE, num_threads="auto",
        workers=1,
    ):
        from fairpath.text._models import _configure_tokenizer, load_causal_lm
        from fairpath.text._models import model_id as folder_model_id

        if workers == "auto":
            workers = (os.cpu_count() or 1) if torch.device(device).type == "cpu" else 1
        if isinstance(model, (str, os.PathLike)):
            resolved = resolve_dtype(dtype, device)
            self.model, self.tokenizer = load_causal_lm(model, device=device, dtype=resolved)
            precision = "" if resolved == torch.float32 else f"#{str(resolved).removeprefix('torch.')}"
            self._model_id = model_id or folder_model_id(model) + precision
            self._worker_arguments = (os.fspath(model), self._model_id, device, str(resolved).removeprefix("torch."))
        else:
            if tokenizer is None:
                raise FairpathInputError("HFGenerator got a loaded model without its tokenizer; pass tokenizer=...")
            if workers > 1:
                raise FairpathInputError(
                    f"workers={workers} needs the model's folder (each worker loads it); pass the folder or "
                    "'default' instead of a loaded model, or workers=1"
                )
            self.model, self.tokenizer = model, _configure_tokenizer(tokenizer)
            self._worker_arguments = None  # a loaded model has no folder for workers to load
            self._model_id = model_id or f"{model.config.name_or_path or type(model).__name__}@{_module_digest(model)}"
        self.num_threads, self.workers = num_threads, workers
        self._pool = None
        self.eos_token_ids = self._eos_ids()
        self.tokens_generated = 0  # running count (EOS included), for throughput reports

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def concurrent_batches(self) -> int:
        return self.workers

    def token_log_likelihoods(self, texts: Sequence[str]) -> list[np.ndarray]:
        from fairpath.text._quality import token_log_likelihoods

        return token_log_likelihoods(self.model, self.tokenizer, texts)

    @property
    def dtype(self) -> str:
        return str(self.model.dtype).removeprefix("torch.")

    def describe(self) -> dict:
        """The backend, and the SHA-256 prefix of the weights it loaded (config and weight files, or the loaded tensors)."""
        from fairpath.text._models import weights_digest

        digest = weights_digest(self._worker_arguments[0]) if self._worker_arguments else _module_digest(self.model)
        return {"backend": type(self).__name__, "weights_sha256": digest, "device": str(self.model.device)}

    def answer_probabilities(self, prompts: Sequence[str], options: Sequence[Sequence[str]], *, batch_size: int = 64) -> np.ndarray:
        prompts = _check_prompts(prompts)
        tokens = [self._option_tokens(spellings) for spellings in options]
        encoded = [self._message_ids(prompt) for prompt in prompts]
        probabilities = np.empty((len(prompts), len(options)))
        order = sorted(range(len(prompts)), key=lambda i: len(encoded[i]))  # similar lengths batch with little padding
        shared = _common_prefix_length(encoded)
        with self._inference():
            prefix = self._prefix_cache(encoded[0][:shared])
            for start in range(0, len(order), batch_size):
                rows = order[start : start + batch_size]
                last = self._last_token_distribution([encoded[i][shared:] for i in rows], prefix, shared)
                probabilities[rows] = torch.stack([last[:, ids].sum(dim=1) for ids in tokens], dim=1).double().numpy()
        return probabilities

    @contextlib.contextmanager
    def _inference(self):
        """Eval mode, no autograd and the generator's torch threads for the block; a model passed in may be mid-training,
        so its mode is restored afterwards."""
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode(), _torch_threads(self.num_threads):
                yield
        finally:
            self.model.train(was_training)

    def _message_ids(self, prompt: str) -> list[int]:
        """A user message's token ids: through the chat template where the tokenizer has one, else the text itself."""
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True)
            return self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self.tokenizer(prompt)["input_ids"]

    def _option_tokens(self, spellings: Sequence[str]) -> list[int]:
        """The token ids that spell an option on their own (each spelling, and each after a space)."""
        found = {ids[0] for spelling in spellings for form in (spelling, " " + spelling)
                 if len(ids := self.tokenizer.encode(form, add_special_tokens=False)) == 1}
        if not found:
            pieces = {s: self.tokenizer.convert_ids_to_tokens(self.tokenizer.encode(s, add_special_tokens=False)) for s in spellings}
            raise FairpathInputError(f"no spelling of the option {list(spellings)} is a single token of {self.model_id} (they split into "
                                     f"{pieces}); give spellings the model writes as one token, e.g. 'yes' rather than 'yes, definitely'")
        return sorted(found)

    def _prefix_cache(self, prefix: list[int]):
        """The key/value cache of the token ids every prompt of a call starts with (the chat template's system turn and the
        template's first words), computed once; None when there are none."""
        if not prefix:
            return None
        output = self.model(input_ids=torch.tensor([prefix], device=self.model.device), use_cache=True)
        return output.cache if hasattr(output, "cache") else output.past_key_values

    def _last_token_distribution(self, rows: list[list[int]], prefix=None, shared: int = 0) -> torch.Tensor:
        """The next-token probabilities after each row of token ids (left-padded into one batch, after the ``shared``
        prefix tokens whose cache is ``prefix``), float32. Padding sits between the prefix and a row's own tokens,
        masked out, with positions counted over the real tokens only, so a row reads as it would alone."""
        width = max(len(ids) for ids in rows)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids in rows], device=self.model.device)
        mask = torch.tensor([[1] * shared + [0] * (width - len(ids)) + [1] * len(ids) for ids in rows], device=self.model.device)
        cache = None
        if prefix is not None:
            cache = copy.deepcopy(prefix)
            cache.batch_repeat_interleave(len(rows))
        output = self.model(input_ids=input_ids, attention_mask=mask, position_ids=(mask.cumsum(dim=1) - 1).clamp(min=0)[:, shared:],
                            cache=cache, use_cache=cache is not None, logits_to_keep=1)
        return output.logits[:, -1, :].float().softmax(dim=-1).cpu()

    def close(self) -> None:
        """Stop the worker processes (started again if the generator is used afterwards)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _eos_ids(self) -> list[int]:
        ids = self.model.generation_config.eos_token_id
        ids = [] if ids is None else [ids] if isinstance(ids, int) else list(ids)
        if self.tokenizer.eos_token_id is not None:
            ids.append(self.tokenizer.eos_token_id)
        return sorted(set(ids))

    def generate_requests(self, requests: Sequence[SampleRequest], settings: GenerationSettings) -> list[str]:
        requests = [SampleRequest(*r) for r in requests]
        _check_prompts([r.prompt for r in requests])
        batches = [requests[start : start + settings.batch_size] for start in range(0, len(requests), settings.batch_size)]
        if self.workers > 1 and len(batches) > 1:
            return self._generate_in_workers(batches, settings)
        return self._generate_here(batches, settings)

    def _generate_in_workers(self, batches: list[list[SampleRequest]], settings: GenerationSettings) -> list[str]:
        if self._pool is None:
            import concurrent.futures
            import multiprocessing

            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker, initargs=self._worker_arguments,
            )
            weakref.finalize(self, self._pool.shutdown)
        texts: list[str] = []
        for batch_texts, tokens in self._pool.map(_worker_batch, batches, [settings] * len(batches)):
            texts.extend(batch_texts)
            self.tokens_generated += tokens
        return texts

    def _generate_here(self, batches: list[list[SampleRequest]], settings: GenerationSettings) -> list[str]:
        texts: list[str] = []
        _reuse_freed_memory()
        with self._inference():
            for batch in batches:
                texts.extend(self._generate_batch(batch, settings))
        return texts

    def _generate_batch(self, requests: list[SampleRequest], settings: GenerationSettings) -> list[str]:
        device = self.model.device
        prompts = list(dict.fromkeys(r.prompt for r in requests))
        slot = {prompt: i for i, prompt in enumerate(prompts)}
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True).to(device)
        prompt_mask = encoded["attention_mask"]
        prompt_lengths = prompt_mask.sum(dim=1)
        if bool((prompt_lengths == 0).any()):
            raise FairpathInputError("a prompt tokenizes to no tokens; give prompts with some text")
        # Each distinct prompt runs once; its cache rows are then copied to the samples that continue it.
        output = self.model(
            input_ids=encoded["input_ids"],
            attention_mask=prompt_mask,
            position_ids=(prompt_mask.cumsum(dim=1) - 1).clamp(min=0),
            use_cache=True,
            logits_to_keep=1,
        )
        cache = output.cache if hasattr(output, "cache") else output.past_key_values
        rows = torch.tensor([slot[r.prompt] for r in requests], device=device)
        logits = output.logits[rows, -1, :]
        positions = prompt_lengths[rows]
        decoder = _Decoder(self.model, cache, rows, prompt_mask[rows], settings.max_new_tokens)
        uniforms = torch.from_numpy(
            np.stack([sample_uniforms(r.prompt, r.sample_index, settings.seed, settings.max_new_tokens) for r in requests])
        ).to(device)

        tokens = torch.full((len(requests), settings.max_new_tokens), -1, dtype=torch.long, device=device)
        active = torch.arange(len(requests), device=device)  # original row of each batch row
        eos = torch.tensor(self.eos_token_ids, device=device)
        for step in range(settings.max_new_tokens):
            next_tokens = _pick_tokens(logits, uniforms[active, step], settings)
            tokens[active, step] = next_tokens
            running = ~torch.isin(next_tokens, eos)
            if step == settings.max_new_tokens - 1 or not bool(running.any()):
                break
            if not bool(running.all()):  # finished rows leave the batch
                keep = running.nonzero().squeeze(1)
                decoder.select(keep)
                active, next_tokens, positions = active[keep], next_tokens[keep], positions[keep]
            logits = decoder.step(next_tokens, positions)
            positions = positions + 1
        self.tokens_generated += int((tokens >= 0).sum())
        prompt_ids = [ids[-int(n) :] for ids, n in zip(encoded["input_ids"].tolist(), prompt_lengths)]
        return [self._decode(prompt_ids[slot[r.prompt]], row) for r, row in zip(requests, tokens.tolist())]

    def _decode(self, prompt_ids: list[int], row: list[int]) -> str:
        """The text the generated tokens add to the prompt (decoded in context, so spaces survive)."""
        generated = []
        for token in row:
            if token < 0 or token in self.eos_token_ids:
                break
            generated.append(token)
        prefix = self.tokenizer.decode(prompt_ids, skip_special_tokens=True)
        full = self.tokenizer.decode(prompt_ids + generated, skip_special_tokens=True)
        if full.startswith(prefix):
            return full[len(prefix) :]
        return self.tokenizer.decode(generated, skip_special_tokens=True)


def _common_prefix_length(rows: list[list[int]]) -> int:
    """Tokens every row starts with, leaving each row at least one token of its own."""
    shortest = min(len(ids) for ids in rows) - 1
    first = rows[0]
    length = 0
    while length < shortest and all(ids[length] == first[length] for ids in rows):
        length += 1
    return length


_BLOCK = 256  # tokens per block of the two-level inverse CDF (192 blocks for SmolLM2's 49,152 tokens)


_WORKER: HFGenerator | None = None  # the model of a worker process


def _start_worker(model: str, model_id: str, device: str, dtype: str) -> None:
    global _WORKER
    torch.set_num_threads(1)
    _WORKER = HFGenerator(model, model_id=model_id, device=device, dtype=dtype, num_threads=None)


def _worker_batch(batch: list[SampleRequest], settings: GenerationSettings) -> tuple[list[str], int]:
    """One batch's texts and the tokens generated for them, in a worker process."""
    before = _WORKER.tokens_generated
    texts = _WORKER.generate_requests(batch, replace(settings, batch_size=len(batch)))
    return texts, _WORKER.tokens_generated - before


def _pick_tokens(logits, uniforms, settings: GenerationSettings):
    """Inverse-CDF sampling with one given uniform per row (temperature, top-k and top-p applied).

    The probabilities are a float32 softmax; the CDF is walked in two levels (``_inverse_cdf``) so
    that no vocabulary-wide running sum or float64 copy is made: those were a third of decoding time.
    """
    if not settings.do_sample:
        return logits.argmax(dim=-1)
    # At temperature 1 the softmax reads bfloat16 logits directly: a float32 copy would cost as much again.
    scaled = logits if settings.temperature == 1.0 else logits.float() / settings.temperature
    if settings.top_k is not None and settings.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, settings.top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.softmax(scaled, dim=-1, dtype=torch.float32)
    if settings.top_p >= 1.0:
        return _inverse_cdf(probs, uniforms)
    probs, order = torch.sort(probs, dim=-1, descending=True)
    before = probs.cumsum(dim=-1) - probs  # mass of the more likely tokens
    probs = probs.masked_fill(before >= settings.top_p, 0.0)
    return order.gather(1, _inverse_cdf(probs, uniforms)[:, None]).squeeze(1)


def _inverse_cdf(weights, uniforms):
    """For each row, the first token whose cumulative weight exceeds ``uniform × total``.

    Two levels: the sums of blocks of ``_BLOCK`` tokens (float32 within a block, float64 across
    blocks) locate the block, then a running sum over that block alone locates the token. The pick is
    the exact float64 inverse CDF's except where the target lies within float32 rounding of a
    boundary (1 row in 10,000 or fewer, tests/text/test_generation.py). Only tokens of positive
    weight are picked, also when rounding puts the target at or past the end of a block or the row.
    """
    rows, size = weights.shape
    blocks = -(-size // _BLOCK)
    if blocks * _BLOCK != size:
        weights = torch.nn.functional.pad(weights, (0, blocks * _BLOCK - size))
    weights = weights.view(rows, blocks, _BLOCK)
    sums = weights.sum(dim=-1).double()
    cdf = sums.cumsum(dim=-1)
    target = uniforms.to(cdf) * cdf[:, -1]
    block = torch.minimum(torch.searchsorted(cdf, target[:, None], right=True).squeeze(1), _last_positive(sums))
    index = torch.arange(rows, device=weights.device)
    inner = weights[index, block].double()
    offset = target - (cdf[index, block] - sums[index, block])
    token = torch.searchsorted(inner.cumsum(dim=-1), offset[:, None], right=True).squeeze(1)
    return block * _BLOCK + torch.minimum(token, _last_positive(inner))


def _last_positive(weights):
    """Index of each row's last positive weight."""
    return weights.shape[-1] - 1 - (weights > 0).flip(-1).to(torch.uint8).argmax(dim=-1)


@functools.lru_cache(maxsize=1)
def _cache_layers():
    """Hugging Face's DynamicLayer and fairpath's preallocated version of it (transformers imported on first use)."""
    from transformers.cache_utils import DynamicLayer

    class _PreallocatedLayer(DynamicLayer):
        """A key/value cache layer whose buffers hold the whole continuation from the start.

        Each step writes its keys and values in place and attention reads a view of the filled part,
        instead of Hugging Face's concatenation, which copies the whole cache at every step of every layer.
        Rows are removed (finished samples) by one gather of the buffers.
        """

        def __init__(self, keys: torch.Tensor, values: torch.Tensor, capacity: int):
            super().__init__()
            self._keys = keys.new_empty((*keys.shape[:2], capacity, keys.shape[-1]))
            self._values = values.new_empty((*values.shape[:2], capacity, values.shape[-1]))
            self._keys[:, :, : keys.shape[2]] = keys
            self._values[:, :, : values.shape[2]] = values
            self._length = keys.shape[2]
            self.device, self.is_initialized = keys.device, True
            self._view()

        def _view(self) -> None:
            self.keys, self.values = self._keys[:, :, : self._length], self._values[:, :, : self._length]

        def update(self, key_states, value_states, *args, **kwargs):
            end = self._length + key_states.shape[-2]
            self._keys[:, :, self._length : end] = key_states
            self._values[:, :, self._length : end] = value_states
            self._length = end
            self._view()
            return self.keys, self.values

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            self._keys, self._values = self._keys[indices], self._values[indices]
            self._view()

    return DynamicLayer, _PreallocatedLayer


class _Decoder:
    """Decoding steps through the model's own forward, on a cache preallocated for every new token.

    The prompt cache (one row per distinct prompt) is copied once into per-sample buffers of
    prompt + ``max_new_tokens`` positions; the attention mask is preallocated likewise.
    """

    def __init__(self, model, cache, rows, prompt_mask, max_new_tokens: int):
        self.model, self.cache = model, cache
        dynamic_layer, preallocated_layer = _cache_layers()
        for number, layer in enumerate(cache.layers):
            if type(layer) is not dynamic_layer:  # sliding-window or other layers keep Hugging Face's own logic
                layer.batch_select_indices(rows)
                continue
            capacity = layer.keys.shape[2] + max_new_tokens
            cache.layers[number] = preallocated_layer(layer.keys[rows], layer.values[rows], capacity)
        self._mask = torch.cat([prompt_mask, prompt_mask.new_ones((len(rows), max_new_tokens))], dim=1)
        self._filled = prompt_mask.shape[1]

    def select(self, keep):
        self.cache.batch_select_indices(keep)
        self._mask = self._mask[keep]

    def step(self, tokens, positions):
        self._filled += 1
        output = self.model(
            input_ids=tokens[:, None], attention_mask=self._mask[:, : self._filled], position_ids=positions[:, None],
            cache=self.cache, use_cache=True,
        )
        return output.logits[:, -1, :]
