"""The upstream behaviour each workaround in ui/runtime/ exists for (ui/runtime/README.md lists them).

Each test asserts Gradio's or Plotly's own behaviour, not ours: when an upgrade changes it, the test fails
and its message names the workaround to delete. The dropdown's double `input` needs a browser:
tests/e2e/test_e2e_runtime_premises.py.
"""
from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
from gradio.state_holder import SessionState

FRONTEND = Path(gr.__file__).parent / "templates" / "frontend" / "assets"


class Recording(gr.Textbox):
    """A textbox that notes the thread its preprocess and postprocess run in."""

    threads: dict = {}

    @classmethod
    def get_block_name(cls) -> str:
        return "textbox"

    def preprocess(self, payload):
        Recording.threads["preprocess"] = threading.current_thread()
        return super().preprocess(payload)

    def postprocess(self, value):
        Recording.threads["postprocess"] = threading.current_thread()
        return super().postprocess(value)


def run_once(demo: gr.Blocks, values: list, fn_index: int = 0, state: SessionState | None = None) -> dict:
    """One call through Gradio's own pipeline (preprocess, the handler, postprocess), as the queue makes it;
    returns its output and the thread the event loop ran in."""
    async def call():
        loop_thread = threading.current_thread()
        out = await demo.process_api(fn_index, values, state=state or SessionState(demo))
        return out, loop_thread
    out, loop_thread = asyncio.run(call())
    return {"data": out["data"], "loop": loop_thread}


def test_gradio_reads_inputs_and_writes_outputs_in_worker_threads():
    """Delete: ui.runtime.wire.received / sent and postprocess=False, preprocess=False in ui.page.context.listen."""
    with gr.Blocks() as demo:
        box, out = Recording(), Recording()
        box.submit(lambda text: text.upper(), inputs=box, outputs=out)
    Recording.threads.clear()
    result = run_once(demo, ["hi"])
    assert result["data"] == ["HI"]
    assert Recording.threads["preprocess"] is not result["loop"], \
        "Gradio now preprocesses inputs on the event loop: delete ui.runtime.wire.received (preprocess=False)"
    assert Recording.threads["postprocess"] is not result["loop"], \
        "Gradio now postprocesses outputs on the event loop: delete ui.runtime.wire.sent (postprocess=False)"


def test_gradio_runs_a_plain_handler_in_a_worker_thread():
    """Delete: ui.runtime.events.on_event_loop (the quick path of ui.page.context.listen)."""
    ran = {}

    def handler(text):
        ran["thread"] = threading.current_thread()
        return text

    with gr.Blocks() as demo:
        box = gr.Textbox()
        box.submit(handler, inputs=box, outputs=box)
    result = run_once(demo, ["x"])
    assert ran["thread"] is not result["loop"], \
        "Gradio now runs sync handlers on the event loop: delete ui.runtime.events.on_event_loop"


def test_gradio_rebuilds_a_component_for_an_output_left_unchanged():
    """Delete: ui.runtime.wire.Blocks.postprocess_data (a skip sent as it is)."""
    with gr.Blocks() as demo:
        button = gr.Button()
        picker = gr.Dropdown(choices=["a", "b"], value="a")
        note = gr.Textbox()
        button.click(lambda: (gr.skip(), "drawn"), outputs=[picker, note])
    state = SessionState(demo)
    result = run_once(demo, [], state=state)
    assert result["data"][1] == "drawn"
    rebuilt = state[picker._id]
    assert isinstance(rebuilt, gr.Dropdown) and rebuilt is not picker, \
        "Gradio no longer rebuilds a component for gr.skip(): delete ui.runtime.wire.Blocks.postprocess_data"


def test_gradio_streams_a_generators_later_yields_as_diffs():
    """Delete: ui.runtime.events.repeat_outputs (the page applies each diff in place to the object it queued)."""
    def stream():
        yield "first", "figure"
        yield "second", gr.skip()

    with gr.Blocks() as demo:
        button, text, figure = gr.Button(), gr.Textbox(), gr.Textbox()
        button.click(stream, outputs=[text, figure])
    state = SessionState(demo)

    async def call():
        first = await demo.process_api(0, [], state=state, session_hash="s", event_id="e")
        second = await demo.process_api(0, [], state=state, session_hash="s", event_id="e",
                                         iterator=first["iterator"])
        return first["data"], second["data"]
    first, second = asyncio.run(call())
    assert first == ["first", "figure"]
    assert isinstance(second[0], list) and second[0] and second[0][0][0] in ("replace", "append"), \
        f"Gradio no longer streams yields as diffs ({second!r}): delete ui.runtime.events.repeat_outputs"


def test_the_dropdown_input_event_is_the_trigger_is_pick_recognises():
    """ui.runtime.repeats.is_pick reads Gradio's event listener: its bound component and event name."""
    with gr.Blocks():
        picker = gr.Dropdown(choices=["a", "b"])
    trigger = picker.input
    assert trigger.__self__ is picker and trigger.event_name == "input", \
        "Gradio's event listeners changed: fix ui.runtime.repeats.is_pick"


def test_gr_plot_draws_a_new_figure_with_react_then_resize():
    """Delete: ui/runtime/draw_once.py (Gradio's Plotly component calls react, then resize, per figure)."""
    bundle = next(FRONTEND.glob("PlotlyPlot-*.js")).read_text(encoding="utf-8")
    drawn = re.search(r"\.react\((\w+),\w+\.data,\w+\.layout,\w+\.config\),\w+(?:\.default)?\.Plots\.resize\(\1\)",
                      bundle)
    assert drawn, "gr.Plot no longer draws with react then resize: delete ui/runtime/draw_once.py"
    # and it hands Plotly the figure's own "config" (ui.page.components.Plot's slide export relies on it)
    assert re.search(r"(\w+)\.config=\1\.config\|\|\{\}", bundle), \
        "gr.Plot no longer hands Plotly a figure's config: ui.page.components.Plot must set it another way"


def test_gr_plot_sends_no_event_for_a_click_on_its_figure():
    """Delete: ui/runtime/tile_click.py (the page script, and its hidden box in ui.tabs.attention) when gr.Plot
    publishes Plotly's clicks itself."""
    events = {getattr(event, "event_name", event) for event in gr.Plot.EVENTS}
    assert events == {"change"} and not hasattr(gr.Plot, "select") and not hasattr(gr.Plot, "click"), (
        f"gr.Plot now has the events {sorted(events)}: open a clicked tile with its click or select event and "
        "delete ui/runtime/tile_click.py")


def test_gradio_compresses_per_request_and_skips_paths_without_an_extension():
    """Delete: ui.runtime.assets.CompressedAssets' page compression (`/`), and its kept copies of /assets/."""
    import httpx

    with gr.Blocks() as demo:
        gr.Markdown("x")
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        page = httpx.get(url, headers={"accept-encoding": "br"})
        assert page.status_code == 200 and len(page.content) > 1000
        assert "content-encoding" not in page.headers, \
            "Gradio now compresses the page: delete CompressedAssets._page (ui/runtime/assets.py)"
        script = next(FRONTEND.glob("index-*.js")).name
        asset = httpx.get(f"{url}assets/{script}", headers={"accept-encoding": "br"})
        assert asset.status_code == 200 and asset.headers.get("content-encoding") == "br", \
            "Gradio no longer compresses its script files at all: CompressedAssets has nothing to keep"
    finally:
        demo.close()


def test_gradio_sends_its_event_streams_uncompressed():
    """Delete: ui.runtime.streams.CompressedStreams (Gradio would compress results itself)."""
    import httpx

    with gr.Blocks() as demo:
        box = gr.Textbox()
        gr.Button().click(lambda: "x" * 5000, outputs=box, api_name="long")
    _, url, _ = demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            event = http.post("gradio_api/call/long", json={"data": []}).json()["event_id"]
            with http.stream("GET", f"gradio_api/call/long/{event}", headers={"accept-encoding": "br, gzip"}) as stream:
                stream.read()
        assert "x" * 5000 in stream.text
        assert "content-encoding" not in stream.headers, \
            "Gradio now compresses event streams: delete CompressedStreams (ui/runtime/streams.py)"
    finally:
        demo.close()


def test_gradio_keeps_every_value_sent_in_its_session():
    """Delete: ui.runtime.sessions (Gradio would no longer keep a copy of every output per session). Read
    from Gradio's source: the app's import has replaced these methods in this process."""
    import gradio.state_holder as holder

    source = Path(holder.__file__).read_text()
    assert "self.config_values = {" in source and "def _update_value_in_config" in source, \
        "Gradio's SessionState changed: check ui/runtime/sessions.py against it (or delete it)"
    assert 'self.config_values[key]["props"]["value"] = value' in source, \
        "Gradio no longer keeps output values per session: delete ui/runtime/sessions.py"
    init = source[source.index("class SessionState"):source.index("def __getitem__", source.index("class SessionState"))]
    kept = set(re.findall(r"self\.(\w+)(?::[^=\n]+)? =", init)) - {"config_values"}
    assert kept == {"blocks_config", "state_data", "_state_ttl", "is_closed", "STATE_TTL_WHEN_CLOSED"}, \
        f"SessionState.__init__ sets {kept}: make ui/runtime/sessions._lean_init set the same"


def test_gradio_writes_a_states_value_through_setitem_and_makes_a_missing_one_anew():
    """Delete: the state budget in ui.runtime.sessions (StateBudget), if Gradio bounds what sessions hold itself;
    fix it if Gradio writes State values elsewhere (they would go uncounted) or fails on a value gone."""
    import gradio.state_holder as holder

    source = Path(holder.__file__).read_text()
    setitem = source[source.index("    def __setitem__(self, key: int, value: Any):"):source.index("    def _update_config")]
    assert "self.state_data[key] = value" in setitem, \
        "Gradio writes State values elsewhere: count them in ui/runtime/sessions.StateBudget there"
    getitem = source[source.index("    def __getitem__(self, key: int) -> Any:"):source.index("    def get(self")]
    assert "if key not in self.state_data:" in getitem and "deepcopy(value)" in getitem, \
        "Gradio no longer makes a missing State value from its initial one: a dropped value (StateBudget) breaks"
    assert "self.capacity = 10000" in source, "Gradio's session capacity changed: docs/memory.md counts 10,000"


def test_gradios_page_reloads_after_a_restart_only_from_a_broken_event():
    """Delete: RECONNECT_JS in ui/runtime/address.py, if Gradio's page reloads itself when its heartbeat comes back
    (then an idle page would reload without it); fix it if the heartbeat route moves. Read from Gradio's page
    scripts and routes: the reload sits in the "Connection Lost" handler, which an event's broken stream starts."""
    import gradio
    import gradio.routes as routes

    assets = Path(gradio.__file__).parent / "templates" / "frontend" / "assets"
    reloads = [f.name for f in assets.glob("Blocks-*.js") if "window.location.reload()" in f.read_text()]
    assert reloads, "Gradio's page no longer reloads itself after a restart: ui/runtime/address.py must reload it"
    blocks = (assets / reloads[0]).read_text()
    lost = blocks.index("title:`Connection Lost`")
    assert blocks.count("window.location.reload()") == 1 and 0 < blocks.index("window.location.reload()") - lost < 400, \
        "Gradio's page reloads from somewhere other than its Connection Lost handler: check RECONNECT_JS against it"
    assert '@router.get("/heartbeat/{session_hash}")' in Path(routes.__file__).read_text(), \
        "Gradio's heartbeat route moved: RECONNECT_JS in ui/runtime/address.py connects to it"


def test_gradios_queue_reads_the_analytics_settings_app_py_changes():
    """Delete: ui/runtime/env.py, if Gradio stops reading these variables or keeps no per-event summary."""
    import gradio.queueing as queueing
    from ui.runtime import env

    source = Path(queueing.__file__).read_text(encoding="utf-8")
    for name in env.SETTINGS:
        assert f'"{name}"' in source, f"Gradio no longer reads {name}: delete it from ui/runtime/env.py"


def test_plotly_checks_every_property_and_adds_its_template_unless_told_not_to():
    """Keep viz.figure.Figure while plotly.py validates on construction and writes its default template
    (6.5 KB a figure); it relies on go.Figure's `_validate=False` and `_data` / `_layout`."""
    checked = go.Figure(data=[{"type": "heatmap", "z": [[1, 2]]}])
    assert "template" in checked.to_plotly_json()["layout"], \
        "plotly.py no longer adds its template: viz.figure's to_json may not need to leave it out"
    unchecked = go.Figure(data=[{"type": "heatmap", "z": [[1, 2]]}], layout={}, _validate=False)
    assert unchecked._data[0]["type"] == "heatmap" and isinstance(unchecked._layout, dict), \
        "plotly.py's unchecked construction changed: fix viz.figure.Figure"


def test_plotly_reads_no_float16_typed_array():
    """Delete: ui/runtime/hundredths.py, and send the grid as float16 (viz.figure.as_hundredths), when the Plotly.js
    that gr.Plot bundles reads float16 typed arrays ("f2")."""
    bundle = next(FRONTEND.glob("PlotlyPlot-*.js")).read_text(encoding="utf-8")
    table = re.search(r"\{u1c:[^}]*\}", bundle)
    assert table and "f4:" in table.group(0), "Plotly.js's typed-array table moved: check ui/runtime/hundredths.py"
    assert "f2:" not in table.group(0), "Plotly.js reads float16 now: ui/runtime/hundredths.py can go"
