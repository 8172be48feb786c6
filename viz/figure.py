"""Figures built as plain data: the same Plotly figure, without Plotly's per-property checks.

go.Figure checks every property of every trace and layout key against Plotly's schema, and
gr.Plot then deep-copies the whole figure to serialise it. For a lecture hall of 100 students
that was most of a request's server time. The viz functions write their traces and layouts
as dicts in Plotly's own JSON form (no "magic underscore" shortcuts such as `title_text`, no
Python-only colour-scale names such as "RdBu_r"), so nothing needs checking or converting:
`figure()` wraps them unchecked, and `Figure.to_json` writes them straight out, with numpy
arrays as Plotly's compact typed arrays, and without plotly.py's default template (6.5 KB a figure
of fonts and grid colours Plotly.js has defaults for: what a request costs the server grows with
every kilobyte it sends). The result is still a go.Figure: tests and notebooks
read `fig.data[0].z` and `fig.layout.title.text` as before.

A weight map on the 0..1 scale rounded to 0.01 (the every-head grid) travels as whole hundredths, one
byte a cell instead of float32's four (`figure(..., hundredths={0: ...})`): its trace's z is a uint8 typed
array and its `meta.z_divisor` is 100. Plotly.js reads no float16 and its hover cannot divide, so the page turns
it back into the same float32 numbers before Plotly sees it (ui/runtime/hundredths.py): what is drawn and
the hover's "0.35" are as before, and the 64-token /analyze answer is a third of its size.
"""
from __future__ import annotations

import base64

import numpy as np
import orjson
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from viz.describe import with_alt

# escaped in the JSON: with "<" and ">" escaped a token such as "</script>" stays inert wherever the JSON is
# embedded; U+2028/U+2029 end a line in older JavaScript. plotly.io escapes "/" too, which "<" makes needless:
# every base64 typed array is full of "/", each written as six characters, and replacing them took as long
# as writing the figure.
# "<" and ">" are replaced in orjson's UTF-8 bytes, the line separators in the decoded text: each is searched where
# that is one character (a str holding "≈" or "→" stores two bytes a character, and replacing "<" in it took as long
# as writing the figure; in the bytes, U+2028 is three bytes whose first begins every "→" and "▁", as slow to find).
_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"))
_LINE_ESCAPES = (("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
HUNDREDTHS = 100  # meta.z_divisor of a trace whose z travels as whole hundredths
HUNDREDTHS_GAP = 255  # meta.z_gap: a cell that is no weight (a gap between tiles), drawn as NaN


# Plotly.js's names for the dtypes it reads from base64 (plotly.py's _plotly_utils.utils.plotlyjsShortTypes)
_SHORT_TYPES = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
                "float32": "f4", "float64": "f8"}


def typed_array(array: np.ndarray) -> dict | list:
    """A numpy array as Plotly's typed-array spec ({"dtype", "bdata", "shape"}), exactly as plotly.py's
    to_typed_array_spec writes it, or as a list where Plotly.js has no such type (text, bool, empty,
    64-bit integers too large for 32 bits). plotly.py first hands every array to narwhals to check
    for a DataFrame: a third of the time of writing an every-head figure."""
    if array.size and array.dtype.kind in "iu" and array.dtype.itemsize == 8:  # Plotly.js has no 64-bit ints
        low, high = array.min(), array.max()
        for dtype in (("int8", "int16", "int32") if array.dtype.kind == "i" else ("uint8", "uint16", "uint32")):
            if np.iinfo(dtype).min <= low and high <= np.iinfo(dtype).max:
                array = array.astype(dtype)
                break
    short = _SHORT_TYPES.get(array.dtype.name)
    if short is None or array.size == 0:
        return array.tolist()
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(array)).decode("ascii")}
    if array.ndim > 1:
        spec["shape"] = str(array.shape)[1:-1]
    return spec


def _encode(value):
    """What orjson cannot write itself: a numpy array as Plotly's typed-array spec (base64, a
    quarter of the bytes of a list of numbers), a numpy scalar as a number. orjson walks the dicts
    and lists in C (a copy of them in Python first took half the time of writing a figure)."""
    if isinstance(value, np.ndarray):
        return typed_array(value)
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a figure cannot hold a {type(value).__name__}")


def as_hundredths(trace: dict, hundredths: np.ndarray) -> dict:
    """The trace as it travels: its z, a 0..1 map rounded to 0.01, as the view's whole hundredths (uint8)
    and meta.z_divisor = 100, which the page divides by (ui/runtime/hundredths.py); a cell of HUNDREDTHS_GAP
    (meta.z_gap) is no weight, and the page makes it NaN."""
    meta = trace.get("meta")
    meta = dict(meta) if isinstance(meta, dict) else {}
    return {**trace, "z": hundredths, "meta": {**meta, "z_divisor": HUNDREDTHS, "z_gap": HUNDREDTHS_GAP}}


def to_json_text(data: list, layout: dict, hundredths: dict[int, np.ndarray] | None = None) -> str:
    """A figure's JSON as plotly.io writes it: NaN as null, the characters in _ESCAPES and _LINE_ESCAPES
    escaped; its text alternative in layout.meta.alt (viz.describe), which the page gives screen readers, read
    from the figure's own numbers; a trace numbered in `hundredths` with its z as those whole hundredths."""
    layout = with_alt(layout, data)
    if hundredths:
        data = [as_hundredths(trace, hundredths[i]) if i in hundredths else trace for i, trace in enumerate(data)]
    text = orjson.dumps({"data": data, "layout": layout}, default=_encode, option=orjson.OPT_NON_STR_KEYS)
    for character, escaped in _ESCAPES:
        if character in text:
            text = text.replace(character, escaped)
    text = text.decode()
    for character, escaped in _LINE_ESCAPES:
        if character in text:
            text = text.replace(character, escaped)
    return text


# what may be read without building Plotly's objects: enough for gr.Plot to serialise the figure
_LAZY = frozenset({"__dict__", "__class__", "__module__", "to_json", "_raw", "_plain_parts", "_hundredths"})


class Figure(go.Figure):
    """A go.Figure that keeps its trace and layout dicts as written and builds Plotly's objects (which
    deep-copy and check every property) only when something other than serialising asks for them:
    a test reading `fig.data[0].z`, a view calling `fig.update_xaxes(...)`. gr.Plot only calls
    `to_json`, which writes the dicts straight out."""

    def __init__(self, data: list[dict], layout: dict, hundredths: dict[int, np.ndarray] | None = None):  # noqa: D107
        object.__setattr__(self, "_raw", (data, layout))  # the parent's init runs lazily
        object.__setattr__(self, "_hundredths", hundredths)

    def __getattribute__(self, name):
        if name not in _LAZY:
            state = object.__getattribute__(self, "__dict__")
            if "_raw" in state:
                data, layout = state.pop("_raw")
                go.Figure.__init__(self, data=data, layout=layout, _validate=False)
        return object.__getattribute__(self, name)

    def _plain_parts(self) -> tuple[list, dict]:
        raw = self.__dict__.get("_raw")
        return raw if raw is not None else (self._data, self._layout)

    def to_json(self, *args, **kwargs) -> str:
        return to_json_text(*self._plain_parts(), hundredths=self.__dict__.get("_hundredths"))


def colorscale(name: str) -> list:
    """A named Plotly colour scale as explicit [position, colour] pairs. Unchecked figures are sent as
    written, and Plotly.js's own "Blues" is not the ColorBrewer scale plotly.py means by that name."""
    return get_colorscale(name)


def figure(data: list[dict], layout: dict, hundredths: dict[int, np.ndarray] | None = None) -> Figure:
    """A figure from trace dicts ({"type": "heatmap", ...}) and a layout dict, unchecked. `hundredths`:
    trace number -> its z (0..1, rounded to 0.01) as whole hundredths in uint8, which is what travels
    (as_hundredths); the trace keeps the float32 numbers k / 100 for whoever reads the figure here."""
    return Figure(data, layout, hundredths)


def title_of(fig: go.Figure) -> str:
    """The figure's title text ('' if none), read without building Plotly's objects for a Figure."""
    layout = fig._plain_parts()[1] if isinstance(fig, Figure) else fig.to_plotly_json().get("layout", {})
    title = layout.get("title") if isinstance(layout, dict) else None
    return str((title.get("text") if isinstance(title, dict) else title) or "")


def plain_figure(fig: go.Figure) -> Figure:
    """A figure built with go.Figure's helpers (add_trace, add_shape) as one that serialises like the rest:
    the same traces and layout, and its text alternative."""
    if isinstance(fig, Figure):
        return fig
    return Figure(list(fig._data), dict(fig._layout))


def no_taller(fig: go.Figure, height: int | None) -> go.Figure:
    """The figure at most `height` px tall (None: as it is). Plotly draws the plot area in what the
    margins leave: a heatmap whose cells are kept square (scaleanchor) shrinks, its cells stay square."""
    if not height:
        return fig
    raw = fig.__dict__.get("_raw") if isinstance(fig, Figure) else None
    current = (raw[1] if raw is not None else fig.to_plotly_json().get("layout", {})).get("height")
    if current is not None and current > height:
        if raw is not None:
            raw[1]["height"] = height
        else:
            fig.update_layout(height=height)
    return fig
