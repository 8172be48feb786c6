"""Gradio components that answer bad API input with a clear message, and cheap component values.

Gradio checks a slider's range itself, but a value of the wrong type (a string, a list,
NaN) fails inside its preprocessing and reaches the caller as a bare "the app has raised
an exception". These subclasses say what was wrong instead.
"""
from __future__ import annotations

import json
import math
import re
import weakref

import gradio as gr
from gradio.components.plot import PlotData
import pandas as pd

from model.switches import ABLATION_METHODS
from viz.figure import title_of

from model.registry import ModelRegistry
from ui.page.links import whole_number
from ui.page.messages import InputError, refusal, shortened, shown
from ui.page.outputs import Change


MAX_PICKED = 200  # values one dropdown may be sent at once (a model's every head is at most 144)


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def require_number(payload, name: str, wanted: str) -> None:
    """Refuse a value that is not a finite number: "<name> must be <wanted>, not <the value>"."""
    if not is_number(payload):
        raise refusal(f"{name} must be {wanted}, not {shortened(payload, 40)!r}.")


def number_range(low, high) -> str:
    if low is not None and high is not None:
        return f" between {low:g} and {high:g}"
    return f" of at least {low:g}" if low is not None else (f" of at most {high:g}" if high is not None else "")


class DrawnAsGradio:
    """A subclass of a Gradio component that the page draws exactly as that component (Gradio names the
    browser component after the class)."""

    @classmethod
    def get_block_name(cls) -> str:
        return next(base for base in cls.__mro__ if base.__module__.startswith("gradio.")).__name__.lower()


class Slider(DrawnAsGradio, gr.Slider):
    """gr.Slider whose API value must be a finite number."""

    def preprocess(self, payload):
        if payload is None:  # the browser sends no value for a slider on a tab it has not drawn yet
            return None
        require_number(payload, self.label or "This slider", f"a number{number_range(self.minimum, self.maximum)}")
        return super().preprocess(payload)


class ModelSlider(Slider):
    """A layer, head or decoding-step slider. Its range follows the chosen model or text (the page redraws it),
    and an API call or a link may name any: the handler checks the number against the model and text of the
    same call (model.inputs.check_index), not against the range the slider was first drawn with."""

    def preprocess(self, payload):
        if payload is None:
            return None
        require_number(payload, self.label or "This slider", "a whole number from 1")
        return gr.Number.round_to_precision(payload, self.precision)


class Number(DrawnAsGradio, gr.Number):
    """gr.Number whose API value must be a finite number (a text, a list or NaN: a message, not a crash)."""

    def preprocess(self, payload):
        if payload is None:
            return None
        require_number(payload, self.label or "This number", f"a number{number_range(self.minimum, self.maximum)}")
        return super().preprocess(payload)


class Textbox(DrawnAsGradio, gr.Textbox):
    """gr.Textbox whose API value must be text: Gradio's own reads a number or a list as its str()."""

    def preprocess(self, payload):
        if payload is not None and not isinstance(payload, str):
            raise refusal(f"{self.label or 'The text'} must be a string, not {type(payload).__name__}.")
        return super().preprocess(payload)


def _json_type(values) -> str:
    """The JSON type of a dropdown's choices: Gradio lists every choice as a string, and a script that sent
    the "0" it read there was refused, for the 0 the dropdown holds."""
    if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    return "number" if values and all(is_number(v) for v in values) else "string"


class Dropdown(DrawnAsGradio, gr.Dropdown):
    """gr.Dropdown whose API schema gives its choices' own type (integer for numbered choices)."""

    def api_info(self) -> dict:
        info = super().api_info()
        items = info["items"] if self.multiselect else info
        items["type"] = _json_type(items.get("enum", []))
        return info


class Radio(DrawnAsGradio, gr.Radio):
    """gr.Radio whose API schema gives its choices' own type, as Dropdown."""

    def api_info(self) -> dict:
        info = super().api_info()
        info["type"] = _json_type(info.get("enum", []))
        return info


KINDS = ("self", "encoder", "decoder", "cross")  # model.registry.KINDS_BY_ARCH's, every architecture together


class KindRadio(Radio):
    """The attention-kind radio. An API call may name any of KINDS, as the README says: one the model lacks
    ("self" on the dates model, "cross" on lm) reads as the model's first (model.registry.attention_of). Gradio's own
    check refused "self", which the radio does not list (it shows only the dates model's kinds)."""

    def preprocess(self, payload):
        if payload is not None and payload not in KINDS:
            raise refusal(f"{self.label or 'The attention kind'} must be one of {', '.join(KINDS)}, "
                          f"not {shortened(payload, 40)!r}.")
        return payload


class Checkbox(DrawnAsGradio, gr.Checkbox):
    """gr.Checkbox whose API value must be true or false: Gradio's own took "no" (a non-empty string) as true."""

    def preprocess(self, payload):
        if payload is None:
            return bool(self.value)
        if not isinstance(payload, bool):
            raise refusal(f"{self.label or 'This switch'} must be true or false, not {shortened(payload, 40)!r}.")
        return payload


class ModelChoices(Dropdown):
    """A dropdown whose choices follow the model or the text (heads to knock out, a quiz's tokens): the page
    redraws them, and an API call may name any model's, so the handler checks each value against the model
    and text of the same call. Here only their form is checked: text or whole numbers, at most MAX_PICKED."""

    def api_info(self) -> dict:
        one = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
        return {"type": "array", "items": one} if self.multiselect else one

    def preprocess(self, payload):
        if payload is None:
            return None
        values = payload if isinstance(payload, list) and self.multiselect else [payload]
        ok = (lambda v: isinstance(v, str) and len(v) <= 100 or isinstance(v, int) and not isinstance(v, bool))
        if len(values) > MAX_PICKED or not all(ok(v) for v in values):
            what = f"a list of at most {MAX_PICKED} choices" if self.multiselect else "one choice"
            raise refusal(f"{self.label or 'This dropdown'} takes {what} (text or a number), "
                          f"not {shortened(payload, 40)!r}.")
        return payload


class ClampedSlider(Slider):
    """A Slider that takes a number past its ends as the nearest end, as the browser's slider does when its
    box loses the focus. For sliders redrawn as their box is typed in: typing "30" sends 3 first, and the 3
    must be drawn as the minimum, not refused, or the page drops the 30 that follows the refusal."""

    def preprocess(self, payload):
        if is_number(payload):
            payload = min(max(payload, self.minimum), self.maximum)
        return super().preprocess(payload)


def slide_config(name: str) -> dict:
    """A figure's own Plotly config for slides: the toolbar's camera saves a PNG at twice the drawn size,
    as attention-<name>.png (the SVG button beside it, ui.page.slides, saves under the same name); no logo."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2, "filename": f"attention-{name}"}}


def slug(text: str) -> str:
    """A file-name-safe form of a title: lower case, words joined by '-', markup left out, at most 60 characters."""
    plain = re.sub(r"<[^>]*>", "", str(text)).lower()
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:60].strip("-")


# figures drawn once for many pages (shared_figure): id -> (a weak reference to it, {elem_id: its JSON as sent})
_SHARED_JSON: dict[int, tuple] = {}


def shared_figure(figure) -> None:
    """Mark a figure that many pages are sent unchanged (a class's followers' shared views, ui/classroom/page.py):
    each Plot serialises it once (Plotly's to_json is most of a redraw's cost), and every later page is sent that
    JSON. The figure must not change afterwards; the mark goes with the figure."""
    key = id(figure)
    if key not in _SHARED_JSON:
        _SHARED_JSON[key] = (weakref.ref(figure, lambda _, key=key: _SHARED_JSON.pop(key, None)), {})


class Plot(DrawnAsGradio, gr.Plot):
    """gr.Plot whose Plotly figures carry their own config (slide_config), named after the view: its
    elem_id, else the figure's title. gr.Plot hands a figure's "config" to Plotly as it draws it."""

    def postprocess(self, value):
        shared = _SHARED_JSON.get(id(value)) if value is not None else None
        if shared is not None and shared[0]() is value and self.elem_id in shared[1]:
            return PlotData(type="plotly", plot=shared[1][self.elem_id])
        out = super().postprocess(value)
        if out is None or out.type != "plotly" or not out.plot.startswith("{"):
            return out
        name = self.elem_id or slug(title_of(value)) or "figure"
        out.plot = '{"config":' + json.dumps(slide_config(name)) + "," + out.plot[1:]
        if shared is not None and shared[0]() is value:
            shared[1][self.elem_id] = out.plot
        return out


def table(frame: pd.DataFrame | dict[str, list]) -> dict:
    """A DataFrame, or plain columns (name -> values), as gr.Dataframe's value, {"headers": [...],
    "data": [[...], ...]}, missing values as None. Handing Gradio the DataFrame itself costs ~15 ms of
    server time for a 16-row table (it inspects every cell for styling); this costs ~0.1 ms, and plain
    columns (analysis.head_stats.head_columns) skip pandas altogether."""
    if isinstance(frame, pd.DataFrame):
        headers, rows = [str(c) for c in frame.columns], frame.to_numpy(dtype=object).tolist()
    else:
        headers, rows = [str(c) for c in frame], zip(*frame.values())
    data = [[None if isinstance(v, float) and v != v else v for v in row] for row in rows]  # NaN -> None
    return {"headers": headers, "data": data}


def head_picker(choices: list[str], prefix: str) -> tuple[gr.Dropdown, gr.Radio]:
    """The heads to knock out and how (elem_ids "<prefix>-heads", "<prefix>-method"); Interventions' and
    the Classifier's."""
    with gr.Row(equal_height=False):
        heads = ModelChoices(choices=choices, value=[], multiselect=True, label="Heads to knock out",
                             elem_id=f"{prefix}-heads", scale=3)
        method = gr.Radio(list(ABLATION_METHODS), value="zero", label="How", elem_id=f"{prefix}-method", scale=1)
    return heads, method


class Setting(Slider):
    """A slider (the sampling and generation settings) whose out-of-range API value is refused naming the setting and its range."""

    def preprocess(self, payload):
        if is_number(payload) and not self.minimum <= payload <= self.maximum:
            raise refusal(f"The {self.label} must be between {self.minimum:g} and {self.maximum:g} "
                                     f"(got {shown(payload)}).")
        return super().preprocess(payload)


def whole(value, low: int, high: int, what: str) -> int:
    """A whole number from low to high, else a message naming `what` and the range."""
    if isinstance(value, bool) or not is_number(value) or value != int(value) or not low <= value <= high:
        raise InputError(f"The {what} must be a whole number between {low} and {high} (got {shown(value)}).")
    return int(value)


# The header's layer and head sliders (ModelSlider) and kind radio (KindRadio), fitted to the chosen model
def slider_max(count: int) -> int:
    """Gradio sliders need maximum > minimum; a one-layer model (tiny test models) gets a range of 2,
    and choosing 2 gives a friendly out-of-range message."""
    return max(int(count), 2)


def fit_controls(registry: ModelRegistry, name, layer, head, kind):
    """Slider ranges and the attention kind for the model (keeps the chosen numbers where they fit)."""
    kinds = registry.kinds(name)
    kind = kind if kind in kinds else kinds[0]
    layers, heads = registry.shape(name, kind)
    layer, head = min(max(whole_number(layer), 1), layers), min(max(whole_number(head), 1), heads)
    return (Change(minimum=1, maximum=slider_max(layers), value=layer, step=1),
            Change(minimum=1, maximum=slider_max(heads), value=head, step=1),
            Change(value=kind, visible=True) if len(kinds) > 1 else Change(visible=False))
