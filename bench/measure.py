"""Latency through gradio_client and response size over raw HTTP, against a running app."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import httpx


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; values need not be sorted."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary(seconds: list[float]) -> dict:
    return dict(n=len(seconds), p50_s=round(percentile(seconds, 50), 4), p95_s=round(percentile(seconds, 95), 4),
                mean_s=round(statistics.fmean(seconds), 4), max_s=round(max(seconds), 4))


def timed_calls(client, api_name: str, argument_lists: list[list]) -> list[float]:
    """Wall time of client.predict for each argument list, one after another."""
    seconds = []
    for args in argument_lists:
        start = time.perf_counter()
        client.predict(*args, api_name=api_name)
        seconds.append(time.perf_counter() - start)
    return seconds


def response_size(base_url: str, api: str, data: list) -> dict:
    """Bytes the app sends back for one call: POST /gradio_api/call/<api>, then the SSE stream of
    GET /gradio_api/call/<api>/<event_id>. `body_bytes` is the stream as received (what a browser
    or client parses); `wire_bytes` is what crossed the socket (less if the server compressed it)."""
    with httpx.Client(base_url=base_url, timeout=300) as http:
        start = time.perf_counter()
        posted = http.post(f"gradio_api/call/{api}", json={"data": data})
        posted.raise_for_status()
        with http.stream("GET", f"gradio_api/call/{api}/{posted.json()['event_id']}") as stream:
            body = stream.read()
            wire = stream.num_bytes_downloaded
        seconds = time.perf_counter() - start
    text = body.decode("utf-8", errors="replace")
    assert "event: complete" in text, f"{api} did not complete: {text[:300]}"
    return dict(body_bytes=len(body), wire_bytes=wire, seconds=round(seconds, 4))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no VmRSS for process {pid}")
