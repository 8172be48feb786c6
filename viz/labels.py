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


def smallest_text(font_size: int) -> int:
    """The smallest text a figure drawn at font_size writes: 10 px on a page (a phone), 14 px in presenter mode's
    20-px font (a projector)."""
    return max(10, round(0.7 * font_size))


def axis_ticks(tokens, offset: int = 0, max_labels: int = MAX_TICK_LABELS) -> dict:
    """Axis settings placing token i at integer position offset+i with its escaped label.

    Use as `fig.update_xaxes(**axis_ticks(keys))`. Long inputs label every k-th token only
    (labelled_positions); the hover still names every cell. Labels may overflow the plot: Plotly's
    default ("hide past div") measures every label once per label drawn, which cost a 32-token axis
    ~1,000 layout reads in the browser; the views leave room for their labels themselves."""
    labels = token_labels(tokens)
    shown = labelled_positions(len(labels), max_labels)
    return dict(tickmode="array", tickvals=[offset + i for i in shown], ticktext=[labels[i] for i in shown],
                ticklabeloverflow="allow")


def markdown_label(token) -> str:
    """A token for Markdown text: escaped like token_label, plus the characters Markdown would style."""
    text = token_label(token)
    for ch in "\\`*_[]|#~":
        text = text.replace(ch, "\\" + ch)
    return text
