"""The view's settings in the URL: ?text=...&model=lm&layer=2&head=1&kind=self&presenter=1&tab=attention
plus the tabs' own settings when they differ from their defaults, each declared once beside its control as a
`Linked` (its URL name, default and range): temperature (T itself, Step by step), step (decoding step) and beam
(beam width, Encoder-decoder), training_step (Learning's snapshot by its training step; snapshot, its number, still
opens old links; absent = the trained model), seed (the Positions shuffle), the sampling panel's sample_temperature,
sample_top_k, sample_top_p, sample_seed and sample_tokens (Every head), Causal tracing's clean, corrupted, target and
contrast, Interventions' knockout ("L25 H5, L24 H1"), and Generation's generation_tokens, generation_mode,
generation_temperature, generation_top_k, generation_top_p and generation_seed;
quiz=1 opens the views in quiz mode (answers hidden until revealed). A lesson's link is ?lesson=<id>&step=<k>
(ui/lessons/player.py): it opens that step's settings.

Pure helpers (no Gradio): parse what a visitor's URL asks for, and write a link back. ui.page.page_link wires them to
the page (the controls a tab registers with ctx.link). Layer and head are 1-based, as the UI shows them.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from model.registry import MAX_CHARS, ModelRegistry
from ui.page.messages import shown

TRUE = {"1", "true", "yes", "on"}
# The settings every view has (the header's controls, the open tab, the modes), in a link's order
VIEW = ("text", "model", "layer", "head", "kind", "presenter", "tab")
MODES = ("quiz",)

# Every tab setting declared so far, by its URL name (a Linked adds itself when its tab module is imported)
DECLARED: dict[str, "Linked"] = {}


@dataclass(frozen=True)
class Linked:
    """A tab's setting that links keep, declared once beside its control: its URL parameter `name`, its
    `default` (a link leaves it out at its default; an int default makes it a whole number) and its range
    [low, high] (a link's value is clamped into it, and a note says so). A text setting (a str default: Causal
    tracing's prompts, the heads knocked out) keeps at most `high` characters, and with `choices` only one of
    them. The tab registers the control that shows it with ctx.link(setting, component)."""

    name: str
    default: float | int | str
    low: float | int
    high: float | int
    choices: tuple = ()  # a text setting's only values (empty: any text)

    def __post_init__(self):
        if self.name in VIEW + MODES or (self.name in DECLARED and DECLARED[self.name] != self):
            raise ValueError(f"the link setting {self.name!r} is declared twice: a URL name names one setting")
        if not self.text and not self.low <= self.default <= self.high:
            raise ValueError(f"{self.name}: its default {self.default} is outside [{self.low}, {self.high}]")
        DECLARED[self.name] = self

    @property
    def whole(self) -> bool:
        return isinstance(self.default, int)

    @property
    def text(self) -> bool:
        return isinstance(self.default, str)

    def _text(self, value, notes: list[str] | None = None) -> str:
        value = str(value if value is not None else "")[:int(self.high)]
        if self.choices and value not in self.choices:
            if notes is not None:
                notes.append(f"{self.name} {shown(value)} is not one of {', '.join(self.choices)}; "
                             f"showing {self.default}")
            return self.default
        return value

    def from_url(self, params: dict, notes: list[str]):
        """Its value in a URL's query, clamped into its range (a note says so); its default when absent or not
        a number."""
        if self.name not in params:
            return self.default
        if self.text:
            return self._text(params[self.name], notes)
        try:
            value = float(params[self.name])
        except (TypeError, ValueError):
            value = float("nan")
        if not _finite(value):
            notes.append(f"{self.name} {shown(params[self.name])} is not a number; showing {self.default}")
            return self.default
        value = int(value) if self.whole else value
        clamped = min(max(value, self.low), self.high)
        if clamped != value:
            notes.append(f"{self.name} {shown(params[self.name])} is out of range; showing {clamped:g}")
        return clamped

    def from_page(self, value):
        """A value as the browser sent it (unpreprocessed: a number, None from an emptied box, or anything a
        script sends): a finite number (whole where the setting is), else the default. Out-of-range numbers
        stay: opening the link says so. A text setting: the text (a list, as a multiple choice sends it, joined
        with ", ")."""
        if self.text:
            return self._text(", ".join(map(str, value)) if isinstance(value, (list, tuple)) else value)
        try:
            number = float(value)
        except (TypeError, ValueError):
            return self.default
        if not _finite(number):
            return self.default
        return int(number) if self.whole else number

    def written(self, value) -> str:
        """As a link writes it: a slider's 0.7000000000000001 as 0.7."""
        return str(value) if self.whole or self.text else f"{value:.3g}"


def _finite(value: float) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))


def every_setting() -> tuple[Linked, ...]:
    """Every tab's linked settings: a lesson checked without a page, or a link parsed without one, may name any.
    A tab module declares its settings when it is imported, and importing ui.tabs (or any one tab) imports every
    tab; this module, below the tabs, never imports them: whoever reads links imports the tabs first (app.py,
    ui/lessons)."""
    return tuple(DECLARED.values())


def declared(name: str) -> Linked:
    """The declaration of a tab setting, by its URL name (KeyError for no setting)."""
    if name not in DECLARED:
        raise KeyError(f"no tab declares a link setting {name!r}" + ("" if DECLARED else ": no tab is imported yet"))
    return DECLARED[name]


class ViewSettings:
    """What a link opens: the view's own settings (VIEW, the quiz mode) and the tab settings the link parser
    knew (`values`, by URL name; one it did not read is its declared default)."""

    def __init__(self, text: str, model: str, layer: int = 1, head: int = 1, kind: str = "self",
                 presenter: bool = False, tab: str = "attention", quiz: bool = False, **values):
        self.text, self.model, self.layer, self.head, self.kind = text, model, layer, head, kind
        self.presenter, self.tab, self.quiz = presenter, tab, quiz
        for name in values:
            declared(name)  # a misspelt name is an error, never a setting nobody reads
        self.values = dict(values)

    def __getattr__(self, name: str):
        if name.startswith("_") or name == "values":
            raise AttributeError(name)
        try:
            return self.values.get(name, declared(name).default)
        except KeyError:
            raise AttributeError(f"ViewSettings has no setting {name!r}") from None

    def as_dict(self, settings: tuple[Linked, ...] | None = None) -> dict:
        """Every setting by name: the view's own, then each of `settings` (default: every tab's)."""
        linked = every_setting() if settings is None else settings
        return {**{name: getattr(self, name) for name in VIEW}, **{s.name: getattr(self, s.name) for s in linked},
                "quiz": self.quiz}

    def __eq__(self, other) -> bool:
        return isinstance(other, ViewSettings) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"ViewSettings({self.as_dict(tuple(DECLARED[n] for n in self.values))})"


def setting_names(settings: tuple[Linked, ...] | None = None) -> tuple[str, ...]:
    """Every name a link (or a lesson's step) may set."""
    linked = every_setting() if settings is None else settings
    return VIEW + tuple(s.name for s in linked) + MODES


def whole_number(value, default: int = 1) -> int:
    """A number as sent (a slider's value, a link's text, anything through the API) as a whole number, or
    `default` when it is none (None, "x", NaN, inf)."""
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return default


def parse_query(params: dict, registry: ModelRegistry, defaults: ViewSettings, tabs: tuple[str, ...] = (),
                settings: tuple[Linked, ...] | None = None) -> tuple[ViewSettings, list[str]]:
    """Settings from URL query parameters, falling back to `defaults`; plus notes on what was ignored.
    settings: the tab settings to read (a page's: those its tabs registered; default every tab's).

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
    linked = every_setting() if settings is None else settings
    values = {s.name: s.from_url(params, notes) for s in linked}
    quiz = str(params.get("quiz", "0")).lower() in TRUE
    return ViewSettings(text, model, layer, head, kind, presenter, tab, quiz, **values), notes


def _base(page_url: str | None) -> str:
    if not page_url:
        return "/"
    parts = urlsplit(page_url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


def make_link(settings: ViewSettings, page_url: str | None = None) -> str:
    """A URL reopening this view: the page's address (without its old query) plus the settings (a tab
    setting at its default left out, an empty kind too: a model with one kind)."""
    query = {name: getattr(settings, name) for name in VIEW}
    query["presenter"] = "1" if settings.presenter else "0"
    if not settings.kind:
        query.pop("kind")
    for name, value in settings.values.items():
        setting = declared(name)
        if value != setting.default:
            query[name] = setting.written(value)
    if settings.quiz:
        query["quiz"] = "1"
    return f"{_base(page_url)}?{urlencode(query)}"


def lesson_link(page_url: str | None, lesson: str, step, presenter=False, quiz=False) -> str:
    """A URL opening a lesson at a step (from 1): ?lesson=...&step=... and the viewer's presenter and quiz mode."""
    query = {"lesson": str(lesson), "step": str(whole_number(step, 1)), "presenter": "1" if presenter else "0"}
    if quiz:
        query["quiz"] = "1"
    return f"{_base(page_url)}?{urlencode(query)}"
