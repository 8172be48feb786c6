"""app.py's queue: what main() passes to Gradio, as Gradio takes it (docs/benchmarks.md, a class of 300)."""
import gradio as gr

import app


def test_the_queue_tells_waiting_visitors_their_place_periodically_not_at_every_start():
    # Gradio's default ("auto") sends every waiting visitor a new estimate each time any request starts: for a
    # class of 300 at once ~45,000 messages, most of the server's work. A number makes it one round per period.
    options = app.queue_options()
    assert options == dict(default_concurrency_limit=app.CONCURRENCY, max_size=app.QUEUE_SIZE,
                           status_update_rate=app.STATUS_EVERY_S)
    assert isinstance(app.STATUS_EVERY_S, (int, float)) and 0 < app.STATUS_EVERY_S <= 2, \
        "a waiting visitor's place should still count down on the page"
    with gr.Blocks() as demo:
        gr.Button().click(lambda: None)
    demo.queue(**options)
    queue = demo._queue
    assert queue.live_updates is False, "Gradio takes a number as a period: no estimate at each start"
    assert queue.update_intervals == app.STATUS_EVERY_S
    assert queue.max_size == app.QUEUE_SIZE and queue.default_concurrency_limit == app.CONCURRENCY
