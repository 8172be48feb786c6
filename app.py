"""Attention, made visible: type a sentence and see every head of a small trained transformer.

Run `python app.py` (honours GRADIO_SERVER_NAME / GRADIO_SERVER_PORT; ATTENTION_ASSETS points
at another folder of trained models; ATTENTION_MODELS, or `--models`, lists extra Hugging Face model
folders, see the README; ATTENTION_LESSONS, or `--lessons`, a folder of lessons). Models load once at start; the GPU
is used when present.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # no network: no telemetry
# One CPU thread per request: a server answers many small requests at once, and torch's threads
# would only spin waiting for each other (about a third of a request's CPU time on 2 cores).
# Set before torch is imported (by model.registry); a GPU is used all the same.
os.environ.setdefault("OMP_NUM_THREADS", "1")
from ui.runtime import env  # noqa: E402 (imports no Gradio)

env.apply()  # before Gradio is imported: undocumented settings of its queue (ui/runtime/env.py)
from ui.runtime.memory import limit_allocator, trim_regularly  # noqa: E402 (imports no Gradio, no torch)

limit_allocator()  # freed trace arrays go back to the system (ui/runtime/memory.py): before any thread starts

import gradio as gr  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from ui.page import accessibility
from ui.tabs import positions  # noqa: E402 (its CSS: the rotary part first on a rotary model)
from ui.lessons import player as lesson_player  # noqa: E402
import ui.tabs  # noqa: E402 (ui.tabs.TABS: the one list of tabs, read when the page is built)
from ui.page.controls import CSS, build_controls, wire_page  # noqa: E402
from ui.page.lecture_examples import default_settings  # noqa: E402
from ui.page.tabspec import tab_ids  # noqa: E402
from ui.lessons.library import LESSONS_ENV, LessonLibrary  # noqa: E402
from classroom.store import ClassStore  # noqa: E402
from ui.classroom import script as class_script  # noqa: E402
from ui.classroom.page import ClassPanel  # noqa: E402
from ui.classroom.route import follow_routes  # noqa: E402
from ui.classroom.service import Classes  # noqa: E402
from model.registry import ModelRegistry  # noqa: E402
from ui.page.labels import model_notes
from ui.runtime import wire  # noqa: E402
from ui.runtime.aria import ARIA_FIXES_JS  # noqa: E402
from ui.runtime.address import RECONNECT_JS  # noqa: E402
from ui.runtime.assets import CompressedAssets  # noqa: E402
from ui.runtime.draw_once import DRAW_ONCE_JS  # noqa: E402
from ui.runtime.hundredths import HUNDREDTHS_JS  # noqa: E402
from ui.runtime.sessions import keep_no_output_values  # noqa: E402
from ui.runtime.streams import CompressedStreams  # noqa: E402
from ui.runtime.tile_click import TILE_CLICK_JS  # noqa: E402
from ui.runtime.titles import TITLE_FIT_JS  # noqa: E402
from ui.page.phone import PHONE_CSS, PHONE_FIT_JS, PHONE_SETTINGS_JS, PHONE_SWAP_JS  # noqa: E402
from ui.page.slides import SLIDES_JS, page_script  # noqa: E402

keep_no_output_values()  # a session keeps no copy of every figure sent to it (ui/runtime/sessions.py)

DESCRIPTION = """# Attention, made visible
Type a sentence and pick a model. Each **head** decides, for every token (a row), how much to look at
every other token (a column); darker means more. Start with one head, then compare every head at once.
<span class="intro-models">*lm* predicts the next word · *mlm* fills in `<mask>` · *dates* writes a date as ISO 8601 ·
*minilm* is a real pretrained BERT (all-MiniLM-L6-v2) · *smollm2* is a real language model (SmolLM2-135M-Instruct) ·
*classifier* names a definition's category.</span>
"""  # on a phone the models' list gives its room to the first figure (ui/page/phone.py's CSS)
# Gradio's default orange and its light grey "subdued" text fail WCAG AA contrast (white on orange-500 is 2.8:1,
# grey-400 on white 1.9:1): buttons, the open tab and checked boxes use orange-700 (white on it 5.2:1, it on
# white 5.2:1) and quiet text grey-600 (7.6:1). tests/e2e/test_e2e_accessibility.py runs axe-core on every tab.
THEME = gr.themes.Default(font=["ui-sans-serif", "system-ui", "sans-serif"],
                          font_mono=["ui-monospace", "SFMono-Regular", "monospace"]).set(
    button_primary_background_fill="*primary_700", button_primary_background_fill_hover="*primary_800",
    button_primary_background_fill_dark="*primary_700", button_primary_background_fill_hover_dark="*primary_800",
    color_accent="*primary_700", body_text_color_subdued="*neutral_600", input_placeholder_color="*neutral_600")


def tab_specs() -> list:
    """Every tab's TabSpec, in the page's order (ui.tabs.TABS)."""
    return [module.TAB for module in ui.tabs.TABS]


def build_demo(assets: str | Path | None = None, registry: ModelRegistry | None = None,
               classes: str | Path | None = None) -> gr.Blocks:
    """The whole page. `assets` (or $ATTENTION_ASSETS) picks the folder of trained models, `classes` (or
    $ATTENTION_CLASSES) the SQLite file the classes live in (docs/classes.md)."""
    registry = registry or ModelRegistry.load(assets)
    with wire.Blocks(title="Attention, made visible", analytics_enabled=False) as demo:
        gr.Markdown(DESCRIPTION, elem_id="intro")
        player = lesson_player.Player(LessonLibrary.load(registry, default_settings(registry)))
        classroom = ClassPanel(Classes(ClassStore(classes), player.library))
        ctx, examples = build_controls(demo, registry, player, classroom)
        classroom.panels()  # above the tabs: the projector's code and count, a student's question
        player.panel()  # the step's text right under the header (ui/lessons/player.py)
        # the tabs: on a narrow screen they wrap onto rows (Gradio's default folds most into a "⋯" menu)
        with gr.Tabs(overflow_behavior="wrap") as tabs:
            ctx.tabs = tabs
            for module in ui.tabs.TABS:
                module.build(ctx)
        player.only_tabs(tab_ids(tabs))
        player.errors_panel()
        classroom.join_form()
        # which weights were loaded (smollm2's 4-bit build, or the original): below the views, which it would push
        # down, and hidden in presenter mode with the page's title (ui/page/controls.py's CSS)
        if notes := model_notes(registry):
            with gr.Accordion("Which weights the pretrained models were read from", open=False, elem_id="model-notes"):
                gr.Markdown(notes)
        wire_page(ctx, examples, player, classroom)
        classroom.api(ctx)

        def ping() -> str:
            """Does nothing; for measuring the round trip."""
            return "ok"

        gr.api(ping, api_name="ping", concurrency_limit=None, queue=False)
    demo.registry = registry  # handy in notebooks and tests
    demo.classroom, demo.classes = classroom, classroom.classes  # the follow route's (launch_options), the bench's
    return demo


def launch_options(demo: gr.Blocks | None = None) -> dict:
    """Theme, CSS and page scripts (Gradio 6 takes them in launch(); ui/page/accessibility.py names the figures for
    screen readers); the page's script files compressed once for every visitor (ui/runtime/assets.py); results
    compressed (ui/runtime/streams.py); no /monitoring pages (Gradio's summary of every visitor's requests,
    open to anyone by default); host and port come from GRADIO_SERVER_*. demo: the page whose class followers
    wait on the plain route /class/wait (ui/classroom/route.py)."""
    routes = follow_routes(demo.classes) if demo is not None and hasattr(demo, "classes") else []
    return dict(theme=THEME, css=CSS + accessibility.CSS + lesson_player.CSS + class_script.CSS
                + positions.ROTARY_FIRST + PHONE_CSS,
                js=page_script(TITLE_FIT_JS, PHONE_FIT_JS, DRAW_ONCE_JS, SLIDES_JS, HUNDREDTHS_JS, PHONE_SWAP_JS, ARIA_FIXES_JS, TILE_CLICK_JS,
                               accessibility.PAGE_JS, PHONE_SETTINGS_JS, lesson_player.KEYS_JS, class_script.FOLLOW_JS,
                               RECONNECT_JS, lesson_player.PLACE_JS),
                footer_links=["api"], enable_monitoring=False,
                app_kwargs={"middleware": [Middleware(CompressedAssets), Middleware(CompressedStreams)],
                            "routes": routes})


# The request queue: CONCURRENCY handlers run at once; a full lecture hall (300-500 at once, each with a
# click or two in flight) waits its turn, and past QUEUE_SIZE waiting requests people are told "busy" at once
# instead of hanging. A waiting request holds its inputs only (a text of at most MAX_CHARS): 1,024 of them are a
# few MB (docs/memory.md).
CONCURRENCY = 4
QUEUE_SIZE = 1024
# How often each waiting visitor is told their place in the queue, in seconds. Gradio's default ("auto") tells every
# waiting visitor again each time a request starts: 300 at once made ~45,000 such messages, each a trip through
# the event stream's loop and the middlewares, most of the server's work for a class of 300 (docs/benchmarks.md,
# a class of 300). Once a second, the page's "queue: 12/300" still counts down.
STATUS_EVERY_S = 1


def queue_options() -> dict:
    """What main() passes to Blocks.queue() (the benches start the app with the same)."""
    return dict(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE, status_update_rate=STATUS_EVERY_S)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Serve the demo on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT.")
    parser.add_argument("--models", metavar="LIST", help="extra Hugging Face model folders (or Hub ids) to offer, "
                        "comma-separated, each name=folder or folder; the same as $ATTENTION_MODELS, which it replaces")
    parser.add_argument("--lessons", metavar="FOLDER", help="a folder of your own lessons (.md) to add to the picker; "
                        "the same as $ATTENTION_LESSONS, which it replaces")
    args = parser.parse_args(argv)
    if args.lessons is not None:
        os.environ[LESSONS_ENV] = args.lessons  # read by ui.lessons.library.LessonLibrary.load
    if args.models is not None:
        os.environ["ATTENTION_MODELS"] = args.models  # read by model.registry.ModelRegistry.load (model.pretrained)
    trim_regularly()  # the arenas' free pages go back every 10 s (ui/runtime/memory.py)
    demo = build_demo()
    demo.queue(**queue_options()).launch(**launch_options(demo))


if __name__ == "__main__":
    main()
