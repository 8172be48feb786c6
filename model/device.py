"""CUDA when there is a GPU, the CPU otherwise; nothing requires a GPU.

ATTENTION_DEVICE ("cpu", "cuda", "cuda:1") picks the device instead: the one setting that runs the app, or
the model, experiments, analysis and app tests, on a GPU (`ATTENTION_DEVICE=cuda pytest tests/model
tests/experiments tests/analysis tests/app`), or keeps them on the CPU of a machine that has one.
"""
import os

import torch

DEVICE_ENV = "ATTENTION_DEVICE"
# The longest input the server reads by default: the views of a 12 x 12-head model at 2,048 tokens are a GPU's
# work (604 MB of attention weights in one trace); a CPU stays at 512 (issue 39). ATTENTION_MAX_TOKENS overrides.
MAX_TOKENS_GPU, MAX_TOKENS_CPU = 2048, 512


def default_device() -> torch.device:
    chosen = os.environ.get(DEVICE_ENV, "").strip()
    if chosen:
        device = torch.device(chosen)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"{DEVICE_ENV}={chosen} but torch sees no GPU; unset it to use the CPU")
        return device
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def default_max_tokens() -> int:
    """The server's token cap where ATTENTION_MAX_TOKENS does not set one: 2,048 on a GPU, 512 on a CPU."""
    return MAX_TOKENS_GPU if default_device().type == "cuda" else MAX_TOKENS_CPU
