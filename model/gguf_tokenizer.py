"""The tokenizer a GGUF file describes, rebuilt with Hugging Face `tokenizers`.

A GGUF has no tokenizer.json: llama.cpp keeps the vocabulary, the merges, each token's type and the special
tokens' ids as metadata (tokenizer.ggml.*), and names the rest: `tokenizer.ggml.model` the algorithm (gpt2:
GPT-2's byte-level BPE) and `tokenizer.ggml.pre` how text is split into words before the merges run (each
name is one of llama.cpp's regular expressions). This module rebuilds byte-level BPE exactly for the splits
it knows and refuses any other model or split by name: a tokenizer that is almost right would feed the model
ids it was never trained on, and every view would quietly show the wrong thing.
"""
from __future__ import annotations

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors

from model.checkpoint import CheckpointError
from model.tokenizer import _byte_table

CONTROL, USER_DEFINED = 3, 4  # llama.cpp's token types (tokenizer.ggml.token_type): <|endoftext|>, <think>

# llama.cpp's word splits (llama-vocab.cpp), as tokenizers' pre-tokenizers. GPT-2's own regular expression is
# ByteLevel's built-in one; "smollm" first cuts every digit apart (\p{N}), then splits as GPT-2 does, which is
# SmolLM2's published tokenizer.json (Digits(individual_digits=True), then ByteLevel).
_LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def _gpt2_split() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)


def _digits_then_gpt2() -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), _gpt2_split()])


def _regex_split(pattern: str):
    return lambda: pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


SPLITS = {  # tokenizer.ggml.pre -> its pre-tokenizer
    "gpt-2": _gpt2_split,
    "smollm": _digits_then_gpt2, "starcoder": _digits_then_gpt2,
    "llama-bpe": _regex_split(_LLAMA3_SPLIT), "llama3": _regex_split(_LLAMA3_SPLIT),
    "llama-v3": _regex_split(_LLAMA3_SPLIT),
    "qwen2": _regex_split(_QWEN2_SPLIT), "deepseek-r1-qwen": _regex_split(_QWEN2_SPLIT),
}
MODELS = ("gpt2",)
MODEL_NAMES = {"gpt2": "byte-level BPE", "llama": "SentencePiece", "t5": "Unigram", "bert": "WordPiece",
               "rwkv": "RWKV", "plamo2": "PLaMo-2"}


def _get(fields, key: str, default=None):
    field = fields.get(key)
    return default if field is None else field.contents()


def build(fields, label: str) -> Tokenizer:
    """The tokenizer described by a GGUF reader's metadata fields, or CheckpointError naming what it cannot
    rebuild. BOS is put before every text where tokenizer.ggml.add_bos_token says so (Llama 3's files; not
    SmolLM2's or Qwen2's). Special tokens typed as text are read as text, as model.tokenizer.load does."""
    model = _get(fields, "tokenizer.ggml.model")
    if model is None:
        raise CheckpointError(f"{label} holds no tokenizer (no tokenizer.ggml.model in its metadata). Convert the "
                              "model again with llama.cpp's convert_hf_to_gguf.py, which writes one.")
    if model not in MODELS:
        raise CheckpointError(
            f"{label} uses the tokenizer model {model!r} ({MODEL_NAMES.get(model, 'unknown')}); this demo rebuilds "
            "only byte-level BPE (tokenizer.ggml.model 'gpt2': SmolLM2, Llama 3, Qwen2, GPT-2). Choose a GGUF of "
            "such a model.")
    pre = _get(fields, "tokenizer.ggml.pre", "default")
    if pre not in SPLITS:
        raise CheckpointError(
            f"{label} splits words with llama.cpp's pre-tokenizer {pre!r}, which this demo cannot rebuild exactly "
            f"(it knows {', '.join(sorted(SPLITS))}). Choose a GGUF that uses one of those.")
    tokens = _get(fields, "tokenizer.ggml.tokens")
    merges = _get(fields, "tokenizer.ggml.merges")
    if not tokens or not merges:
        raise CheckpointError(f"{label} lacks its tokenizer's {'tokens' if not tokens else 'merges'} "
                              "(tokenizer.ggml.*). The file is damaged or incomplete: download or convert it again.")
    types = _get(fields, "tokenizer.ggml.token_type") or [1] * len(tokens)
    if len(types) != len(tokens):
        raise CheckpointError(f"{label} has {len(tokens)} tokens but {len(types)} token types. The file is damaged: "
                              "download or convert it again.")
    # Tokens are stored in GPT-2's byte alphabet (a space is Ġ); a token written otherwise (a control token with
    # other characters) is spelled out byte by byte, as transformers reads it.
    alphabet = _byte_table()
    spelling = {b: c for c, b in alphabet.items()}
    vocab = {}
    for index, token in enumerate(tokens):
        spelled = token if set(token) <= alphabet.keys() else "".join(spelling[b] for b in token.encode("utf-8"))
        vocab[spelled] = index  # a token stored twice keeps its last id, as transformers reads it
    pairs = [tuple(m.split(" ")) for m in merges]
    if any(len(p) != 2 for p in pairs):
        raise CheckpointError(f"{label} has a merge that is not two tokens. The file is damaged: download it again.")
    try:
        tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    except Exception as e:  # tokenizers raises a plain Exception for a merge of unknown tokens
        raise CheckpointError(f"{label}: its tokenizer cannot be rebuilt ({str(e)[:120]}). The file is damaged: "
                              "download it again.") from None
    tokenizer.pre_tokenizer = SPLITS[pre]()
    tokenizer.decoder = decoders.ByteLevel()
    # Control tokens (<|endoftext|>, <|im_start|>) are kept whole, as specials; user-defined ones (<think>) whole,
    # as text. A control token outside the byte alphabet is a mislabel (transformers skips it too).
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True)
                                  for t, kind in zip(tokens, types) if kind == CONTROL and set(t) <= alphabet.keys()])
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False)
                          for t, kind in zip(tokens, types) if kind == USER_DEFINED and t in vocab])
    bos = _get(fields, "tokenizer.ggml.bos_token_id")
    if _get(fields, "tokenizer.ggml.add_bos_token", False) and isinstance(bos, int) and 0 <= bos < len(tokens):
        token = tokenizer.id_to_token(bos)
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{token} $A", pair=f"{token} $A {token} $B:1", special_tokens=[(token, bos)])
    tokenizer.encode_special_tokens = True  # "<|im_start|>" typed by a person is text
    return tokenizer
