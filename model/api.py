"""The notebook API: load a shipped model by name, then trace, generate, fill or translate.

    from model import api
    lm = api.load("lm")
    trace = lm.trace("The cat sat on the mat")      # every layer and head
    lm.generate("The cat", 10)
    api.load("mlm").fill("The cat <mask> on the mat")
    api.load("dates").translate("Saturday, 21st of November 2026")   # '2026-11-21'
    api.load("minilm").trace("The animal didn't cross the street")    # a real pretrained BERT
    api.load("smollm2").next_tokens("The Eiffel Tower is in the city of")   # a real LLM, from its GGUF file
    api.load_pretrained("/models/gpt2")        # a BERT, RoBERTa, DistilBERT, GPT-2, Llama, Mistral or Qwen2 folder
    api.load_pretrained("/models/qwen2.5-0.5b-instruct-q8_0.gguf")     # or a GGUF file of a Llama, Mistral or Qwen2

Nothing is loaded on import. What `load` returns, a LoadedModel, is model/loaded.py.
"""
from __future__ import annotations

from pathlib import Path

import torch

from model import checkpoint, gguf, pretrained
from model import tokenizer as tok
from model.device import default_device
from model.loaded import ENCODED_BYTES, ENCODED_KEPT, END_TOKENS, MASK_MARKERS, LoadedModel

__all__ = ["ASSETS", "ENCODED_BYTES", "ENCODED_KEPT", "END_TOKENS", "MASK_MARKERS", "PRETRAINED", "SHIPPED",
           "LoadedModel", "load", "load_from", "load_pretrained", "tokenizer_path"]

ASSETS = Path(__file__).resolve().parent.parent / "assets"
SHIPPED = ("lm", "mlm", "dates", "classifier")  # the models trained by this project and kept in assets/<name>/
PRETRAINED = (pretrained.MINILM, gguf.SMOLLM2)  # shipped pretrained, not trained here (model/pretrained.py, gguf.py)
_SHARED: dict[tuple, "LoadedModel"] = {}  # smollm2 by (source, sha256, device, context): see load


def tokenizer_path(directory: Path) -> Path:
    """A model's tokenizer sits beside it, or one folder up when models share it."""
    for candidate in (directory / "tokenizer.json", directory.parent / "tokenizer.json"):
        if candidate.is_file():
            return candidate
    return directory / "tokenizer.json"


def load_from(directory: Path, name: str | None = None, weights: str = checkpoint.WEIGHTS, device=None) -> LoadedModel:
    directory = Path(directory)
    if pretrained.is_pretrained(directory):
        return load_pretrained(directory, name, device)
    device = torch.device(device) if device is not None else default_device()
    model = checkpoint.load(directory, weights, device)
    try:
        tokenizer = tok.load(tokenizer_path(directory))
    except FileNotFoundError as e:
        raise checkpoint.CheckpointError(str(e)) from e
    return LoadedModel(name or directory.name, model, tokenizer, directory, device, weights)


def load_pretrained(source: str | Path, name: str | None = None, device=None, expected_sha256: str | None = None,
                    label: str | None = None, context: int | None = None, about: str = "") -> LoadedModel:
    """A Hugging Face model folder (or a Hub id, where the Hub is reachable), or a GGUF file, run by this
    project's modules; context: read at most this many tokens (default: the model's own context)."""
    device = torch.device(device) if device is not None else default_device()
    if gguf.is_gguf(source):
        path = Path(source).expanduser()
        model, tokenizer = gguf.load(path, device, expected_sha256, label, context)
        return LoadedModel(name or path.stem, model, tokenizer, path.parent, device, pretrained=True, about=about
                           or f"read from the GGUF file {path.name}, its weights dequantised to float32 at load")
    directory = pretrained.resolve(source)
    model, tokenizer = pretrained.load(directory, device, expected_sha256, label, context)
    return LoadedModel(name or directory.name, model, tokenizer, directory, device, pretrained=True, about=about)


def load(name: str, assets: Path = ASSETS, device=None, context: int | None = None) -> LoadedModel:
    """A shipped model by name: "lm", "mlm", "dates", "classifier" (trained here), "minilm" or "smollm2"
    (pretrained; context: read at most this many tokens, as load_pretrained)."""
    if name == pretrained.MINILM:
        return load_pretrained(pretrained.minilm_folder(), name, device, pretrained.MINILM_SHA256,
                               label=f"minilm (from {pretrained.MINILM_PACKAGE})", context=context)
    if name == gguf.SMOLLM2:  # read once per process (seconds, 540 MB), then shared read-only as every model is
        source, sha256, label, about = gguf.smollm2_source()
        key = (str(source), sha256, str(device), context)
        if key not in _SHARED:
            _SHARED[key] = load_pretrained(source, name, device, sha256, label=label, context=context, about=about)
        return _SHARED[key]
    if name not in SHIPPED:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(SHIPPED + PRETRAINED)}")
    return load_from(Path(assets) / name, name, device=device)
