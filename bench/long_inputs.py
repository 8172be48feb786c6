"""Real checkpoints at their full length: random-weight 12 x 12-head BERT and GPT-2 (bench/checkpoints.py)
at 512 tokens, beside lm and minilm, on one running app. What `python -m bench --only long` measures:

- the /analyze answer (and /head's) on the wire and as received, at 512 tokens;
- /analyze server time at 512 tokens, for a new sentence (the forward pass included) and for one whose
  trace is kept (what a click costs after the one-head view has computed it);
- click-to-drawn and the page's JS heap in headless Chromium, against lm at 32 tokens in the same run;
- the server's memory (RSS) after 200 distinct 512-token requests on the 12 x 12-head BERT;
- the ordinary app (shipped models only): RSS once its trace cache is full, and after 1,000 more requests.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from bench import measure
from bench.measure import rss_mb  # noqa: F401 (read here by the long-input runs)
from bench.checkpoints import build
from bench.sentences import sentence
from harness.browser import DETAIL, expected_labels, press_analyze, sentence_box, wait_for_figures, wait_for_ticks
from harness.live_app import ARTIFACTS, CHROMIUM_ARGS, ROOT, Endpoints, live_app, require_chromium

MODELS_DIR = ROOT / "runs" / "bench-models"
LONG = 512
BIG = ("bert-base", "gpt2")
GRID = "#all-heads"


def _analyze_args(endpoints, model: str, text: str) -> list:
    return endpoints.args("/analyze", text=text, name=model, kind=None)


def server_time(client, endpoints, models: dict, n: int) -> dict:
    """/analyze wall time on distinct 512-token sentences (new: the trace computed; kept: the same sentence
    again, its trace kept), p50 over n of each, per model."""
    out = {}
    for name, model in models.items():
        new, kept = [], []
        for s in range(n):
            args = _analyze_args(endpoints, name, sentence(model, LONG, seed=31_000 + s))
            new += measure.timed_calls(client, "/analyze", [args])
            kept += measure.timed_calls(client, "/analyze", [args])
        out[name] = dict(new=measure.summary(new), kept=measure.summary(kept))
    return out


def plain_forward_s(model, text: str) -> tuple[float, float]:
    """(wall, CPU) seconds of the model on the text's ids with nothing recorded (the fused attention, no
    copies): the floor any view of it stands on. In this process, on as many torch threads as the server."""
    import torch

    ids = torch.tensor([model.encode(text).ids], device=model.device)
    with torch.inference_mode():
        start, cpu = time.perf_counter(), time.process_time()
        model.model.features(ids)
        if model.device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - start, time.process_time() - cpu


IDLE_READ_S = 2.0


def forward_ratio(client, endpoints, name: str, model, n: int, pid: int | None = None, seed: int = 41_000) -> dict:
    """/analyze through the server for a new 512-token sentence against the plain forward pass on the same
    ids, taking turns (a forward, then the /analyze), so both see the machine at the same speed (issue 39:
    at most 1.4x on a CPU). Wall time, and with the server's pid CPU time (the server's, less what it uses
    idle in as long, against this process's for the forward): on a machine shared with other work, CPU time
    is what the work itself costs."""
    import torch

    from bench.load import cpu_seconds

    torch.set_num_threads(1)  # app.py: one thread (OMP_NUM_THREADS=1) unless the server was told otherwise
    forward, forward_cpu, analyze, analyze_cpu = [], [], [], []
    plain_forward_s(model, sentence(model, LONG, seed=seed - 1))  # warm up
    for s in range(n):
        text = sentence(model, LONG, seed=seed + s)
        wall, cpu = plain_forward_s(model, text)
        forward.append(wall)
        forward_cpu.append(cpu)
        idle = 0.0
        if pid:  # what the idle server uses a second (Gradio's queue polls every millisecond), read over 2 s
            start = cpu_seconds(pid)
            time.sleep(IDLE_READ_S)
            idle = (cpu_seconds(pid) - start) / IDLE_READ_S
        before = cpu_seconds(pid) if pid else 0.0
        analyze += measure.timed_calls(client, "/analyze", [_analyze_args(endpoints, name, text)])
        # less the polling over the call's wall time: on a loaded machine the call takes longer, not more work
        analyze_cpu.append(cpu_seconds(pid) - before - idle * analyze[-1] if pid else float("nan"))
    median = statistics.median
    return dict(forward=measure.summary(forward), analyze_new=measure.summary(analyze),
                ratio=round(median(analyze) / median(forward), 2),
                forward_cpu_s=round(median(forward_cpu), 3), analyze_server_cpu_s=round(median(analyze_cpu), 3),
                cpu_ratio=round(median(analyze_cpu) / median(forward_cpu), 2) if pid else None)


def sizes(url: str, endpoints, models: dict, lengths: dict) -> dict:
    """Bytes of one /analyze and one /head answer, per model at its length: on the wire (compressed) and
    as received (decoded)."""
    out = {}
    for name, model in models.items():
        n = lengths[name]
        text = sentence(model, n, seed=77)
        out[name] = dict(tokens=n, analyze=measure.response_size(url, "analyze", _analyze_args(endpoints, name, text)),
                         head=measure.response_size(url, "head", endpoints.args("/head", text=text, name=name, layer=1,
                                                                                head=1, kind=None)))
    return out


def _grid_signature(page) -> str:
    return page.evaluate(f"""() => {{ const p = document.querySelector('{GRID} .js-plotly-plot');
        return p && p.data && p.data[0] ? String(p.data[0].x && p.data[0].x.join('|')) + p.data[0].z.length : ''; }}""")


def click_and_heap(url: str, model_name: str, model, lengths: int, clicks: int) -> dict:
    """On one page opened on `model_name`: click Show attention for `clicks` new sentences of `lengths`
    tokens; seconds to the one-head view drawn and to the every-head grid drawn, and the page's JS heap
    after each (garbage collected first, read through the DevTools protocol)."""
    from playwright.sync_api import sync_playwright

    detail_s, grid_s, heap = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=require_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(300_000)
        page.goto(f"{url}?model={model_name}")
        wait_for_figures(page, DETAIL)
        time.sleep(2)
        cdp = page.context.new_cdp_session(page)
        for s in range(clicks):
            text = sentence(model, lengths, seed=41_000 + s)
            sentence_box(page).fill(text)
            time.sleep(0.3)
            before = _grid_signature(page)
            start = time.perf_counter()
            press_analyze(page)
            wait_for_ticks(page, expected_labels(text, model), timeout=300_000)
            detail_s.append(time.perf_counter() - start)
            page.wait_for_function(f"""(before) => {{ const p = document.querySelector('{GRID} .js-plotly-plot');
                return p && p.data && p.data[0] && (String(p.data[0].x && p.data[0].x.join('|')) + p.data[0].z.length) !== before
                    && p.querySelector('.heatmaplayer image'); }}""", arg=before, timeout=300_000, polling=50)
            grid_s.append(time.perf_counter() - start)
            time.sleep(1)
            cdp.send("HeapProfiler.collectGarbage")
            heap.append(round(cdp.send("Runtime.getHeapUsage")["usedSize"] / 2 ** 20, 1))
        browser.close()
    return dict(tokens=lengths, detail=measure.summary(detail_s), grid=measure.summary(grid_s),
                heap_mb_max=max(heap), heap_mb=heap)


def rss_run(client, endpoints, pid: int, name: str, model, n: int, tokens: int, every: int, seed: int = 50_000) -> dict:
    """RSS at start and every `every` of n distinct requests (/analyze, `tokens` tokens each, sentences from
    seed on)."""
    start = rss_mb(pid)
    points = []
    for i in range(n):
        client.predict(*_analyze_args(endpoints, name, sentence(model, tokens, seed=seed + i)), api_name="/analyze")
        if (i + 1) % every == 0 or i + 1 == n:
            points.append((i + 1, rss_mb(pid)))
            print(f"  {name}: {i + 1} requests, RSS {points[-1][1]} MB", file=sys.stderr)
    return dict(model=name, tokens=tokens, requests=n, start_mb=start, points=points, end_mb=points[-1][1],
                growth_mb=round(points[-1][1] - start, 1))


RSS_REQUESTS = 200


def run(quick: bool, rss_requests: int | None = None) -> dict:
    from model import api
    from model.registry import assets_dir

    folders = build(MODELS_DIR)
    models = {"lm": api.load("lm", assets_dir(), device="cpu"), "minilm": api.load("minilm", device="cpu", context=LONG)}
    models.update({name: api.load_pretrained(folders[name], name, "cpu", context=LONG) for name in BIG})
    lengths = {"lm": 256, "minilm": LONG, "bert-base": LONG, "gpt2": LONG}
    results = dict(tokens=LONG, checkpoints={name: dict(layers=m.config.n_layers, heads=m.config.n_heads,
                                                       d_model=m.config.d_model, context=m.config.max_len)
                                             for name, m in models.items()})
    env = {"ATTENTION_MODELS": ", ".join(f"{name}={folders[name]}" for name in BIG)}
    with live_app(ARTIFACTS / "logs" / "bench_long.log", env=env) as app:
        client, pid = app.client(), app.process.pid
        endpoints = Endpoints(client)
        results["rss_at_start_mb"] = rss_mb(pid)
        print("long inputs: sizes ...", file=sys.stderr)
        results["size"] = sizes(app.url, endpoints, models, lengths)
        print("long inputs: server time ...", file=sys.stderr)
        results["server_time"] = server_time(client, endpoints, {k: models[k] for k in ("minilm", *BIG)},
                                             2 if quick else 5)
        print("long inputs: /analyze against the plain forward pass ...", file=sys.stderr)
        results["forward_ratio"] = forward_ratio(client, endpoints, "bert-base", models["bert-base"], 2 if quick else 5,
                                                 pid=pid)
        print("long inputs: click to drawn, JS heap ...", file=sys.stderr)
        clicks = 2 if quick else 4
        results["browser"] = {"lm": click_and_heap(app.url, "lm", models["lm"], 32, clicks)}
        for name in ("minilm", *BIG):
            results["browser"][name] = click_and_heap(app.url, name, models[name], LONG, clicks)
        print("long inputs: memory over distinct 512-token requests ...", file=sys.stderr)
        n = rss_requests or (30 if quick else RSS_REQUESTS)
        results["rss_big"] = rss_run(client, endpoints, pid, "bert-base", models["bert-base"], n, LONG, max(5, n // 8))
        results["rss_big"]["start_mb"] = results["rss_at_start_mb"]
        results["rss_big"]["growth_mb"] = round(results["rss_big"]["end_mb"] - results["rss_at_start_mb"], 1)
    # the ordinary app: shipped models only, lm at 256 tokens (a trace ~6 MB: its 1 GiB cache is full after
    # ~170 requests), then 1,000 more distinct requests
    fill, more = (60, 200) if quick else (250, 1000)
    with live_app(ARTIFACTS / "logs" / "bench_long_ordinary.log",
                  env={"ATTENTION_MODELS": "", **({"ATTENTION_CACHE_MB": "256"} if quick else {})}) as app:
        client, pid = app.client(), app.process.pid
        endpoints = Endpoints(client)
        start = rss_mb(pid)
        filled = rss_run(client, endpoints, pid, "lm", models["lm"], fill, 256, 50)
        after = rss_run(client, endpoints, pid, "lm", models["lm"], more, 256, 100, seed=60_000)
        results["rss_ordinary"] = dict(start_mb=start, cache_full_mb=filled["end_mb"], fill_requests=fill,
                                       more_requests=more, end_mb=after["end_mb"], points=filled["points"] + [
                                           (fill + i, mb) for i, mb in after["points"]],
                                       growth_after_full_mb=round(after["end_mb"] - filled["end_mb"], 1))
    return results
