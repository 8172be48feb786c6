"""ZeroGPU: spaces.GPU is applied once per handler, when the app is built, never around a request.

With the real `spaces` package (a dev requirement): off ZeroGPU its GPU decorator hands the handler back
unchanged, so the app runs as it does anywhere; a recording stand-in for the decorator, delegating to it,
shows which handlers it is applied to, and when.
"""
from __future__ import annotations

import asyncio

import spaces
from gradio.state_holder import SessionState

import app
from ui.page import gpu


def call(demo, api_name: str, **given):
    """One call of /<api_name> through Gradio's own pipeline, the values given by parameter name."""
    info = demo.get_api_info()["named_endpoints"][f"/{api_name}"]
    values = [given.get(p["parameter_name"], p.get("parameter_default")) for p in info["parameters"]]
    index = next(i for i, fn in demo.fns.items() if fn.api_name == api_name)
    return asyncio.run(demo.process_api(index, values, state=SessionState(demo)))["data"]


def test_off_zerogpu_the_decorator_hands_the_handler_back_and_no_call_needs_a_worker_thread():
    def handler(text):
        return text

    assert spaces.GPU(handler) is handler and not gpu.LENT_GPU
    assert gpu.on_gpu(handler) is handler


def test_each_handler_is_lent_a_gpu_once_when_built_and_never_per_request(registry, monkeypatch):
    real, lent = spaces.GPU, []

    def recording(task=None, **kwargs):
        lent.append(task)
        return real(task, **kwargs)

    monkeypatch.setattr(spaces, "GPU", recording)
    demo = app.build_demo(registry=registry)  # its own build: the recording decorator must see the app built
    built = list(lent)
    names = [getattr(fn, "__name__", "") for fn in built]
    # the views (ctx.listen), the API-only endpoints (ctx.api) and the example picker, each once
    assert {"run_analyze", "translate", "api_ablate", "on_example"} <= set(names), names
    assert len({id(fn) for fn in built}) == len(built), "a handler was lent a GPU twice"

    assert call(demo, "analyze", text="The cat sat on the mat", name="lm", layer=1, head=1)[-1] == "L1 H1"
    assert call(demo, "translate", text="3 March 1999", beam=1) == ["1999-03-03"]
    assert call(demo, "head", text="The cat sat", name="lm", layer=1, head=2)
    assert lent == built, f"requests wrapped handlers again: {[getattr(f, '__name__', f) for f in lent[len(built):]]}"
