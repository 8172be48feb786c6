"""The long-inputs section of docs/benchmarks.md (bench/long_inputs.py's figures)."""
from __future__ import annotations

# the targets a 12 x 12-head model at 512 tokens is held to
ANSWER_MB = 1.5
HEAP_MB = 250
CLICK_RATIO = 3.0
SERVER_S = 1.5
RSS_GROWTH_MB = 2048
FORWARD_RATIO = 1.4  # /analyze for a new sentence against the plain forward pass on the same ids (issue 39)
FLAT_MB = 50  # "flat": what 1,000 more requests may add once the cache is full (allocator noise)


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def _s(x: float) -> str:
    return f"{x:.2f} s"


def _verdict(met: bool, how: str) -> str:
    return f"{'met' if met else '**missed**'}: {how}"


def targets(r: dict) -> list[tuple[str, str]]:
    size, server, browser = r["size"], r["server_time"], r["browser"]
    lm_click = browser["lm"]["detail"]["p50_s"]
    rows = []
    for name in ("bert-base", "gpt2"):
        wire = size[name]["analyze"]["wire_bytes"]
        rows.append((f"{name} (12 × 12): /analyze answer at 512 tokens at most {ANSWER_MB} MB on the wire",
                     _verdict(wire <= ANSWER_MB * 1e6, f"{_mb(wire)} ({_mb(size[name]['analyze']['body_bytes'])} "
                                                       "decoded)")))
        heap = browser[name]["heap_mb_max"]
        rows.append((f"{name}: page JS heap at most {HEAP_MB} MB", _verdict(heap <= HEAP_MB, f"{heap:.0f} MB (largest after "
                                                                                           "a click, garbage collected)")))
        click = browser[name]["grid"]["p50_s"]
        rows.append((f"{name}: click to drawn at most {CLICK_RATIO:g}× lm's at 32 tokens",
                     _verdict(click <= CLICK_RATIO * lm_click, f"{_s(click)} to the every-head grid "
                              f"({_s(browser[name]['detail']['p50_s'])} to the head in detail) vs lm {_s(lm_click)}: "
                              f"{click / lm_click:.1f}×")))
        new, kept = server[name]["new"]["p50_s"], server[name]["kept"]["p50_s"]
        rows.append((f"{name}: /analyze server time at most {SERVER_S:g} s",
                     _verdict(new <= SERVER_S, f"p50 {_s(new)} for a new sentence (its forward pass included); "
                              f"{_s(kept)} with the trace kept (a click: the one-head view computed it)")))
    if "forward_ratio" in r:
        f = r["forward_ratio"]
        cpu = f.get("cpu_ratio")
        rows.append((f"bert-base: /analyze for a new sentence at most {FORWARD_RATIO:g}× the plain forward pass "
                     "(the model on the same ids, nothing recorded)",
                     _verdict((cpu if cpu is not None else f["ratio"]) <= FORWARD_RATIO,
                              (f"server CPU {_s(f['analyze_server_cpu_s'])} (less its idle polling) vs "
                               f"{_s(f['forward_cpu_s'])}: {cpu:.2f}×; " if cpu is not None else "")
                              + f"wall p50 {_s(f['analyze_new']['p50_s'])} vs {_s(f['forward']['p50_s'])}: "
                              f"{f['ratio']:.2f}×")))
    big = r["rss_big"]
    rows.append((f"RSS after {big['requests']} distinct 512-token requests (bert-base) at most start + 2 GB",
                 _verdict(big["growth_mb"] <= RSS_GROWTH_MB, f"{big['start_mb']:.0f} MB → {big['end_mb']:.0f} MB "
                                                             f"(+{big['growth_mb']:.0f} MB)")))
    plain = r["rss_ordinary"]
    rows.append((f"ordinary app: RSS flat over {plain['more_requests']} distinct requests once the cache is full",
                 _verdict(plain["growth_after_full_mb"] <= FLAT_MB,
                          f"{plain['cache_full_mb']:.0f} MB after {plain['fill_requests']} requests (cache full), "
                          f"{plain['end_mb']:.0f} MB after {plain['more_requests']} more "
                          f"({plain['growth_after_full_mb']:+.0f} MB); {plain['start_mb']:.0f} MB at start")))
    return rows


def section(r: dict) -> list[str]:
    m = r.get("machine", {})
    rows = [
        "## Long inputs: 12 × 12-head models at 512 tokens",
        "",
        "`bench/checkpoints.py` builds random-weight checkpoints of BERT-base's and GPT-2's size (12 layers × 12 "
        "heads, d = 768) with transformers' `BertConfig` and `GPT2Config`, minilm's WordPiece tokenizer and the "
        "project's BPE tokenizer (no download; speed and size do not depend on what weights learned). One app "
        "serves them beside lm and minilm (`ATTENTION_MODELS`). "
        f"Measured {m.get('date', '?')}, load average {m.get('load_average_at_start', '?')} at the start: other "
        "work shared this 2-core machine, and every time below is inflated by it.",
        "",
        "| target | result |",
        "|---|---|",
        *[f"| {name} | {verdict} |" for name, verdict in targets(r)],
        "",
        "| model | tokens | /analyze on the wire | decoded | /head on the wire | decoded |",
        "|---|---|---|---|---|---|",
        *[f"| {name} | {s['tokens']} | {_mb(s['analyze']['wire_bytes'])} | {_mb(s['analyze']['body_bytes'])} | "
          f"{_mb(s['head']['wire_bytes'])} | {_mb(s['head']['body_bytes'])} |" for name, s in r["size"].items()],
        "",
        "| model (browser) | tokens | click → head in detail drawn (p50) | click → every-head grid drawn (p50) | "
        "JS heap (largest) |",
        "|---|---|---|---|---|",
        *[f"| {name} | {b['tokens']} | {_s(b['detail']['p50_s'])} | {_s(b['grid']['p50_s'])} | {b['heap_mb_max']:.0f} MB |"
          for name, b in r["browser"].items()],
        "",
        "| model | /analyze p50, new sentence | /analyze p50, trace kept |",
        "|---|---|---|",
        *[f"| {name} | {_s(t['new']['p50_s'])} | {_s(t['kept']['p50_s'])} |" for name, t in r["server_time"].items()],
        "",
        "Memory (RSS of the server process, MB): "
        + ", ".join(f"{n}: {mb:.0f}" for n, mb in r["rss_big"]["points"])
        + f" requests on bert-base at 512 tokens (start {r['rss_big']['start_mb']:.0f}); the ordinary app, lm at "
        "256 tokens: " + ", ".join(f"{n}: {mb:.0f}" for n, mb in r["rss_ordinary"]["points"])
        + f" (start {r['rss_ordinary']['start_mb']:.0f}).",
        "",
    ]
    return rows
