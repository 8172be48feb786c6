"""Causal tracing's speed: lm and smollm2 (SmolLM2-135M-Instruct from its package's GGUF file). Without that
package: a random checkpoint of SmolLM2-135M's shape (30 layers of 576, 9 query heads sharing 3 key/value heads,
SwiGLU of 1,536), built here with transformers' config class and this project's tokenizer: no download. How fast
a model runs does not depend on what its weights learned.

    python -m bench.patching /tmp/models     # builds the checkpoint (kept for the next run), prints the timings

Timed in this process on one thread (as the server runs a request), for a 12-token pair that differs in its
second token (so 11 of 12 positions differ after it, as in "The Eiffel Tower …" against "The Colosseum …"):
the preview (both runs recorded, one backward pass) and the exact grids (one patched pass per cell).
The issue's targets: lm's exact grid within 2 s; SmolLM2's residual grid within 15 s, its preview within 1.5 s.
"""
from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

from model.api import ASSETS

SEED = 0
TOKENS = 12
SMOLLM2_SHAPE = dict(hidden_size=576, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                     intermediate_size=1536, max_position_embeddings=2048, vocab_size=4096, rope_theta=100000.0,
                     tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
NAME = "smollm2-shape"


def build(root: Path) -> Path:
    import torch
    import transformers as t

    folder = Path(root) / NAME
    if not (folder / "model.safetensors").is_file():
        torch.manual_seed(SEED)
        model = t.LlamaForCausalLM(t.LlamaConfig(**SMOLLM2_SHAPE))
        folder.mkdir(parents=True, exist_ok=True)
        model.eval().save_pretrained(folder, safe_serialization=True)
        shutil.copy(ASSETS / "tokenizer.json", folder / "tokenizer.json")
    return folder


def _pair(loaded):
    """A 12-token pair differing at its second token, and two tokens to compare (the patching code's own Pair)."""
    from experiments import patching

    ids = loaded.encode("the cat sat on the mat and then the dog ran to").ids[:TOKENS]
    other = list(ids)
    other[1] = ids[2]
    tokens = [loaded.label(i) for i in ids]
    return patching.Pair(ids, other, tokens, [loaded.label(i) for i in other], TOKENS - 1, ids[3], ids[4],
                         tokens[3], tokens[4])


def _smollm2(root: Path):
    """("smollm2", the real model) where its package is installed, else (NAME, the random one of its shape)."""
    from model import api, gguf

    if gguf.smollm2_file() is not None:
        return "smollm2", api.load("smollm2", device="cpu", context=512)
    return NAME, api.load_pretrained(build(root), NAME, device="cpu")


def _median(fn, repeats: int) -> float:
    fn()  # warm-up
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return round(statistics.median(seconds), 3)


def timings(root: Path, repeats: int = 3) -> dict[str, dict]:
    import torch

    from model import api
    from experiments import patching

    torch.set_num_threads(1)
    results = {}
    for name, loaded in (("lm", api.load("lm", device="cpu")), _smollm2(root)):
        pair = _pair(loaded)
        runs = patching.record(loaded, pair)
        preview = lambda: patching.preview(loaded, pair, patching.record(loaded, pair))  # noqa: E731
        residual = lambda: patching.exact(loaded, pair, "residual", runs)  # noqa: E731
        every = lambda: [patching.exact(loaded, pair, site, runs) for site in patching.SITES]  # noqa: E731
        results[name] = dict(layers=runs.n_layers, heads=runs.n_heads, tokens=TOKENS, repeats=repeats,
                             preview_s=_median(preview, repeats), residual_s=_median(residual, repeats),
                             every_site_s=_median(every, 1 if name != "lm" else repeats))
    return results


def section(results: dict) -> list[str]:
    """The report's lines (bench/report.py), or none when they were not measured."""
    figures = results.get("patching")
    if not figures:
        return []
    lines = ["", "## Causal tracing, a 12-token pair", "",
             "`bench/patching.py`, one thread: the preview (both runs recorded and one backward pass), the exact "
             "residual-stream grid (one patched pass per cell, restarted at the patched layer; a causal model's on "
             "the positions from the patch on only, experiments/patch_suffixes.py) and the exact grids of all four sites "
             "(residual, attention, feed-forward, heads). Targets (issue 42): lm's exact grid ≤ 2 s; SmolLM2's "
             "residual grid ≤ 15 s and its preview ≤ 1.5 s (smollm2 itself where its package is installed, else "
             f"{NAME}, a random model of its shape).", "",
             "| model | layers × heads | preview | exact residual grid | all four exact grids |", "|---|---|---|---|---|"]
    for name, f in figures.items():
        lines.append(f"| {name} | {f['layers']} × {f['heads']} | {f['preview_s'] * 1000:,.0f} ms | "
                     f"{f['residual_s']:.2f} s | {f['every_site_s']:.2f} s |")
    return lines


if __name__ == "__main__":
    print(json.dumps(timings(Path(sys.argv[1] if len(sys.argv) > 1 else "runs/bench-models")), indent=2))
