"""Token labels for Plotly axes and hovers, and the one way every view writes what does not print (docs/tokens.md).

Plotly reads a subset of HTML in text, so a token like "<s>" or "</b>" would vanish or
restyle the label: every label is escaped here. And a categorical axis merges repeated
tokens ("the" ... "the"), so heatmaps sit on integer positions and show tokens via
tickvals/ticktext.
"""
from __future__ import annotations

import functools
import html
import math
import numbers
import unicodedata

EMPTY = "∅"
NEWLINE, TAB, NBSP, SPACE, INNER_SPACE = "↵", "⇥", "·", "▁", "␣"
# What every view writes for a character that does not print (docs/tokens.md, model/tokenizer.readable agrees):
# never an escape code such as \x0a or \xa0.
SHOWN = {"\n": NEWLINE, "\t": TAB, "\xa0": NBSP}


def token_label(token) -> str:
    """One token as safe, visible Plotly text: HTML escaped, what does not print written as docs/tokens.md says."""
    return _label(str(token))


@functools.lru_cache(maxsize=16384)  # a vocabulary's worth: every figure of every request labels its tokens
def _label(text: str) -> str:
    return html.escape(plain_label(text), quote=False)


def visible_char(c: str) -> str:
    """One character as a reader sees it: a newline ↵, a tab ⇥, a non-breaking space ·, another space that is not
    an ordinary one ␣, a control or format character by its code (<0x0D> as the tokenizers name a byte, <U+200B>
    past a byte); everything else as it is."""
    if c in SHOWN:
        return SHOWN[c]
    category = unicodedata.category(c)
    if category[0] == "C":
        return f"<0x{ord(c):02X}>" if ord(c) < 0x100 else f"<U+{ord(c):04X}>"
    if category in ("Zs", "Zl", "Zp") and c != " ":
        return INNER_SPACE
    return c


def plain_label(token) -> str:
    """One token (or a text the model wrote) as visible text, not escaped: for what shows text as text (a
    dropdown's choices, where token_label's "&lt;s&gt;" would be read as it is written). Ordinary spaces stay
    spaces between words; a token or text of spaces alone shows them as ▁ (a leading space, as the tokenizers
    write it)."""
    text = str(token)
    if not text.isprintable():  # printable text has nothing to rewrite but spaces: skip the slow pass
        text = "".join(visible_char(c) for c in text)
    if not text.strip():
        text = text.replace(" ", SPACE) if text else EMPTY
    return text


def token_labels(tokens) -> list[str]:
    """token_label for every token, in order (repeats kept: position tells them apart)."""
    return [token_label(t) for t in tokens]


MAX_TICK_LABELS = 64  # past this many tokens an axis labels every k-th one: 256 labels make an unreadable block


def labelled_positions(count: int, max_labels: int = MAX_TICK_LABELS) -> range:
    """Which of `count` positions get a tick label: all of them up to max_labels, else every k-th from 0."""
    return range(0, count, label_step(count, max_labels))


def label_step(count: int, max_labels: int = MAX_TICK_LABELS) -> int:
    """1 when every token is labelled, else k for "every k-th token labelled"."""
    return 1 if count <= max_labels else math.ceil(count / max_labels)


def every_labelled(step: int) -> str:
    """', every 4th labelled' for an axis that labels every 4th token (viz.labels.label_step); the page script
    writes the same where it thins a crowded axis (ui/page/accessibility.py)."""
    if step == 1:
        return ""
    suffix = "th" if 10 <= step % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(step % 10, "th")
    return f", every {step}{suffix} labelled"


def with_labelled(title: str, step: int) -> str:
    """An axis title saying which labels it shows: "keys, every 2nd labelled", or "every 2nd labelled" alone."""
    said = every_labelled(step)
    return title + said if title else said[2:]


def smallest_text(font_size: int) -> int:
    """The smallest text a figure drawn at font_size writes: 10 px on a page (a phone), 14 px in presenter mode's
    20-px font (a projector)."""
    return max(10, round(0.7 * font_size))


# A label's box is about 1.16 of its font size tall: labels on neighbouring lines need 1.17 of it between their
# baselines. A label slanted by 60° (a key axis) sits sin(60°) of the tick distance from the next one.
LINE_PITCH = 1.17
SLANT = math.sin(math.radians(60))


def label_fit(cell: float, count: int, font_size: int, slanted: bool = False, pitch: float = LINE_PITCH,
              smallest: int | None = None) -> tuple[int, int]:
    """(size, step) for the labels of `count` positions `cell` px apart: step 1 when every label fits in the
    smallest readable text (smallest_text) or larger, else k (every k-th labelled: say so with every_labelled) so
    that no two labels overlap; the size the room k cells give, never under the smallest readable text nor over
    font_size. `pitch`: the room a
    label needs across its line, in font sizes (a label of two characters side by side: ~1.4)."""
    across = max(float(cell), 1e-6) * (SLANT if slanted else 1.0)
    smallest = smallest_text(font_size) if smallest is None else smallest
    size = int(max(smallest, min(font_size, across / pitch)))
    step = max(label_step(count), math.ceil(pitch * size / across - 1e-9))
    # the room every k-th label has takes a larger font, up to font_size
    return int(max(size, min(font_size, step * across / pitch))), step


def axis_ticks(tokens, offset: int = 0, max_labels: int = MAX_TICK_LABELS, step: int | None = None) -> dict:
    """Axis settings placing token i at integer position offset+i with its escaped label.

    Use as `fig.update_xaxes(**axis_ticks(keys))`. Long inputs label every k-th token only
    (labelled_positions), or every `step`-th where given (label_fit); the hover still names every cell. Labels may overflow the plot: Plotly's
    default ("hide past div") measures every label once per label drawn, which cost a 32-token axis
    ~1,000 layout reads in the browser; the views leave room for their labels themselves."""
    labels = token_labels(tokens)
    shown = range(0, len(labels), step) if step else labelled_positions(len(labels), max_labels)
    return dict(tickmode="array", tickvals=[offset + i for i in shown], ticktext=[labels[i] for i in shown],
                ticklabeloverflow="allow")


def markdown_label(token) -> str:
    """A token for Markdown text: escaped like token_label, plus the characters Markdown would style."""
    text = token_label(token)
    for ch in "\\`*_[]|#~":
        text = text.replace(ch, "\\" + ch)
    return text


CHAR_EM = 0.62  # a character's width, in font sizes (the figures' margins assume the same)


def text_box(x_px: float, y_px: float, text: str, size: float, position: str = "middle center") -> tuple:
    """The box (left, top, right, bottom) in px of `text` at `size` written at a point (x_px, y_px; y down) as a
    Plotly scatter places it (textposition "top center", "middle right", ...), a few px from the point."""
    width, height, gap = CHAR_EM * size * max(len(text), 1), 1.2 * size, 0.6 * size
    vertical, horizontal = position.split()
    left = {"left": x_px - gap - width, "right": x_px + gap}.get(horizontal, x_px - width / 2)
    top = {"top": y_px - gap - height, "bottom": y_px + gap}.get(vertical, y_px - height / 2)
    return left, top, left + width, top + height


def overlaps(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def plot_scale(xs, ys, width_px: float, height_px: float, square: bool = False) -> tuple:
    """(px per x unit, px per y unit) of a scatter whose axes span its points with Plotly's ~5% of padding, in a
    plot area at least width_px × height_px (give the least the figure may get: labels are kept apart for it);
    square: one scale for both axes (scaleanchor), the smaller."""
    def span(values):
        values = [float(v) for v in values if v == v]
        return max(max(values, default=1) - min(values, default=0), 1e-9) * 1.1
    sx, sy = width_px / span(xs), height_px / span(ys)
    return (min(sx, sy),) * 2 if square else (sx, sy)


def kept_apart(points, texts, size: float, scale, positions=("top center",)) -> list:
    """For each point (x, y in data units) and its text: the first of `positions` where its box meets no box kept
    before it, or None (the text is left out: the hover still names it). Greedy, in the order given: put the
    points whose text matters most first. `scale`: (px per x unit, px per y unit), or a list of them where the plot's
    size is not known (a page's width): a text is kept only where it is apart at every one (two labels on either
    side of two near points may meet at one scale and not at a smaller one)."""
    scales = [scale] if isinstance(scale[0], numbers.Real) else list(scale)
    kept, placed = [[] for _ in scales], []
    for (x, y), text in zip(points, texts):
        where = None
        for position in positions:
            boxes = [text_box(x * sx, -y * sy, text, size, position) for sx, sy in scales]
            if not any(overlaps(box, other) for box, others in zip(boxes, kept) for other in others):
                where = position
                for box, others in zip(boxes, kept):
                    others.append(box)
                break
        placed.append(where)
    return placed
