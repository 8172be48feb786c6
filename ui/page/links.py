"""The view's settings in the URL: ?text=...&model=lm&layer=2&head=1&kind=self&presenter=1&tab=attention
plus the tabs' own controls when they differ from their defaults: temperature (T itself, Step by step),
step (decoding step) and beam (beam width, Encoder-decoder), snapshot (Learning; absent = the trained model)
and seed (the Positions shuffle), and the sampling panel's sample_temperature, sample_top_k, sample_top_p,
sample_seed and sample_tokens (Every head); quiz=1 opens the views in quiz mode (answers hidden until revealed).
A lesson's link is ?lesson=<id>&step=<k> (ui/lessons/player.py): it opens that step's settings.

Pure helpers (no Gradio): parse what a visitor's URL asks for, and write a link back.
Layer and head are 1-based, as the UI shows them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from analysis import sampling
from analysis.steps import MAX_TEMPERATURE, MIN_TEMPERATURE
from ui.page.messages import MAX_BEAM, MAX_CHARS, shown
from model.registry import ModelRegistry

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
    temperature: float = 1.0  # T, not its logarithm
    step: int = 6  # decoding step, 1-based
    beam: int = 4
    snapshot: int = 0  # 1-based training snapshot; 0 = the last one (the trained model)
    seed: int = 0
    # the sampling panel (Every head; /generate's temperature, top_k, top_p, seed and tokens)
    sample_temperature: float = 1.0
    sample_top_k: int = 0
    sample_top_p: float = 1.0
    sample_seed: int = 0
    sample_tokens: int = sampling.DEFAULT_TOKENS
    quiz: bool = False  # every view that quizzes hides its answer until the presenter reveals it


# The tabs' own settings: default and allowed range; a link leaves out those at their default.
TAB_SETTINGS = {"temperature": (1.0, MIN_TEMPERATURE, MAX_TEMPERATURE), "step": (6, 1, 256),
                "beam": (4, 1, MAX_BEAM), "snapshot": (0, 0, 10_000), "seed": (0, 0, 2**32 - 1),
                "sample_temperature": (1.0, 0.0, sampling.MAX_TEMPERATURE),
                "sample_top_k": (0, 0, sampling.MAX_TOP_K), "sample_top_p": (1.0, sampling.MIN_TOP_P, 1.0),
                "sample_seed": (0, 0, sampling.MAX_SEED),
                "sample_tokens": (sampling.DEFAULT_TOKENS, 1, sampling.MAX_TOKENS)}
SAMPLING_SETTINGS = tuple(name for name in TAB_SETTINGS if name.startswith("sample_"))


def whole_number(value, default: int = 1) -> int:
    """A number as sent (a slider's value, a link's text, anything through the API) as a whole number, or
    `default` when it is none (None, "x", NaN, inf)."""
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return default


def _tab_setting(params: dict, name: str, notes: list[str]):
    """One of TAB_SETTINGS from the URL, clamped into its range (a note says so), else its default."""
    default, low, high = TAB_SETTINGS[name]
    if name not in params:
        return default
    try:
        value = float(params[name])
    except (TypeError, ValueError):
        value = float("nan")
    if value != value or value in (float("inf"), float("-inf")):
        notes.append(f"{name} {shown(params[name])} is not a number; showing {default}")
        return default
    value = value if isinstance(default, float) else int(value)
    clamped = min(max(value, low), high)
    if clamped != value:
        notes.append(f"{name} {shown(params[name])} is out of range; showing {clamped:g}")
    return clamped


def parse_query(params: dict, registry: ModelRegistry, defaults: ViewSettings,
                tabs: tuple[str, ...] = ()) -> tuple[ViewSettings, list[str]]:
    """Settings from URL query parameters, falling back to `defaults`; plus notes on what was ignored.

    Numbers are clamped into the chosen model's range, so a link made for a bigger model still opens."""
    notes = []
    model = params.get("model", defaults.model)
    if model not in registry.available:
        if "model" in params:
            notes.append(f"model {shown(model)} is not available; showing {defaults.model}")
        model = defaults.model
    text = str(params.get("text", defaults.text))[:MAX_CHARS] or defaults.text
    kinds = registry.kinds(model) if model in registry.available else ("self",)
    kind = params.get("kind") or kinds[0]
    if kind not in kinds:
        kind = kinds[0]
    layers, heads = registry.shape(model, kind) if model in registry.available else (1, 1)
    layer = min(max(whole_number(params.get("layer"), defaults.layer), 1), layers)
    head = min(max(whole_number(params.get("head"), defaults.head), 1), heads)
    for name, value in (("layer", layer), ("head", head)):
        if name in params and str(value) != str(params[name]):
            why = "is out of range" if whole_number(params[name], None) is not None else "is not a number"
            notes.append(f"{name} {shown(params[name])} {why}; showing {name} {value}")
    presenter = str(params.get("presenter", "1" if defaults.presenter else "0")).lower() in TRUE
    tab = params.get("tab", defaults.tab)
    if tabs and tab not in tabs:
        tab = defaults.tab
    extra = {name: _tab_setting(params, name, notes) for name in TAB_SETTINGS}
    quiz = str(params.get("quiz", "0")).lower() in TRUE
    return ViewSettings(text, model, layer, head, kind, presenter, tab, **extra, quiz=quiz), notes


def make_link(settings: ViewSettings, page_url: str | None = None) -> str:
    """A URL reopening this view: the page's address (without its old query) plus the settings."""
    query = {k: v for k, v in asdict(settings).items() if v != "" and not (k in TAB_SETTINGS and
                                                                          v == TAB_SETTINGS[k][0])}
    query["presenter"] = "1" if settings.presenter else "0"
    if settings.quiz:
        query["quiz"] = "1"
    else:
        query.pop("quiz", None)
    for name, (default, _, _) in TAB_SETTINGS.items():  # a slider's 0.7000000000000001 written as 0.7
        if name in query and isinstance(default, float):
            query[name] = f"{query[name]:.3g}"
    base = "/"
    if page_url:
        parts = urlsplit(page_url)
        base = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))
    return f"{base}?{urlencode(query)}"


def lesson_link(page_url: str | None, lesson: str, step, presenter=False, quiz=False) -> str:
    """A URL opening a lesson at a step (from 1): ?lesson=...&step=... and the viewer's presenter and quiz mode."""
    query = {"lesson": str(lesson), "step": str(whole_number(step, 1)), "presenter": "1" if presenter else "0"}
    if quiz:
        query["quiz"] = "1"
    base = "/"
    if page_url:
        parts = urlsplit(page_url)
        base = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))
    return f"{base}?{urlencode(query)}"


def sampling_in_link(settings: ViewSettings) -> bool:
    """Whether a link sets the sampling panel (the page then opens it: those settings are what the link shows)."""
    return any(getattr(settings, name) != TAB_SETTINGS[name][0] for name in SAMPLING_SETTINGS)


def sampling_settings(*values) -> dict:
    """The sampling panel's values as the browser sent them (unpreprocessed: numbers, None from an emptied box, or
    anything a script sends), in SAMPLING_SETTINGS order, as ViewSettings fields: each a finite number (whole
    where the setting is), else its default. Out-of-range numbers stay: opening the link says so."""
    fields = {}
    for name, value in zip(SAMPLING_SETTINGS, values):
        default = TAB_SETTINGS[name][0]
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        finite = number == number and number not in (float("inf"), float("-inf"))
        fields[name] = (int(number) if isinstance(default, int) else number) if finite else default
    return fields
