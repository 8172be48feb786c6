"""Strings a curious student (or a hostile one) will type into the sentence box.

Shared by the API tests (tests/app/server/test_hostile_input.py) and the browser tests
(tests/e2e/test_e2e_hostile.py). Each entry is (id, text); `expects_result` says whether
the app should draw it (True) or refuse it with a message (False).
"""
from __future__ import annotations

import unicodedata

MAX_CHARS = 2000  # the server's limit, as the UI states it (model.registry.MAX_CHARS)

HOSTILE: list[tuple[str, str]] = [
    ("empty", ""),
    ("space", " "),
    ("whitespace-mix", "\t\n\r  \n"),
    ("crlf-only", "\r\n\r\n"),
    ("100k-chars", "a" * 100_000),
    ("just-over-limit", "b" * (MAX_CHARS + 1)),
    ("at-limit", "the cat " * (MAX_CHARS // 8)),
    ("5000-char-word", "w" * 5000),
    ("400-char-word", "x" * 400),
    ("many-tokens", "the dog and " * 120),
    ("nul", "\x00"),
    ("nul-inside", "The\x00cat sat"),
    ("only-nuls", "\x00" * 10),
    ("ansi-escape", "\x1b[31mred\x1b[0m text\x07\x08"),
    ("all-c0-controls", "".join(chr(i) for i in range(32)) + "end"),
    ("c1-controls-del", "a\x7f\x80\x9fb"),
    ("emoji", "I love 😀 and 🐍"),
    ("zwj-family", "👩\u200d👩\u200d👧\u200d👦 family"),
    ("rainbow-flag", "🏳️\u200d🌈 flag"),
    ("skin-tone", "👍🏽 thumbs"),
    ("regional-flags", "🇫🇷🇯🇵🇧🇷"),
    ("hebrew-rtl", "שלום עולם, מה שלומך?"),
    ("arabic-rtl", "مرحبا بالعالم"),
    ("rtl-override", "abc\u202eevil\u202cdef"),
    ("rlm-lrm", "left \u200f\u200e marks"),
    ("cjk-chinese", "中文字符测试，这是一个句子。"),
    ("cjk-japanese", "日本語のテキストです"),
    ("korean", "한국어 문장입니다"),
    ("combining-marks", "e\u0301\u0301\u0301 cafe\u0301"),
    ("zalgo", "Z̷̢̛̛a̸̡l̵̨g̶̛o̷̢ t̸e̵x̶t̷"),
    ("img-onerror", "<img src=x onerror=alert(1)>"),
    ("script-tag", "<script>alert(1)</script>"),
    ("svg-onload", "<svg onload=alert(1)>"),
    ("attr-breakout", '"><img src=x onerror=alert(document.domain)>'),
    ("javascript-url", "javascript:alert(1)"),
    ("html-entities", "<b>bold</b> <i>it</i> <br> &amp; &lt; &#60; &#x3C;"),
    ("end-of-seq", "</s>"),
    ("start-of-seq", "<s>"),
    ("mask-alone", "<mask>"),
    ("masks-only", "<mask><mask><mask>"),
    ("specials-mixed", "The cat <mask> on the </s> mat <s> [MASK]"),
    ("mask-at-edges", "<mask> sat on the <mask>"),
    ("other-specials", "<pad> <unk> [CLS] [SEP] <|endoftext|>"),
    ("markdown", "**bold** _it_ `code` [link](http://x) # heading"),
    ("markdown-table", "| a | b |\n|---|---|"),
    ("template-jinja", "{{7*7}}"),
    ("template-others", "${7*7} #{7*7} <%= 7*7 %>"),
    ("sql-injection", "'; DROP TABLE users; --"),
    ("path-traversal", "../../../../etc/passwd"),
    ("format-string", "%s%s%s%n %x {0} {}"),
    ("backslashes", "\\n\\x00\\u0000 literal"),
    ("bom", "\ufeffBOM at start"),
    ("odd-spaces", "\u00a0non\u2003breaking\u3000spaces"),
    ("zero-width", "\u200b\u200bzero\u200bwidth"),
    ("long-ligature", "﷽"),
    ("astral-cuneiform", "𒀱𒀱𒀱"),
    ("private-use-max", "\ue000\U0010fffd"),
    ("js-literals", "null undefined NaN None true"),
    ("number-overflow", "1e309 -0 0x7fffffff"),
    ("url-encoded", "%F0%9F%98%80 %3Cs%3E"),
    ("mixed-scripts", "mixed 中文 עברית 😀 e\u0301 <s>"),
    ("newlines-inside", "line one\nline two\r\nline three"),
]

# Not sendable through gradio_client (its JSON encoder refuses them); sent as escaped JSON over raw HTTP.
LONE_SURROGATES: list[tuple[str, str]] = [
    ("lone-high-surrogate", "a\ud800b"),
    ("lone-low-surrogate", "\udfff"),
]


def visible(text: str) -> bool:
    """Whether anything would be left once control characters and whitespace are dropped."""
    return any(not c.isspace() and unicodedata.category(c) not in ("Cc", "Cs") for c in text)


def expects_result(text: str) -> bool:
    """The app should draw this text (True) or refuse it with a message (False)."""
    return len(text) <= MAX_CHARS and visible(text)
