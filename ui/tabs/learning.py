"""Tab "Learning": one head's attention at each saved training snapshot, with the loss."""
from __future__ import annotations

import gradio as gr
import numpy as np

from model.cache import ByteLRU
from model.trace import for_views
from ui.page.tabspec import TabSpec
from ui.page import components
from ui.page.context import PRESENTER_FIRST, Context, figure_font, screen_height
from ui.page.links import Linked
from ui.page.outputs import UNCHANGED, Change
from model.registry import ModelRegistry
from ui.page.messages import clean_text
from viz import learning as viz_learning
from viz.heatmap import attention_heatmap

TAB = TabSpec(id="learning", label="Learning")

EXPLANATION = """
**Attention is learned.** At the start of training the query and key projections are random, so every
head spreads its weight almost evenly. As the loss falls, heads find jobs, such as looking at the
previous token or at the start of the sentence. The slider moves through the weights saved during
training; the same sentence, layer and head are shown at each step. The text models read short windows
first (16 tokens, then 32, 64, 128 and finally 256): among a few keys a useful neighbour stands out
early, so heads that look by position appear within a few hundred steps.
"""


class SnapshotTraces:
    """Models at their training snapshots, each loaded once, and their traces (kept in the registry's one
    byte-bounded cache). Read-only after loading, so one instance is shared by every user of the app."""

    def __init__(self, registry: ModelRegistry, max_models: int = 64):
        self.registry = registry
        self._models = ByteLRU(registry.cache_bytes, max_models)  # ~5 MB each: a model's few snapshots

    def steps(self, name: str) -> list[int]:
        return sorted(self.registry.get(name).snapshot_files)

    def model(self, name: str, step: int):
        return self._models.get((name, int(step)), lambda: self.registry.get(name).at_snapshot(int(step)))

    def trace(self, name: str, step: int, text: str, output: str | None = None):
        """The snapshot's trace; `output` fixes the decoder's side (teacher forcing) so every
        snapshot of the dates model is shown writing the same characters."""
        return self.registry.cached(("snapshot", name, int(step), text, output),
                                    lambda: for_views(self.model(name, step).trace(text, output)))


def view(registry: ModelRegistry, snapshots: SnapshotTraces, text, model, layer, head, kind, snapshot, presenter):
    """The chosen head at snapshot number `snapshot` (1-based), the loss curve, and every snapshot in a row."""
    font = figure_font(presenter)
    text = clean_text(text, registry.max_chars(model))
    final, layer0, head0 = registry.layer_head(model, text, layer, head, kind)
    steps = snapshots.steps(model)
    if not steps:
        # said in the tab itself, in place of the figures (a refusal would leave the last model's figures
        # under it, to be read as this model's)
        if registry.get(model).pretrained:
            why = (f"Learning does not apply to {model}: it is a pretrained model, and its publishers kept no "
                   "snapshots from its training.")
        else:
            why = (f"The {model} model ships without training snapshots, to keep the app small (retrain it to "
                   f"keep them: python -m training.train {model}).")
        # said once, in words: no figure is drawn (three empty ones repeated the message); the slider stays where it
        # was: back on lm, the view opens at the snapshot it showed, not at the first
        return f"**{why}** Choose lm, mlm or dates to watch a head learn.", None, None, None, UNCHANGED
    index = min(max(int(snapshot or len(steps)), 1), len(steps)) - 1  # the count differs between models
    step = steps[index]
    output = None
    trace = registry.trace(model, text)
    if trace.target_ids is not None:  # encoder-decoder: every snapshot writes the trained model's output
        output = registry.get(model).tokenizer.decode([int(i) for i in trace.target_ids[1:]])
    maps = []
    for s in steps:
        att = snapshots.trace(model, s, text, output).attention[final.kind]
        maps.append(att.probs[layer0, head0])
    current = maps[index]
    history = registry.history(model)
    loss = history.loss_at(step)
    loss_text = f"train loss {loss[0]:.3f}, validation loss {loss[1]:.3f}" if loss else "loss not logged at this step"
    window = history.window_at(step)
    if loss and window:
        loss_text += f" (over windows of {window} tokens: the text models train on short windows first, then longer ones)"
    summary = f"**Snapshot {index + 1} of {len(steps)}: training step {step}** — {loss_text}."
    mask = final.mask if final.causal else None
    heat = attention_heatmap(current, final.queries, final.keys, mask=mask, font_size=font,
                             max_height=screen_height(presenter),
                             title=f"Layer {layer0 + 1}, head {head0 + 1} after {step} training steps")
    curve = viz_learning.loss_figure(history.steps, history.train_loss, history.val_loss, current=step, font_size=font)
    strip = viz_learning.snapshots_strip(np.stack(maps), steps, mask=mask, font_size=font)
    slider = Change(minimum=1, maximum=max(len(steps), 2), value=index + 1)
    return summary, heat, curve, strip, slider


SNAPSHOT = Linked("snapshot", default=0, low=0, high=10_000)  # from 1; 0 (the default) is the trained model
# the snapshot named by its training step (?training_step=98): what a link writes; `snapshot` still opens old links
TRAINING_STEP = Linked("training_step", default=0, low=0, high=10_000_000)


def snapshot_index(steps: list[int], settings) -> int:
    """The snapshot (from 1) a link's settings name: its training step when given (the nearest saved one at or
    before it), else its number; past the end or 0, the last (the trained model)."""
    if settings.training_step and steps:
        return max(sum(1 for s in steps if s <= settings.training_step), 1)
    return settings.snapshot if 0 < settings.snapshot <= len(steps) else len(steps)


def build(ctx: Context) -> None:
    snapshots = SnapshotTraces(ctx.registry)
    default = ctx.registry.default
    count = max(1, len(snapshots.steps(default))) if default else 1
    with ctx.tab(TAB):
        gr.Markdown(EXPLANATION, elem_classes=["tab-intro"])  # hidden in presenter mode (the lecturer speaks it)
        snapshot = components.Slider(1, max(count, 2), value=count, step=1, label="training snapshot",
                                     info="1 = earliest saved weights; the last one is the trained model",
                                     elem_id="snapshot")

        def saved(name) -> int:
            return len(ctx.registry.get(name).snapshot_files) if name in ctx.registry.available else 0

        def shown(settings):  # the slider's range follows the link's model; 0 (or past the end) is the last
            count = saved(settings.model)
            steps = snapshots.steps(settings.model) if count else []
            return Change(minimum=1, maximum=max(count, 2), value=max(snapshot_index(steps, settings), 1))

        def read(sent, settings):  # the last snapshot is the trained model: the link leaves it out
            number = TRAINING_STEP.from_page(sent)
            steps = snapshots.steps(settings.model) if saved(settings.model) else []
            return steps[number - 1] if 0 < number < len(steps) else 0

        # one slider, two settings: a link writes the training step; an old link's snapshot number still opens
        ctx.link(SNAPSHOT, snapshot, shown=shown, read=lambda sent, settings: 0)
        ctx.link(TRAINING_STEP, snapshot, shown=shown, read=read)
        summary = gr.Markdown(elem_id="learning-summary")
        heat = components.Plot(show_label=False, label="attention at this snapshot", elem_id="learning-heat",
                               elem_classes=[PRESENTER_FIRST])  # in presenter mode above the slider and the summary
        curve = components.Plot(show_label=False, label="loss curve")
        strip = components.Plot(show_label=False, label="every snapshot")

    def drawn(result):  # a figure the model has none of (a pretrained model: no snapshots) is hidden, not blank
        summary, *figures = result
        return (summary, *(Change(visible=fig is not None, value=fig) for fig in figures))

    def on_view(text, model, layer, head, kind, snapshot_value, presenter):
        summary, heat, curve, strip, slider = view(ctx.registry, snapshots, text, model, layer, head, kind,
                                                   snapshot_value, presenter)
        return (*drawn([summary, heat, curve, strip]), slider)

    inputs = [ctx.text, ctx.model, ctx.layer, ctx.head, ctx.kind, snapshot, ctx.presenter]
    ctx.listen(on_view, inputs=inputs, outputs=[summary, heat, curve, strip, snapshot], api_name="learning",
               triggers=ctx.head_triggers)

    def on_snapshot(*values):
        return drawn(view(ctx.registry, snapshots, *values)[:-1])

    # .input fires on every way of moving the slider (dragging, arrow keys, typing in its box). This run
    # leaves the slider alone: a late answer must not pull it back while the viewer is still moving it.
    ctx.on([snapshot.input], on_snapshot, inputs=inputs, outputs=[summary, heat, curve, strip],
           api_name="learning_snapshot", trigger_mode="always_last")
