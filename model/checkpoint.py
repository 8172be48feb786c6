"""Saving and loading models: config.json + model.safetensors, never pickle."""
from __future__ import annotations

from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from model.config import TransformerConfig
from model.transformer import build

WEIGHTS = "model.safetensors"
CONFIG = "config.json"


class CheckpointError(RuntimeError):
    """A model's files are missing or damaged; the message names the file and the fix."""


SCALE = ".int8_scale"  # beside a matrix kept as int8: one float16 scale per row


def save(model: torch.nn.Module, directory: Path, weights_name: str = WEIGHTS, half: bool = False,
         int8: bool = False) -> Path:
    """config.json and the weights. half: float16. int8: every matrix as int8 with one float16 scale per
    row (quantize_rows), the rest float16: a quarter of float32's bytes, for training snapshots, which are
    drawn and never trained from."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.config.save(directory / CONFIG)
    state = {}
    seen = set()
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() in seen:  # tied weights are stored once
            continue
        seen.add(tensor.data_ptr())
        tensor = tensor.detach().cpu().contiguous()
        if int8 and tensor.is_floating_point() and tensor.ndim == 2:
            state[name], state[name + SCALE] = quantize_rows(tensor)
        else:
            state[name] = tensor.half() if (half or int8) and tensor.is_floating_point() else tensor
    path = directory / weights_name
    save_file(state, str(path))
    return path


def quantize_rows(matrix: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, cols) -> int8 values and a float16 scale per row: row ≈ values · scale, each weight within half
    a step (its row's largest magnitude / 254) of what it was."""
    matrix = matrix.float()
    scale = (matrix.abs().amax(dim=1) / 127).clamp(min=1e-8).half()
    values = torch.round(matrix / scale.float()[:, None]).clamp(-127, 127).to(torch.int8)
    return values, scale


def dequantize(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A state read from a file with its int8 matrices (and their SCALE rows) turned back into float32."""
    scales = {name[:-len(SCALE)]: state[name] for name in state if name.endswith(SCALE)}
    if not scales:
        return state
    return {name: (tensor.float() * scales[name].float()[:, None] if name in scales else tensor)
            for name, tensor in state.items() if not name.endswith(SCALE)}


def load_weights(model: torch.nn.Module, path: Path) -> None:
    path = Path(path)
    fix = "Retrain with `python -m training.train <preset>` or restore it with `git checkout -- assets/`."
    if not path.is_file():
        raise CheckpointError(f"Weights file {path} is missing. {fix}")
    try:
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise CheckpointError(f"Weights file {path} is damaged and cannot be read ({e}). {fix}") from e
    expected = model.state_dict()
    state = {k: v.to(expected[k].dtype) if k in expected else v for k, v in dequantize(state).items()}
    try:
        missing, unexpected = model.load_state_dict(state, strict=False)
    except RuntimeError as e:  # tensor sizes differ from what config.json describes
        raise CheckpointError(f"Weights file {path} does not match its config.json ({str(e)[:200]}). {fix}") from e
    tied = {"to_vocab.weight"} if model.config.tie_embeddings else set()
    missing = [m for m in missing if m not in tied]
    if missing or unexpected:
        raise CheckpointError(
            f"Weights file {path} does not match its config (missing {missing[:3]}, unexpected {unexpected[:3]}). {fix}"
        )


def load(directory: Path, weights_name: str = WEIGHTS, device: str | torch.device = "cpu") -> torch.nn.Module:
    """Rebuild the model from config.json and fill it from the safetensors file."""
    directory = Path(directory)
    try:
        config = TransformerConfig.load(directory / CONFIG)
    except (FileNotFoundError, ValueError, TypeError) as e:
        raise CheckpointError(str(e)) from e
    model = build(config)
    load_weights(model, directory / weights_name)
    return model.to(device).eval()
