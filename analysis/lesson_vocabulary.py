"""A lesson's claims and its answers, as written (pure Python: the format is read by analysis/lessons.py, the
claims measured by ui/lessons/claims.py; docs/lessons.md documents every form with an example the tests load).

A claim is one line. Quoted tokens are matched as the figures label them, without the tokenizer's marks
("▁", "Ġ", "##"); a leading space in quotes stands for the "▁" of a word that starts with one. "word"#2 is the
word's second occurrence. A head is written as the app writes it: L2 H3, or with its kind for dates (cross L2 H3).

A question says what kind of answer it takes (ANSWER_KINDS): its `Answer:` starts with that answer, written as a
choice is (`" Mary"`, `" to"#2`, `L25 H5`, `layer 29`), and one of the step's claims names the same answer
(ANSWERS: the claims whose measured value is a token, a head or a layer), so the app checks it on the model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

HEAD = r"(?:(?P<kind>self|encoder|decoder|cross) )?L(?P<layer>\d+) H(?P<head>\d+)"
TOKEN = r'"(?P<{0}>[^"]*)"(?:#(?P<{0}_n>\d+))?'
COMPARE = r"(?P<op>>=|<=|=|>|<) ?(?P<number>-?\d+(?:\.\d+)?(?:e-?\d+)?)"
STATS = ("previous", "next", "first", "special", "self", "induction", "entropy_bits", "spread", "mean_distance")
LABEL = r"(?P<label>previous-token|next-token|first-token sink|\S+ sink|self|induction|broad|mixed)"
HEAD_LIST = r"(?P<heads>L\d+ H\d+(?:, ?L\d+ H\d+)*)"
PARTS = ("residual", "attention", "mlp")

# kind -> (pattern, what it measures). ui/lessons/claims.py has one function per kind.
VOCABULARY = {
    "weight": (rf"weight {HEAD} from {TOKEN.format('source')} to {TOKEN.format('target')} {COMPARE}",
               'weight L2 H3 from "it" to "animal" >= 0.5: the weight the head in detail shows in that cell '
               "(on the Learning tab: at the step's snapshot)"),
    "top weight": (rf"weight {HEAD} from {TOKEN.format('source')} is highest on {TOKEN.format('target')}",
                   'weight L1 H4 from "sat" is highest on "cat": the column of the row\'s largest weight (a '
                   "token answer)"),
    "strongest head": (rf"strongest head in layer (?P<in_layer>\d+) from {TOKEN.format('source')} to "
                       rf"{TOKEN.format('target')} is {HEAD}",
                       'strongest head in layer 1 from "sat" to "cat" is L1 H4: the head of that layer that puts '
                       "the most weight in that cell (a head answer)"),
    "head type": (rf"head {HEAD} type {LABEL}",
                  "head L1 H4 type previous-token: the head's label in the head statistics table"),
    "head stat": (rf"head {HEAD} (?P<stat>{'|'.join(STATS)}) {COMPARE}",
                  "head L1 H4 previous >= 0.9: one column of the head statistics table"),
    "top next": (r'top next token is "(?P<token>[^"]*)"',
                 'top next token is " be": the first row of the predictions (a causal model)'),
    "top fill": (r'top fill is "(?P<token>[^"]*)"', 'top fill is " States": the first fill-in of the first <mask>'),
    "translation": (r'translation is "(?P<token>[^"]*)"', 'translation is "1999-03-03": the dates model\'s output'),
    "lens": (rf'lens first top "(?P<token>[^"]*)" after layer (?P<after>\d+)',
             'lens first top " be" after layer 2: the first layer after which the logit lens puts the token on top '
             "at the position the Lens tab asks about (the last token; a masked model's first <mask>; a layer "
             "answer)"),
    "shuffle": (rf"shuffle difference (?P<positions>with|without) positions {COMPARE}",
                "shuffle difference without positions <= 0.001: the largest change of a weight when the sentence is "
                "shuffled and put back (Positions, the step's head and seed)"),
    "rotary": (rf"(?P<scores>rotary|added) score spread {COMPARE}",
               "rotary score spread <= 0.001: how much the score of the same two tokens moved along a text varies "
               "(Positions' rotary table; added: with sinusoids added instead)"),
    "month": (rf"month {HEAD} {COMPARE}",
              "month cross L2 H3 >= 0.9: the cross-attention weight on the month while the month's digits are written"),
    "copying head": (r"copying induction head is L(?P<layer>\d+) H(?P<head>\d+)",
                     "copying induction head is L3 H1: the strongest induction head on Copying from context's "
                     "repeated random words (a head answer)"),
    "copying gain": (rf"copying gain {COMPARE}",
                     "copying gain >= 3: nats a word the model gains on the second copy (Copying from context)"),
    "knockout": (rf'knocking out {HEAD_LIST} changes p\("(?P<token>[^"]*)"\) by {COMPARE}',
                 'knocking out L3 H1 changes p(" walk") by < 0: the change in the probability of the next token '
                 "when those heads are knocked out, as Interventions measures it (a list: L3 H1, L2 H2)"),
    "patching": (rf'patching (?P<part>{"|".join(PARTS)}) at {TOKEN.format("token")} layer (?P<at_layer>\d+) '
                 rf"restores {COMPARE}",
                 'patching residual at "T" layer 1 restores >= 0.8: the share of the clean answer that copying '
                 "that activation from the clean run into the corrupted one brings back (Causal tracing's grid: "
                 "residual, attention or mlp)"),
    "patching head": (rf"patching heads {HEAD} restores {COMPARE}",
                      "patching heads L3 H4 restores >= 0.3: the same for one head's output at the last position "
                      "(Causal tracing's heads map)"),
    "patching top": (rf'patching (?P<part>{"|".join(PARTS)}) at layer (?P<at_layer>\d+) is highest at '
                     rf'{TOKEN.format("token")}',
                     'patching residual at layer 1 is highest at "T": the token whose cell restores most in that '
                     "layer's row of the grid (a token answer)"),
    "patching heads top": (rf"patching heads in layer (?P<in_layer>\d+) is highest at {HEAD}",
                           "patching heads in layer 3 is highest at L3 H4: the head of that layer whose patch restores "
                           "most (a head answer)"),
    "snapshot": (rf"snapshot step is (?P<number>\d+)",
                 "snapshot step is 450: the training step of the snapshot the step shows (Learning)"),
    "cache bytes": (rf"cache bytes per token {COMPARE}",
                    "cache bytes per token = 4096: the bytes the KV cache keeps for each token (Generation)"),
}
# the head finder's corpus scores (headfinder/, the Head finder tab): a head's rank by one score over the corpus
FINDER_SCORES = ("previous", "induction", "first", "self", "entropy_bits", "mean_distance")
VOCABULARY["corpus rank"] = (rf"head {HEAD} ranks (?P<rank>\d+) for (?P<score>{'|'.join(FINDER_SCORES)})",
                             "head L19 H7 ranks 1 for induction: the head's rank by that score over the head finder's "
                             "corpus (the Head finder tab, the step's model; 1 = the strongest)")
_COMPILED = {kind: re.compile(pattern) for kind, (pattern, _) in VOCABULARY.items()}

# the claims whose value is an answer: kind -> the answer kind its value is
ANSWERS = {"top weight": "token", "strongest head": "head", "copying head": "head", "lens": "layer",
           "patching top": "token", "patching heads top": "head"}
ANSWER_KINDS = ("token", "head", "layer")
ANSWER_FORMS = {  # how an Answer: paragraph starts, by the question's kind
    "token": re.compile(r'"(?P<token>[^"]*)"(?:#(?P<n>\d+))?'),
    "head": re.compile(r"(?:(?P<kind>self|encoder|decoder|cross) )?L(?P<layer>\d+) H(?P<head>\d+)"),
    "layer": re.compile(r"[Ll]ayer (?P<layer>\d+)"),
}
ANSWER_EXAMPLES = {"token": '" Mary"', "head": "L25 H5", "layer": "layer 29"}


class LessonError(ValueError):
    """A mistake in a lesson file: where it is and how to fix it."""

    def __init__(self, source: str, line: int | None, problem: str, fix: str):
        self.source, self.line, self.problem, self.fix = source, line, problem, fix
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {problem} Fix: {fix}")


@dataclass(frozen=True)
class Claim:
    """One claim as written (`text`), its kind (a VOCABULARY key), the parts its pattern named, and its line."""

    text: str
    kind: str
    parts: dict
    line: int


def parse_claim(text: str, source: str = "", line: int = 0) -> Claim:
    """One claim line (without its "- "), or LessonError listing the vocabulary."""
    text = " ".join(text.split())
    for kind, pattern in _COMPILED.items():
        match = pattern.fullmatch(text)
        if match:
            return Claim(text, kind, {k: v for k, v in match.groupdict().items() if v is not None}, line)
    forms = "; ".join(example.split(":")[0] for _, example in VOCABULARY.values())
    raise LessonError(source, line, f"“{text[:80]}” is not a claim this app can check.",
                      f"write it in one of these forms (docs/lessons.md lists them): {forms}.")


def token_choice(token: str, n: int = 1) -> str:
    """A token as a choice (and an answer) is written: in quotes, its nth occurrence after # from the second on."""
    return f'"{token}"' + (f"#{n}" if n > 1 else "")


MARKS = ("▁", "Ġ")  # how the tokenizers write a leading space


def plain_token(label: str) -> str:
    """A token's label as a claim writes it: a leading space for the tokenizer's mark, WordPiece's ## dropped."""
    label = str(label)
    for mark in MARKS:
        label = label.replace(mark, " ")
    return label[2:] if label.startswith("##") else label


def token_choices(labels) -> list[str]:
    """Each position's token as a choice: as the figures label it, in quotes, "word"#2 from its second occurrence on
    (the occurrence counted as claims count it: the same word, whatever its leading space)."""
    seen: dict[str, int] = {}
    choices = []
    for label in labels:
        word = plain_token(label)
        seen[word.strip()] = seen.get(word.strip(), 0) + 1
        choices.append(token_choice(word, seen[word.strip()]))
    return choices


def head_choice(layer, head, kind: str = "") -> str:
    return f"{kind + ' ' if kind and kind != 'self' else ''}L{int(layer)} H{int(head)}"


def layer_choice(layer) -> str:
    return f"layer {int(layer)}"


def same_answer(a, b) -> bool:
    """Whether two answers written as choices name the same one: a token's leading space aside (claims match
    tokens as words: "cat" is the figure's " cat")."""
    token = re.compile(r'"(?P<word>[^"]*)"(?P<n>#\d+)?')
    found = [token.fullmatch(str(x)) for x in (a, b)]
    if all(found):
        return [(m.group("word").strip(), m.group("n") or "") for m in found].count(
            (found[0].group("word").strip(), found[0].group("n") or "")) == 2
    return str(a) == str(b)


def answer_layer(choice: str) -> int | None:
    """The layer of a head choice ("L25 H5" -> 25; None for any other text)."""
    match = re.search(r"L(\d+) H\d+$", choice)
    return int(match.group(1)) if match else None


def answer_of(kind: str, text: str) -> tuple[str, str] | None:
    """(the answer as a choice, the rest of the text) when `text` starts with an answer of that kind."""
    match = ANSWER_FORMS[kind].match(text)
    if not match:
        return None
    parts = match.groupdict()
    choice = (token_choice(parts["token"], int(parts["n"] or 1)) if kind == "token"
              else head_choice(parts["layer"], parts["head"], parts["kind"] or "") if kind == "head"
              else layer_choice(parts["layer"]))
    return choice, text[match.end():].lstrip(" :.,;—-").strip()


def claimed_answer(claim: Claim) -> str | None:
    """The answer a claim names, written as a choice (None for a claim that names no answer)."""
    parts = claim.parts
    if claim.kind == "top weight":
        return token_choice(parts["target"], int(parts.get("target_n") or 1))
    if claim.kind == "patching top":
        return token_choice(parts["token"], int(parts.get("token_n") or 1))
    if claim.kind in ("strongest head", "copying head", "patching heads top"):
        return head_choice(parts["layer"], parts["head"], parts.get("kind", ""))
    if claim.kind == "lens":
        return layer_choice(parts["after"])
    return None
