"""python -m bench.gpu [--quick] [--out FILE]: the figures of issue 39 a lent GPU can give, in one process.

The device tool's work tree is at most 64 MiB, and Gradio's wheels (44 MB) do not fit beside this project's
37 MB, so nothing here starts the app: everything is timed in this process, on the model's device (CUDA when
there is one; ATTENTION_DEVICE picks another), with the code the server runs (model.api, analysis, viz):

- the plain forward pass (nothing recorded), the trace every view reads (copied to the host), and the views'
  work after it (the every-head grid, the layer averages and the head statistics, each written as JSON);
  and what the app does on a GPU instead (issue 39, item 1): the trace kept on the device and the same views
  computed there (experiments/view_numbers.py), only what they draw and the head open in detail copied to the host;
  12 x 12-head checkpoints of GPT-2's size at 512 tokens and of SmolLM2's Llama shape at 512 and 2,048;
- GPU memory over 200 distinct long requests whose traces are kept on the device in the app's byte-bounded
  cache (model.registry.ModelRegistry.device_cache);
- the model and analysis tests on the device (ATTENTION_DEVICE), when --tests is given.

Needs transformers (to build the random checkpoints: bench/checkpoints.py, bench/llama_family.py), plotly and
orjson (viz). Prints one JSON object and writes it to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from analysis.head_stats import head_columns
from bench import llama_family
from bench.checkpoints import gpt2
from bench.sentences import sentence
from model import api
from model.cache import ByteLRU
from model.device import default_device, default_max_tokens
from model.trace import for_views
from experiments.view_numbers import DeviceViews
from viz import heatmap, tiles

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "runs" / "bench-models"


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def _median(fn, repeats: int, device) -> float:
    fn()  # warm up: the first call pays for allocations and kernels' set-up
    seconds = []
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        seconds.append(time.perf_counter() - start)
    return round(statistics.median(seconds), 4)


def views(trace) -> None:
    """What /analyze computes after the trace, as the server writes it (ui.tabs.attention.analyze, without Gradio)."""
    att = trace.attention["self"]
    tiles.all_heads_grid(att.probs, att.queries, att.keys, mask=att.mask).to_json()
    tiles.layer_average_grid(att.probs, mask=att.mask).to_json()
    head_columns(att.probs, att.mask, aligned=True, ids=trace.ids)


def device_views(trace) -> None:
    """The same views from a trace kept on the device (ui.tabs.attention.analyze through ModelRegistry.views on a GPU),
    with the one-head detail view's weights."""
    views, att = DeviceViews(trace), trace.attention["self"]
    tiles.all_heads_overview(views.heads(att), att.queries, att.keys).to_json()
    tiles.layer_average_overview(views.averages(att)).to_json()
    views.numbers(att, aligned=True, ids=trace.ids)
    heatmap.attention_heatmap(views.head(att, 0, 0), att.queries, att.keys, mask=att.mask).to_json()


def kept_trace(model, text: str):
    """The trace as the app keeps it on a GPU: every array a tensor on the device."""
    return for_views(model.trace(text, predictions=False, scores=False, on_device=True))


def timings(model, tokens: int, repeats: int) -> dict:
    device = model.device
    texts = [sentence(model, tokens, seed=70_000 + i) for i in range(repeats + 1)]
    ids = [torch.tensor([model.encode(t).ids], device=device) for t in texts]
    it = iter(range(10 ** 6))

    def forward():
        with torch.inference_mode():
            model.model.features(ids[next(it) % len(ids)])

    def trace():
        return for_views(model.trace(texts[next(it) % len(texts)], predictions=False, scores=False))

    def kept():
        return kept_trace(model, texts[next(it) % len(texts)])

    host, on_device = trace(), kept()
    out = dict(tokens=tokens, forward_s=_median(forward, repeats, device), trace_s=_median(trace, repeats, device),
               views_s=_median(lambda: views(host), repeats, device),
               kept_trace_s=_median(kept, repeats, device),
               device_views_s=_median(lambda: device_views(on_device), repeats, device))
    out["trace_and_views_over_forward"] = round((out["trace_s"] + out["views_s"]) / out["forward_s"], 2)
    out["kept_and_device_views_over_forward"] = round((out["kept_trace_s"] + out["device_views_s"]) / out["forward_s"], 2)
    return out


def memory(model, requests: int, tokens: int, cache_bytes: int = 1 << 30) -> dict:
    """GPU memory (allocated, and the most ever allocated) after every 50 of `requests` distinct traces kept on
    the device in a ByteLRU of `cache_bytes`, as model.registry.ModelRegistry.device_cache keeps them on a GPU, each
    read by the every-head views there."""
    device = model.device
    cache = ByteLRU(cache_bytes)
    points = []
    for i in range(requests):
        text = sentence(model, tokens, seed=80_000 + i)
        device_views(cache.get(text, lambda: kept_trace(model, text)))
        if device.type == "cuda" and ((i + 1) % 50 == 0 or i + 1 == requests):
            points.append((i + 1, round(torch.cuda.memory_allocated() / 2 ** 20, 1),
                           round(torch.cuda.max_memory_allocated() / 2 ** 20, 1)))
    return dict(requests=requests, tokens=tokens, cache_mb=cache_bytes >> 20, points_mb=points)


def device_tests(timeout: int) -> dict:
    """The model, experiments and analysis tests on the device (ATTENTION_DEVICE), bounded in time."""
    env = {**os.environ, "ATTENTION_DEVICE": str(default_device()), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "tests/model", "tests/experiments", "tests/analysis", "-q",
                               "-p", "no:cacheprovider", "--deselect", "tests/model/test_pretrained.py"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
        tail = (done.stdout + done.stderr)[-1500:]
        code = done.returncode
    except subprocess.TimeoutExpired as e:
        tail, code = f"stopped after {timeout} s: {str(e.stdout or '')[-800:]}", None
    return dict(returncode=code, seconds=round(time.perf_counter() - start, 1), tail=tail)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="short inputs and few repeats (a CPU check of the script)")
    parser.add_argument("--tests", type=int, default=0, metavar="SECONDS", help="also run the model and analysis "
                        "tests on the device, stopped after SECONDS")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    device = default_device()
    torch.manual_seed(0)
    long, longest, repeats, requests = (64, 128, 1, 4) if args.quick else (512, 2048, 3, 200)
    result = dict(device=torch.cuda.get_device_name() if device.type == "cuda" else f"CPU ({platform.processor()})",
                  torch=torch.__version__, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  token_cap=default_max_tokens(), torch_threads=torch.get_num_threads())
    start = time.perf_counter()
    gpt = api.load_pretrained(gpt2(MODELS / "gpt2"), "gpt2", device, context=1024)
    llama_folder = llama_family.build(MODELS)["llama-12x12"]
    llama = api.load_pretrained(llama_folder, "llama-12x12", device, context=longest)
    result["built_s"] = round(time.perf_counter() - start, 1)
    result["gpt2"] = timings(gpt, long, repeats)
    result["llama-12x12"] = timings(llama, long, repeats)
    result["llama-12x12-long"] = timings(llama, longest, 1)  # 2.4 GB of weights a trace: one timed run
    result["memory"] = memory(gpt, requests, long)
    if args.tests:
        result["tests"] = device_tests(args.tests)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return result


if __name__ == "__main__":
    main()
