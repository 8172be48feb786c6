"""One setting picks the device (ATTENTION_DEVICE), and the server's token cap follows it."""
import subprocess
import sys

import pytest
import torch

from model import device


def test_the_setting_picks_the_device_and_a_missing_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(device.DEVICE_ENV, "cpu")
    assert device.default_device() == torch.device("cpu")
    assert device.default_max_tokens() == 512
    monkeypatch.delenv(device.DEVICE_ENV)
    assert device.default_device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        monkeypatch.setenv(device.DEVICE_ENV, "cuda")
        with pytest.raises(RuntimeError, match="no GPU"):
            device.default_device()


@pytest.mark.parametrize("env,cap", [({}, None), ({"ATTENTION_MAX_TOKENS": "300"}, 300)])
def test_the_token_cap_is_512_on_a_cpu_2048_on_a_gpu_unless_set(env, cap):
    expected = cap or (2048 if torch.cuda.is_available() else 512)
    code = "import model.registry as m; print(m.MAX_TOKENS)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={
        **__import__("os").environ, **env}, cwd=__import__("pathlib").Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr[-500:]
    assert int(result.stdout.strip().splitlines()[-1]) == expected
