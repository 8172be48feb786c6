"""Faults the app must survive: one model's weights damaged or missing (that model says why,
the others keep working), and a machine where CUDA is hidden (the app runs on the CPU).

Each test starts a server of its own, not the session's shared one: the fault is in the assets folder and the
environment a server reads at start."""
from __future__ import annotations

import shutil
import sys

import pytest
from gradio_client.exceptions import AppError

from harness.live_app import ARTIFACTS, Endpoints, assert_clear_message, live_app
from model.registry import ASSETS_ENV, assets_dir

SAMPLES = {"lm": "The cat sat on the mat", "mlm": "The cat sat on the <mask>", "dates": "3 March 1999"}
CUDA_CHECK = "CUDA hidden: torch.cuda.is_available() is False"
# Runs app.py in a process that first proves it cannot see a GPU.
APP_WITHOUT_CUDA = [sys.executable, "-c",
                    "import runpy, sys, torch\n"
                    "assert not torch.cuda.is_available(), 'CUDA is still visible'\n"
                    f"print({CUDA_CHECK!r}, flush=True)\n"
                    "sys.argv = ['app.py']\n"
                    "runpy.run_path('app.py', run_name='__main__')\n"]


def broken_assets(tmp_path, model: str, damage: str):
    """A copy of the shipped models with one model's weights corrupted or deleted."""
    copy = tmp_path / "assets"
    shutil.copytree(assets_dir(), copy)
    weights = copy / model / "model.safetensors"
    assert weights.is_file(), f"the shipped {model} model has no weights at {weights}"
    if damage == "corrupt":
        data = bytearray(weights.read_bytes())
        data[:64] = b"\xff" * 64  # the header length and JSON header become garbage
        weights.write_bytes(bytes(data[: len(data) // 2]))
    else:
        weights.unlink()
    return copy


def analyze(client, api, name):
    return client.predict(*api.args("/analyze", text=SAMPLES[name], name=name, kind=None), api_name="/analyze")


def check_one_model_broken(app, broken: str, words: tuple[str, ...]) -> None:
    client = app.client()
    api = Endpoints(client)
    with pytest.raises(AppError) as refused:
        analyze(client, api, broken)
    message = refused.value.message
    assert_clear_message(message, f"the {broken} model")
    assert broken in message and any(w in message for w in words), f"the message should say what is wrong: {message}"
    for name in sorted(set(SAMPLES) - {broken}):
        highlighted = analyze(client, api, name)[1]
        tokens = highlighted["value"] if isinstance(highlighted, dict) else highlighted
        assert tokens, f"{name} stopped working when {broken} broke"
    if broken != "dates":
        assert isinstance(client.predict(*api.args("/translate", text=SAMPLES["dates"]), api_name="/translate"), str)
    assert client.predict(api_name="/ping") == "ok"


def test_corrupt_weights_without_cuda(tmp_path):
    """lm's weights damaged, and CUDA hidden: the app still starts, says what is wrong with lm,
    and mlm and dates keep working on the CPU."""
    assets = broken_assets(tmp_path, "lm", "corrupt")
    env = {ASSETS_ENV: str(assets), "CUDA_VISIBLE_DEVICES": ""}
    with live_app(ARTIFACTS / "logs" / "fault_corrupt_no_cuda.log", env, command=APP_WITHOUT_CUDA) as app:
        assert CUDA_CHECK in app.log_text(), "the app process could see a GPU"
        check_one_model_broken(app, "lm", ("damaged", "cannot be read", "could not be loaded"))


def test_missing_weights(tmp_path):
    assets = broken_assets(tmp_path, "mlm", "delete")
    with live_app(ARTIFACTS / "logs" / "fault_missing.log", {ASSETS_ENV: str(assets)}) as app:
        check_one_model_broken(app, "mlm", ("missing", "could not be loaded"))
