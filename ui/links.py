"""The view's settings in the URL: ?text=...&model=lm&layer=2&head=1&kind=self&presenter=1&tab=attention

Pure helpers (no Gradio): parse what a visitor's URL asks for, and write a link back.
Layer and head are 1-based, as the UI shows them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from ui.models import MAX_CHARS, ModelRegistry

TRUE = {"1", "true", "yes", "on"}


@dataclass
class ViewSettings:
    text: str
    model: str
    layer: int = 1
    head: int = 1
    kind: str = "self"
    presenter: bool = False
    tab: str = "attention"


def _int(value, default: int) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def parse_query(params: dict, registry: ModelRegistry, defaults: ViewSettings,
                tabs: tuple[str, ...] = ()) -> tuple[ViewSettings, list[str]]:
    """Settings from URL query parameters, falling back to `defaults`; plus notes on what was ignored.

    Numbers are clamped into the chosen model's range, so a link made for a bigger model still opens."""
    notes = []
    model = params.get("model", defaults.model)
    if model not in registry.available:
        if "model" in params:
            notes.append(f"model {model!r} is not available; showing {defaults.model}")
        model = defaults.model
    text = str(params.get("text", defaults.text))[:MAX_CHARS] or defaults.text
    kinds = registry.kinds(model) if model in registry.available else ("self",)
    kind = params.get("kind") or kinds[0]
    if kind not in kinds:
        kind = kinds[0]
    layers, heads = registry.shape(model, kind) if model in registry.available else (1, 1)
    layer = min(max(_int(params.get("layer"), defaults.layer), 1), layers)
    head = min(max(_int(params.get("head"), defaults.head), 1), heads)
    if "layer" in params and str(layer) != str(params["layer"]):
        notes.append(f"layer {params['layer']!r} is out of range; showing layer {layer}")
    if "head" in params and str(head) != str(params["head"]):
        notes.append(f"head {params['head']!r} is out of range; showing head {head}")
    presenter = str(params.get("presenter", "1" if defaults.presenter else "0")).lower() in TRUE
    tab = params.get("tab", defaults.tab)
    if tabs and tab not in tabs:
        tab = defaults.tab
    return ViewSettings(text, model, layer, head, kind, presenter, tab), notes


def make_link(settings: ViewSettings, page_url: str | None = None) -> str:
    """A URL reopening this view: the page's address (without its old query) plus the settings."""
    query = {k: v for k, v in asdict(settings).items() if v != ""}
    query["presenter"] = "1" if settings.presenter else "0"
    base = "/"
    if page_url:
        parts = urlsplit(page_url)
        base = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))
    return f"{base}?{urlencode(query)}"
