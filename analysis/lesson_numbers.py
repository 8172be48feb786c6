"""The numbers a lesson's text quotes (pure Python; read by analysis/lessons.py, filled by ui/lessons/library.py).

A measured number is written as a placeholder: a claim without its comparison, in braces,
`{weight L25 H5 from " to"#2 to " Mary"}`, which the app fills with the claim's value, so the text cannot drift from
the model. It is filled at the precision of the step's claim of the same measure (`>= 0.8`: one decimal, at least
two for a number below 1), or, with no such claim, two decimals (a whole number as it is); with no such claim the
placeholder is a claim of its own, measured and flagged like any other when it cannot be measured.

A literal decimal or percentage in the text is refused, and so is a literal whole number beside layer, head, step,
position or token (`layer 5`, `98 steps`, `L25 H5`) that is not one of the step's settings or of the numbers its
claims name: either could drift from the model unseen. Other numbers (a model's name, "ISO 8601") are text.
"""
from __future__ import annotations

import re

from analysis.lesson_vocabulary import Claim, LessonError, parse_claim

PLACEHOLDER = re.compile(r"\{([^{}\n]{3,200})\}")
DECIMAL = re.compile(r"(?<![\w.])(?:\d[\d,]*)?\.\d+%?|(?<![\w.])\d[\d,]*\s?%")
WORDS = r"(?:layers?|heads?|steps?|positions?|tokens?)"
BESIDE = re.compile(rf"\b{WORDS}\s+(\d[\d,]*)\b|\b(\d[\d,]*)\s+(?:training\s+)?{WORDS}\b|\bL(\d+) H(\d+)\b",
                    re.IGNORECASE)
# how a placeholder completes into a claim: a comparison, or the value a value claim names
ENDINGS = (" = 0", " is 0", " 0", " restores = 0", " by = 0")  # a placeholder may leave out "restores", "by"
VERBS = re.compile(r" (?:restores|by)$")
NUMERIC_PARTS = ("layer", "head", "in_layer", "at_layer", "after", "number", "source_n", "target_n", "token_n")


def placeholder_claim(text: str, source: str, line: int) -> Claim:
    """The claim a placeholder stands for (its parts without the comparison's number), or LessonError."""
    text = " ".join(text.split())
    for ending in ENDINGS:
        try:
            claim = parse_claim(text + ending, source, line)
        except LessonError:
            continue
        parts = {k: v for k, v in claim.parts.items() if k not in ("op", "number")}
        return Claim("{" + VERBS.sub("", text) + "}", claim.kind, {**parts, "placeholder": True}, line)
    raise LessonError(source, line, f"“{{{text[:60]}}}” is no measure the app can fill in.",
                      "write a claim without its comparison in braces, e.g. {weight L1 H4 from \"sat\" to \"cat\"} "
                      "or {snapshot step} (docs/lessons.md lists the claims).")


def measure_of(claim: Claim) -> str:
    """A claim's text without its comparison: what a placeholder of the same measure writes."""
    text = re.sub(r" is \d+$", "", claim.text) if claim.kind == "snapshot" else claim.text
    return VERBS.sub("", re.sub(r"\s*(?:>=|<=|=|>|<)\s?-?\d+(?:\.\d+)?(?:e-?\d+)?$", "", text))


def decimals(claim: Claim) -> int | None:
    """How many decimals a placeholder filled from this claim shows (None: a whole number, as it is)."""
    if claim.kind in ("snapshot", "lens"):
        return None
    if "number" not in claim.parts:
        return 2
    written = claim.parts["number"].split("e")[0]
    places = len(written.split(".")[1]) if "." in written else 0
    return max(places, 2) if "." in written or abs(float(claim.parts["number"])) < 1 else places


def formatted(value, places: int | None) -> str:
    """A value as the text shows it: whole numbers with thousands separated, others at `places` decimals."""
    if value is None:
        return "(not measured)"
    if isinstance(value, str):
        return value
    if places is None or float(value).is_integer() and not isinstance(value, float) or (places == 0 and float(value) == int(value)):
        return f"{int(round(float(value))):,}"
    return f"{float(value):,.{places}f}"


def allowed_numbers(settings: dict, defaults: dict, claims: list[Claim]) -> set[int]:
    """The whole numbers the text may write beside layer, head, step, position or token: those of the step's
    settings (as written) and those its claims name."""
    found = set()
    for value in [*settings.values(), *(v for k, v in defaults.items() if k not in ("text",))]:
        found |= {int(n) for n in re.findall(r"\d+", str(value))}
    for claim in claims:
        found |= {int(claim.parts[k]) for k in NUMERIC_PARTS if str(claim.parts.get(k, "")).isdigit()}
        found |= {int(n) for n in re.findall(r"\d+", claim.parts.get("heads", ""))}
    return found


def literal_numbers(text: str, allowed: set[int], source: str, line: int, skip: str = "") -> None:
    """LessonError for the first literal decimal, percentage, or unlisted whole number beside layer, head, step,
    position or token in `text` (placeholders, and `skip`, a question's machine-read answer, aside)."""
    plain = PLACEHOLDER.sub(" ", text.replace(skip, " ", 1) if skip else text)
    for number, offset in _numbers_at(plain):
        where = line + plain[:offset].count("\n")
        raise LessonError(source, where, f"the text writes the number “{number}”, which nothing checks.",
                          "write it as a placeholder the app fills from the model, a claim without its comparison in "
                          "braces: e.g. {weight L25 H5 from \" to\"#2 to \" Mary\"} (docs/lessons.md).")
    for match in BESIDE.finditer(plain):
        numbers = [g for g in match.groups() if g]
        if all(int(n.replace(",", "")) in allowed for n in numbers):
            continue
        where = line + plain[:match.start()].count("\n")
        raise LessonError(source, where, f"the text writes “{match.group(0)}”, a number none of the step's settings "
                          "or claims names.",
                          "set it on the step (layer: 5, head: 3, training_step: 98, ...), name it in a claim, or "
                          "write it as a placeholder, e.g. {snapshot step}.")


def _numbers_at(text: str):
    for match in DECIMAL.finditer(text):
        yield match.group(0), match.start()


def placeholders_in(text: str, source: str, line: int) -> list[tuple[str, Claim]]:
    """Each placeholder of the text: (its text as written, with braces; the claim it stands for)."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        where = line + text[:match.start()].count("\n")
        found.append((match.group(0), placeholder_claim(match.group(1), source, where)))
    return found
