"""How the page names what a model has: its attention kinds, its heads (`L1 H2`, as pickers offer them and
links carry them), and a line about each pretrained model's weights.

    head_choices(registry, "lm")                  # ['L1 H1', 'L1 H2', ...]
    parse_heads("L1 H2, L2 H1", registry, "lm")    # frozenset of 0-based (kind, layer, head), or InputError
"""
from __future__ import annotations

from analysis import heads
from model import gguf
from model.registry import ModelRegistry
from ui.page.messages import InputError

KIND_LABELS = {"self": "self-attention", "encoder": "encoder self-attention",
               "decoder": "decoder self-attention (masked)", "cross": "cross-attention (decoder → encoder)"}


def model_notes(registry: ModelRegistry) -> str:
    """What the page says about the weights each pretrained model was read from (LoadedModel.about), one line a
    model, with its source; empty when none says anything (the models trained here, minilm)."""
    links = {gguf.SMOLLM2: gguf.SMOLLM2_LINK}
    lines = []
    for name in registry.available:
        about = registry.models[name].about
        if about:
            link = f" Source: [{links[name]}]({links[name]})." if name in links else ""
            lines.append(f"- **{name}**: {about}.{link}")
    return "\n".join(lines)


def head_choices(registry: ModelRegistry, name: str, kind: str | None = None) -> list[str]:
    """Every head of the model as the app writes it (analysis.heads.head_choices), or of one attention kind."""
    kinds = (kind,) if kind is not None else registry.kinds(name)
    return heads.head_choices({k: registry.shape(name, k) for k in kinds})


def parse_heads(spec, registry: ModelRegistry, name: str) -> frozenset:
    """0-based (kind, layer, head) from head names as head_choices writes them, or InputError."""
    try:
        return heads.parse_heads(spec, {k: registry.shape(name, k) for k in registry.kinds(name)}, name, KIND_LABELS)
    except ValueError as e:
        raise InputError(str(e)) from None
