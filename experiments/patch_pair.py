"""The pair causal tracing compares (experiments/patching.py): two prompts of the same token count, the answer
position, and the target and contrast tokens: a typed token read as exactly one token of the model, and the single
tokens that spell the same word, with a leading space or without, capitalised or not (" Paris" for "Paris"), so
that a refusal can name them and a typed token the run hardly gives can be set beside a likelier spelling.

    pair = prepare(lm, "Monday, Tuesday,", "Friday, Saturday,")   # target/contrast: each prompt's top token
    single_token(lm, " T")      # its id, or None when it is not one token
    spellings(lm, "t")          # the ids of "t", " t", "T", " T" that are one token each
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from model import tokenizer as tok

MAX_TOKENS = 48  # a pair longer than this is refused: the exact grid is layers × tokens forward passes


class PatchingError(ValueError):
    """Input causal tracing cannot use; the message says what to change."""


@dataclass
class Pair:
    """Two prompts of the same token count and the answer they are compared on.

    clean_ids, corrupted_ids   the token ids;  clean_tokens, corrupted_tokens  their readable labels
    position    the answer position (0-based): the last token, or a masked model's <mask>
    target, contrast   token ids; target_label, contrast_label their labels
    target_spellings, contrast_spellings   the single tokens spelling the same word (spellings)
    """

    clean_ids: list[int]
    corrupted_ids: list[int]
    clean_tokens: list[str]
    corrupted_tokens: list[str]
    position: int
    target: int
    contrast: int
    target_label: str
    contrast_label: str
    target_spellings: tuple[int, ...] = ()
    contrast_spellings: tuple[int, ...] = ()

    @property
    def changed(self) -> list[int]:
        """The positions where the two prompts differ (0-based)."""
        return [i for i, (a, b) in enumerate(zip(self.clean_ids, self.corrupted_ids)) if a != b]


def tokens_in_words(tokens: list[str]) -> str:
    return " | ".join(tokens)


def keep_tokens(loaded) -> tuple[str, ...]:
    return (tok.EOS,) if loaded.arch == "decoder" else ()


def check_model(loaded) -> None:
    """PatchingError unless the model predicts a token at some position (a causal lm, or a masked lm)."""
    if loaded.arch == "classifier":
        raise PatchingError(f"{loaded.name} names a category for the whole text, not a next token: there is no "
                            "target token whose logit a patch could restore. Choose lm or a GPT-2/Llama model.")
    if loaded.arch == "encoder-decoder":
        raise PatchingError(f"{loaded.name} writes a whole ISO date through an encoder and a decoder; causal "
                            "tracing here patches one stack's next-token prediction. Choose lm or mlm.")
    if getattr(loaded.model, "to_vocab", None) is None:
        raise PatchingError(f"{loaded.name} has no word-prediction head (it was published to turn a sentence into "
                            "one vector), so there is no token logit to restore. Choose lm, mlm or a GPT-2/Llama model.")


def answer_position(loaded, ids: list[int], which: str) -> int:
    """The last position (causal model), or the first <mask> (masked model)."""
    if loaded.arch == "decoder":
        return len(ids) - 1
    mask = loaded._template[2] if loaded.config.tokenizer == "template" else loaded.special(tok.MASK)
    where = [i for i, t in enumerate(ids) if t == mask]
    if not where:
        raise PatchingError(f"{loaded.name} is a masked model: put <mask> in the {which} prompt where the answer "
                            "goes, at the same place in both, e.g. 'The capital of France is <mask>.'")
    return where[0]


def token_id(loaded, text: str, what: str) -> int:
    """A target or contrast typed as text (" Paris") or as its label ("▁Paris", "ĠParis"): exactly one token, or
    PatchingError with its tokenisation and the single tokens that spell the same word."""
    if not isinstance(text, str) or not text.strip(" "):
        raise PatchingError(f"The {what} token is empty: type one token (with its leading space, e.g. ' Paris'), "
                            "or leave it out to use the prompt's own top next token.")
    known = single_token(loaded, text)
    if known is not None:
        return known
    ids = pieces(loaded, text)
    read = " | ".join(loaded.label(i) for i in ids) or "nothing"
    same = [typed(loaded, i) for i in spellings(loaded, text)]
    instead = (f"The single tokens that spell the same word: {', '.join(same)}; type one of them, or "
               if same else "No single token spells the same word (with a leading space or without, capitalised "
               "or not): choose another word, or ")
    raise PatchingError(f"The {what} {text!r} is not one token of {loaded.name}: it reads as {len(ids)} "
                        f"({read}). The measure compares two single tokens. {instead}leave it out to use the "
                        "prompt's own top next token.")


@torch.inference_mode()
def _top_token(loaded, ids: list[int], position: int) -> int:
    logits, _ = loaded.model(torch.tensor([ids], device=loaded.device))
    return int(loaded._no_specials(logits[0, position], keep=keep_tokens(loaded)).argmax())


def prepare(loaded, clean: str, corrupted: str, target: str | None = None, contrast: str | None = None) -> Pair:
    """The pair as the model reads it, or PatchingError saying what to change. target/contrast None or "":
    the clean and the corrupted prompt's own top next tokens."""
    check_model(loaded)
    encoded = {}
    for which, text in (("clean", clean), ("corrupted", corrupted)):
        if not isinstance(text, str) or not text.strip():
            raise PatchingError(f"The {which} prompt is empty: type two prompts that differ in one word, e.g. "
                                "'The Eiffel Tower is in the city of' and 'The Colosseum is in the city of'.")
        encoded[which] = loaded.encode(text)
    a, b = encoded["clean"], encoded["corrupted"]
    if len(a.ids) != len(b.ids):
        raise PatchingError(
            f"The prompts must have the same number of tokens, since a patch copies position i of one run into "
            f"position i of the other. The clean prompt is {len(a.ids)} tokens ({tokens_in_words(a.tokens)}); the "
            f"corrupted one is {len(b.ids)} ({tokens_in_words(b.tokens)}). Change a word for one of the same "
            "token count (a name for a name that splits the same way), or add or drop a word in one of them.")
    if len(a.ids) > MAX_TOKENS:
        raise PatchingError(f"The prompts are {len(a.ids)} tokens; causal tracing runs one forward pass per layer "
                            f"and token, so it takes at most {MAX_TOKENS}. Shorten both.")
    position = answer_position(loaded, a.ids, "clean")
    if answer_position(loaded, b.ids, "corrupted") != position:
        raise PatchingError("Put the <mask> at the same place in both prompts.")
    goal = token_id(loaded, target, "target") if target else _top_token(loaded, a.ids, position)
    other = token_id(loaded, contrast, "contrast") if contrast else _top_token(loaded, b.ids, position)
    if goal == other:
        raise PatchingError(
            f"The target and the contrast are the same token ({loaded.label(goal)!r}): "
            + ("both prompts predict it, so the corrupted prompt does not change the answer. Type a contrast "
               "token (the answer you expect from the corrupted prompt), or make the prompts differ more."
               if not (target or contrast) else "choose two different tokens."))
    return Pair(list(a.ids), list(b.ids), list(a.tokens), list(b.tokens), position, goal, other,
                loaded.label(goal), loaded.label(other),
                tuple(spellings(loaded, loaded.label(goal))),
                tuple(spellings(loaded, loaded.label(other))))


def _as_text(text: str) -> str:
    """A label's ▁ read as the space it stands for."""
    return text.replace(tok.SPACE_MARK, " ")


def pieces(loaded, text: str) -> list[int]:
    """The ids the model reads `text` as (a label's ▁ read as a space)."""
    return list(loaded.tokenizer.encode(_as_text(text), add_special_tokens=False).ids)


def single_token(loaded, text: str) -> int | None:
    """The id of `text` typed as text (" Paris") or as its label ("▁Paris", "ĠParis"), if it is exactly one token."""
    known = loaded.tokenizer.token_to_id(text)
    if known is not None:
        return known
    for spelling in dict.fromkeys((text, _as_text(text))):
        ids = loaded.tokenizer.encode(spelling, add_special_tokens=False).ids
        if len(ids) == 1:
            return ids[0]
    return None


def spellings(loaded, text: str) -> list[int]:
    """The single tokens that spell the same word as `text`: with a leading space or without, its first letter
    capitalised or not (the word as typed first). Each id once."""
    word = _as_text(text).strip()
    if not word:
        return []
    forms = (word, word[:1].upper() + word[1:], word[:1].lower() + word[1:])
    found = []
    for form in dict.fromkeys(f for base in forms for f in (" " + base, base)):
        ids = loaded.tokenizer.encode(form, add_special_tokens=False).ids
        if len(ids) == 1 and ids[0] not in found:
            found.append(ids[0])
    return found


def typed(loaded, token: int) -> str:
    """A token as a person types it into the tab: its label with ▁ as a space, quoted (' Paris')."""
    return repr(_as_text(loaded.label(token)))
