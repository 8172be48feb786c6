"""What the model predicts, under Every head's figures: the next tokens and a greedy continuation (lm, any causal
model), the fillers of each <mask> (mlm, minilm), the ISO date (dates), the category (classifier), and notes on
unusual tokens. A section of the Every head tab (ui/tabs/attention.py); sampling is its own section beside it."""
from __future__ import annotations

import re

from model.registry import ModelRegistry
from ui.page.messages import clean_text
from viz.labels import EMPTY, markdown_label, token_labels

TOP_K = 5
GENERATE_TOKENS = 12
NO_REPEAT = 3  # the continuation never repeats a run of this many tokens (model.api.LoadedModel.generate)
NO_MASK_HELP = ("No `<mask>` in the text. Replace a word with `<mask>` to ask the model to fill it in, "
                "e.g. *The cat sat on the &lt;mask&gt;*.")


END_NOTE = ("\n\n*&lt;/s&gt;* is the end-of-line token: the model predicts that the text ends here "
            "(it was trained on one sentence or gloss per line).")
BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")
UNFINISHED_NOTE = ("*A token such as `<0x93>` in the continuation is a single byte that makes no whole character "
                   "with the bytes beside it: the tokenizer spells a rare character in several UTF-8 bytes, and the "
                   "model wrote only some of them.*\n\n")


def continuation_text(continuation: str) -> str:
    """The greedy continuation alone (the input is already on screen), or why there is none."""
    if not continuation.strip():
        return ("**Greedy continuation:** none. Its most likely next token is &lt;/s&gt;, the end of the line, so "
                "greedy decoding stops at once.")
    return (f"**Greedy continuation** (the next {GENERATE_TOKENS} tokens at most, each the most likely one that "
            f"does not repeat a run of {NO_REPEAT} tokens already written): …{markdown_label(continuation)}\n\n"
            + (UNFINISHED_NOTE if BYTE_TOKEN.search(continuation) else "")
            + f"*The ban on repeats is there because a small model's single likeliest token often loops "
            f"(“the act of the act of …”); Sampling below at T = 0 is plain greedy decoding, without the ban.*")


def token_notes(trace) -> str:
    """Markdown explaining unusual tokens in this text (empty when there are none)."""
    notes = []
    if any(BYTE_TOKEN.fullmatch(str(token)) for token in trace.tokens):
        notes.append("Tokens such as `<0xF0>` are single bytes: the tokenizer has no piece for that character "
                     "(an emoji, a rare letter), so it spells out the character's UTF-8 bytes, one token each "
                     "(an emoji takes four).")
    if any(label == EMPTY for label in token_labels(trace.tokens)):
        notes.append(f"{EMPTY} marks a token that is empty when printed.")
    return "\n\n".join(notes)


def no_head_note(name: str) -> str:
    return (f"**No predictions: {name} has no word-prediction head.** It was published without one: it was "
            "trained to turn a whole sentence into one vector (for comparing meanings), not to predict or fill "
            "in words, so there is nothing honest to show here. Its attention is real: every view works on it.")


def predictions(registry: ModelRegistry, name: str, text: str) -> str:
    """What the model does with the text, as Markdown: next tokens (lm), fillers (mlm), ISO date (dates)."""
    model = registry.get(name)
    text = clean_text(text, registry.max_chars(name))
    if not model.has_lm_head:
        return no_head_note(name)
    if model.arch == "decoder":
        rows = "\n".join(f"| {markdown_label(token)} | {p:.1%} |" for token, p in model.next_tokens(text, TOP_K))
        continuation = model.generate(text, GENERATE_TOKENS, no_repeat_ngram=NO_REPEAT)
        return (f"**Next token** (top {TOP_K})\n\n| token | probability |\n|---|---|\n{rows}\n\n"
                f"{continuation_text(continuation)}{END_NOTE if markdown_label('</s>') in rows else ''}")
    if model.arch == "encoder":
        answers = model.fill(text, TOP_K)
        if not answers:
            return NO_MASK_HELP
        blocks = []
        for n, answer in enumerate(answers, 1):
            rows = "\n".join(f"| {markdown_label(token)} | {p:.1%} |" for token, p in answer)
            blocks.append(f"**&lt;mask&gt; {n}** (top {TOP_K})\n\n| token | probability |\n|---|---|\n{rows}")
        return "\n\n".join(blocks)
    if model.arch == "classifier":
        rows = "\n".join(f"| {category} | {p:.1%} |" for category, p in model.classify(text, TOP_K))
        return f"**Category** (top {TOP_K}; more in the Classifier tab)\n\n| category | probability |\n|---|---|\n{rows}"
    return f"**ISO 8601:** `{model.translate(text)}`"
