"""Run inside .bench-venv (torch + bertviz only; not the app's environment):

    .bench-venv/bin/python bench/bertviz_render.py attention.npz result.json

attention.npz holds `probs` (layers, heads, t, t) float32 and `tokens` (t,) strings, exported
from our lm's trace. Writes the size of bertviz's head_view and model_view HTML and the time
to produce each (html_action='return'), best of `repeats`."""
from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch
from bertviz import head_view, model_view


def render(view, attention, tokens, repeats: int = 3) -> dict:
    best, html = float("inf"), ""
    for _ in range(repeats):
        start = time.perf_counter()
        html = view(attention, tokens, html_action="return").data
        best = min(best, time.perf_counter() - start)
    return dict(bytes=len(html.encode("utf-8")), seconds=round(best, 4))


def main(source: str, target: str) -> None:
    data = np.load(source)
    probs, tokens = data["probs"], [str(t) for t in data["tokens"]]
    # bertviz takes one (batch, heads, t, t) tensor per layer, as transformers returns them
    attention = tuple(torch.from_numpy(probs[layer][None].astype(np.float32)) for layer in range(probs.shape[0]))
    result = dict(tokens=len(tokens), layers=probs.shape[0], heads=probs.shape[1],
                  head_view=render(head_view, attention, tokens), model_view=render(model_view, attention, tokens))
    with open(target, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main(*sys.argv[1:3])
