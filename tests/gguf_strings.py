"""200 varied strings for checking a rebuilt tokenizer against a reference, built deterministically (a seeded
generator over fixed pieces): accents, emoji, CJK, code, digits, runs of spaces and newlines, and text that
spells a special token."""
from __future__ import annotations

import random

WORDS = ["attention", "head", "the", "cat", "sat", "on", "mat", "Paris", "Eiffel", "tower", "don't", "it's",
         "we'll", "I'M", "you've", "they'd", "naïve", "café", "Ångström", "façade", "Zürich", "São", "Paulo",
         "coöperate", "résumé", "jalapeño", "Ærø", "Łódź", "İstanbul", "straße", "Ελληνικά", "русский", "עברית",
         "العربية", "हिन्दी", "ไทย"]
EMOJI = ["🍕", "👩‍👩‍👧", "🇫🇷", "👍🏽", "❤️", "🤖", "😀😃", "✨", "🧠"]
CJK = ["注意力机制", "東京タワー", "한국어", "漢字", "日本語の文", "中文，标点。", "ｆｕｌｌｗｉｄｔｈ"]
CODE = ["def f(x):\n    return x**2", "for (int i = 0; i < n; ++i) { a[i] += b[i]; }", "x = {'a': [1, 2, 3]}",
        "<div class=\"x\">&amp;</div>", "SELECT * FROM t WHERE id = 42;", "#include <stdio.h>", "λx. x + 1",
        "if a != b and c >= d:", "`code` and ```blocks```", "C:\\Users\\name\\file.txt", "https://example.org/a?b=c"]
DIGITS = ["3.14159", "2026-11-26", "1234567890", "1,000,000", "007", "x86_64", "0.5e-10", "½ ¾ ²³", "١٢٣",
          "Ⅻ", "10:45pm", "$19.99", "+33 1 23 45 67 89"]
SPACES = ["  ", "   ", "\t", "\n", "\n\n", "\n\n\n", " \n ", "\r\n", "    ", " \t \n"]
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|im_start|>user\nHi<|im_end|>", "<s>", "</s>",
            "<|endoftext|><|endoftext|>", "<|im_start", "im_end|>", "<repo_name>", "<|begin_of_text|>"]
FIXED = ["", " ", "a", " a", "Hello world", "Hello  world", "Hello   world ", "  leading", "trailing  ",
         "  2024", " 1 22 333 4444", "a1b2c3", "The year 1999 and  2000", "x\n\n\ny", "tab\tseparated\tvalues",
         "ALL CAPS SHOUTING", "MiXeD CaSe", "don't won't can't", "'quoted' \"double\"", "...!!!???", "—–-",
         "   \n   ", "emoji🍕in the middle", "数字123和字母abc"]


def varied_strings(n: int = 200, seed: int = 0) -> list[str]:
    """FIXED, then seeded mixtures of every kind of piece, n strings in all (the same on every run)."""
    rng = random.Random(seed)
    kinds = [WORDS, EMOJI, CJK, CODE, DIGITS, SPACES, SPECIALS]
    strings = list(FIXED)
    while len(strings) < n:
        pieces = []
        for _ in range(rng.randint(1, 8)):
            kind = rng.choice(kinds)
            pieces.append(rng.choice(kind))
            pieces.append(rng.choice(["", " ", " ", "  ", "\n", ""]))
        strings.append("".join(pieces))
    return strings[:n]
