"""bertviz on the very attention our app shows: export the lm's trace probabilities for a
sentence, render them with bertviz in its own environment (.bench-venv), and compare sizes."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from harness.live_app import ROOT

BENCH_PYTHON = ROOT / ".bench-venv" / "bin" / "python"
SETUP = ("python3.11 -m venv .bench-venv && .bench-venv/bin/pip install torch==2.13.0 bertviz==1.4.1")


def bertviz_sizes(model, text: str) -> dict:
    """head_view / model_view HTML size and render time for `text` through `model` (an api.LoadedModel)."""
    if not BENCH_PYTHON.is_file():
        raise RuntimeError(f"{BENCH_PYTHON} is missing; create it with: {SETUP}")
    trace = model.trace(text)
    attention = trace.attention["self"]
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "attention.npz", Path(folder) / "result.json"
        np.savez(source, probs=attention.probs.astype(np.float32), tokens=np.array(trace.tokens))
        subprocess.run([str(BENCH_PYTHON), str(ROOT / "bench" / "bertviz_render.py"), str(source), str(target)],
                       check=True, cwd=ROOT, timeout=600)
        return json.loads(target.read_text())
