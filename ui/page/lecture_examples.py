"""The lecture examples (the picker above the tabs) and the view a page opens on: each model's previous-token
head, measured, and what clicking an example shows, measured on the shipped weights. No Gradio: the page's
controls (ui/page/controls.py) and its link (ui/page/page_link.py) read these."""
from __future__ import annotations

import numpy as np

from analysis import head_stats as stats
from model.registry import ModelRegistry
from ui.page.links import ViewSettings
from ui.page.messages import InputError, clean_text
from viz.labels import markdown_label

# Each example shows what its model really does, measured when clicked (example_claim) and checked against the
# shipped weights by tests/app/handlers/test_examples.py (lm's previous-token head, fill-ins mlm gets right, dates it reads,
# minilm's "it" -> "animal") and tests/app/handlers/test_classifier_app.py (training.evaluate.CLASSIFIER_EXAMPLES).
EXAMPLES = [
    ("He opened the door and walked into the room", "lm"),
    ("a person who plays the piano", "lm"),
    ("Mary gave roses to Susan", "lm"),
    ("the United <mask> of America", "mlm"),
    ("a person <mask> plays the piano", "mlm"),
    ("he was unable <mask> walk", "mlm"),
    ("Saturday, 21st of November 2026", "dates"),
    ("3 March 1999", "dates"),
    ("the 12th of june, 2024", "dates"),
    ("The animal didn't cross the street because it was too tired.", "minilm"),
    ("Tokenization splits unbelievably rare words into pieces.", "minilm"),
    ("Mary gave roses to Susan because she loves her.", "minilm"),
    ("a large grey animal with a long trunk", "classifier"),
    ("a tool with a heavy head used for driving nails", "classifier"),
    ("move quickly on foot", "classifier"),
    ("The Eiffel Tower is in the city of", "smollm2"),
    ("When Mary and John went to the store, John gave a drink to", "smollm2"),
    ("Alice likes green apples and Bob likes red grapes. Alice likes green", "smollm2"),
]
DEFAULT_TEXT = EXAMPLES[0][0]
# Examples that show one link between two words: clicking one opens the head that puts the most attention
# from the first word (its last occurrence) on the second (its first), measured on the sentence when clicked
# (minilm: layer 4, head 2, 0.68; smollm2: the last " to" on " Mary", L25 H5, 0.81; the second " green" on the
# " apples" that followed the first, an induction head)
LINKED_EXAMPLES = {"The animal didn't cross the street because it was too tired.": ("it", "animal"),
                   "When Mary and John went to the store, John gave a drink to": ("to", "mary"),
                   "Alice likes green apples and Bob likes red grapes. Alice likes green": ("green", "apples")}
# what a causal model's example is for: its next token, measured when clicked (next_token_claim)
ANSWERS = {"The Eiffel Tower is in the city of": "Paris",
           "When Mary and John went to the store, John gave a drink to": "Mary",
           "Alice likes green apples and Bob likes red grapes. Alice likes green": "apples"}
FILLS = {"the United <mask> of America": "States", "a person <mask> plays the piano": "who",
         "he was unable <mask> walk": "to"}  # what mlm puts first in each blank
DATES = {"Saturday, 21st of November 2026": "2026-11-21", "3 March 1999": "1999-03-03",
         "the 12th of june, 2024": "2024-06-12"}

def previous_token_head(registry: ModelRegistry, name: str) -> tuple[int, int]:
    """1-based (layer, head) the page opens on: the model's strongest previous-token head as measured by
    `python -m training.evaluate` (a pattern a class recognises at once); for a pretrained model, as measured
    on its example; else layer 1, head 1."""
    if name not in registry.available:
        return 1, 1
    best = registry.history(name).head("previous_token_head")
    layers, heads = registry.shape(name)
    if best is None:  # a pretrained model has no training history: measure it on its example
        return measured_previous_token_head(registry, name) if registry.get(name).pretrained else (1, 1)
    layer, head = best.layer + 1, best.head + 1
    return (layer, head) if 1 <= layer <= layers and 1 <= head <= heads else (1, 1)


def measured_previous_token_head(registry: ModelRegistry, name: str) -> tuple[int, int]:
    """For a model without a training history (a pretrained one): the head that puts the most attention on
    the previous token, measured on the model's first lecture example (else the page's first sentence)."""
    text = next((t for t, m in EXAMPLES if m == name), DEFAULT_TEXT)
    if registry.arch(name) == "encoder-decoder":
        return 1, 1
    try:
        frame = stats.head_stats(registry.attention(name, text, "self").probs)
    except (InputError, ValueError):
        return 1, 1
    best = frame.loc[frame["previous"].idxmax()]
    return int(best["layer"]), int(best["head_in_layer"])


def linked_head(registry: ModelRegistry, name: str, text: str) -> tuple[int, int, float, str, str] | None:
    """For a LINKED_EXAMPLES sentence: the 1-based (layer, head) that puts the most attention from its first
    word (its last occurrence) on its second (its first), that weight, and the two tokens as the model writes them
    (escaped for Markdown), measured on this model; None for other texts."""
    words = LINKED_EXAMPLES.get(text)
    if words is None or name not in registry.available or registry.arch(name) == "encoder-decoder":
        return None
    att = registry.attention(name, text, "self")
    labels = [label.lstrip("▁").lower() for label in att.queries]
    if words[0] not in labels or words[1] not in labels:
        return None
    query = len(labels) - 1 - labels[::-1].index(words[0])  # the last occurrence: it looks back at the first
    weight = att.probs[:, :, query, labels.index(words[1])]  # (L, H)
    layer, head = (int(i) for i in np.unravel_index(weight.argmax(), weight.shape))
    key = labels.index(words[1])
    said = (markdown_label(token.lstrip("▁")) for token in (att.queries[query], att.keys[key]))
    return (layer + 1, head + 1, float(weight[layer, head]), *said)


def next_token_claim(registry: ModelRegistry, text: str, name: str) -> str | None:
    """For an ANSWERS example on a causal model: the token it puts first next and its probability, measured now,
    and where the expected word stands if it is not first. None for other texts and models."""
    word = ANSWERS.get(text)
    if word is None or name not in registry.available or registry.arch(name) != "decoder":
        return None
    guesses = registry.get(name).next_tokens(clean_text(text, registry.max_chars(name)), 5)
    (top, p), words = guesses[0], [token.lstrip("▁") for token, _ in guesses]
    said = f"Measured now: {name} puts “{markdown_label(top.lstrip('▁'))}” first next ({p:.0%})."
    if words[0] != word:
        said += f" “{word}” is {'not in its top 5' if word not in words else f'number {words.index(word) + 1}'}."
    return said


def example_claim(registry: ModelRegistry, text: str, name: str, layer: int, head: int) -> str | None:
    """What clicking an example shows, measured now on the shipped weights: the share the opening head puts on
    the previous token (lm), mlm's first answer for each blank, the dates model's output. None for others."""
    if name not in registry.available:
        return None
    arch = registry.arch(name)
    if arch == "decoder":
        att = registry.attention(name, text, "self")
        share = stats.head_stats(att.probs, att.mask)
        row = share[(share["layer"] == layer) & (share["head_in_layer"] == head)]
        if row.empty:
            return None
        return (f"Measured on this sentence: layer {layer}, head {head}, {name}'s previous-token head, puts "
                f"{float(row['previous'].iloc[0]):.2f} of each token's attention on the token just before it.")
    if arch == "encoder" and registry.get(name).has_lm_head:
        answers = registry.get(name).fill(clean_text(text, registry.max_chars(name)), 1)
        if not answers:
            return None
        firsts = " and ".join(f"“{token.lstrip('▁')}” ({p:.0%})" for (token, p), *_ in answers)
        return f"Measured now: {name} fills the blank with {firsts} first (its top 5 are under Predictions)."
    if arch == "encoder-decoder":
        return f"Measured now: {name} writes {registry.get(name).translate(clean_text(text))}."
    if arch == "classifier":
        category, p = registry.get(name).classify(clean_text(text), 1)[0]
        return (f"Measured now: {name} names it {category} ({p:.0%}); the Classifier tab shows which tokens "
                "decided it.")
    return None


def default_settings(registry: ModelRegistry) -> ViewSettings:
    model = "lm" if "lm" in registry.available else (registry.default or "lm")
    text = next((t for t, m in EXAMPLES if m == model), DEFAULT_TEXT)
    kinds = registry.kinds(model) if model in registry.available else ("self",)
    layer, head = previous_token_head(registry, model)
    return ViewSettings(text=text, model=model, layer=layer, head=head, kind=kinds[0])

