"""Pretrained Hugging Face checkpoints run by this project's modules, checked against `transformers`
(the test-only oracle, eager attention): MiniLM as shipped, and tiny random BERT, RoBERTa, DistilBERT
and GPT-2 models saved in Hugging Face format. Bad folders get errors that name the fix."""
from __future__ import annotations

import copy
import dataclasses
import json
import shutil

import numpy as np
import pytest
import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from model import api, pretrained
from model.checkpoint import CheckpointError
from model.switches import Switches
from tests import tolerances
from tests.llama_checkpoints import byte_bpe

transformers = pytest.importorskip("transformers", reason="transformers is the test oracle (requirements-dev.txt)")

SENTENCES = [
    "The animal didn't cross the street because it was too tired.",
    "Walking and talking, she kept smiling!",
    "Mary gave roses to Susan",
    "ÜBER café 🍕 x",
    "the cat sat on the mat",
]


def _oracle(model, ids):
    with torch.no_grad():
        return model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)


def _compared(loaded: api.LoadedModel, oracle, text: str) -> dict[str, tuple]:
    """(ours, the oracle's float32, the oracle's float64) for `text`: every layer's attention probabilities, the
    vectors entering every layer, and the final hidden states (or logits)."""
    enc = loaded.encode(text)
    trace = loaded.trace(text)
    out, exact = _oracle(oracle, enc.ids), _oracle(tolerances.in_float64(oracle), enc.ids)
    att = trace.attention["self"]
    stack = lambda o, name, part=slice(None): np.stack([a[0].numpy() for a in getattr(o, name)[part]])
    parts = {"probs": (att.probs, stack(out, "attentions"), stack(exact, "attentions"))}
    features, _ = loaded.model.features(torch.tensor([enc.ids]))
    if loaded.config.norm == "post":  # BERT: hidden_states[i] enters layer i
        parts["inputs"] = (att.inputs, stack(out, "hidden_states", slice(-1)), stack(exact, "hidden_states", slice(-1)))
    if getattr(out, "logits", None) is not None:
        logits, _ = loaded.model(torch.tensor([enc.ids]))
        parts["logits"] = (logits[0].detach().numpy(), out.logits[0].numpy(), exact.logits[0].numpy())
    else:
        parts["last"] = (features[0].detach().numpy(), out.last_hidden_state[0].numpy(),
                         exact.last_hidden_state[0].numpy())
    return parts


def _assert_matches(loaded: api.LoadedModel, oracle, text: str, what="") -> set[str]:
    """Ours within what float32 rounding allows of transformers' (tests/tolerances.py beside_oracle: the oracle's
    own float32 rounding on this input, measured against its float64 run); the names of the parts compared."""
    parts = _compared(loaded, oracle, text)
    for name, (ours, oracle32, oracle64) in parts.items():
        tolerances.assert_within(ours, oracle32, tolerances.beside_oracle(ours, oracle32, oracle64),
                                 f"{what} {text!r}: {name}")
    return set(parts)


# ---- MiniLM, as shipped -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def minilm():
    return api.load("minilm", device="cpu")


@pytest.fixture(scope="module")
def minilm_oracle():
    return transformers.BertModel.from_pretrained(str(pretrained.minilm_folder()), attn_implementation="eager").eval()


def test_minilm_is_a_six_layer_twelve_head_bert(minilm):
    c = minilm.config
    assert (c.arch, c.n_layers, c.n_heads, c.d_model, c.norm) == ("encoder", 6, 12, 384, "post")
    assert (c.qkv_bias, c.embedding_norm, c.type_vocab_size, c.layer_norm_eps, c.lm_head) == (True, True, 2, 1e-12, "none")
    assert sum(p.numel() for p in minilm.model.parameters()) == pytest.approx(22.6e6, rel=0.01)  # 22 M without pooler
    assert not minilm.has_lm_head


@pytest.mark.parametrize("text", SENTENCES)
def test_minilm_matches_transformers(minilm, minilm_oracle, text):
    assert _assert_matches(minilm, minilm_oracle, text) == {"probs", "inputs", "last"}


def test_minilm_reads_exactly_what_was_typed(minilm):
    """Its tokenizer.json pads to 128 and truncates: the app must read only [CLS], the words, [SEP]."""
    enc = minilm.encode("Walking talking")
    assert enc.tokens == ["[CLS]", "walking", "talking", "[SEP]"] and not enc.truncated
    raw = Tokenizer.from_file(str(pretrained.minilm_folder() / "tokenizer.json"))
    assert len(raw.encode("Walking talking").ids) == 128  # what the file alone would do
    assert minilm.encode("tokenization").tokens[1:-1] == ["token", "##ization"]  # WordPiece pieces as written
    long = minilm.encode("word " * 600)
    assert long.truncated and len(long.ids) == 512 and long.tokens[0] == "[CLS]" and long.tokens[-1] == "[SEP]"
    assert minilm.trace("word " * 600).truncated


def test_typed_specials_are_text_not_tokens(minilm):
    assert minilm.encode("[CLS] [SEP]").tokens.count("[CLS]") == 1  # only the model's own


def test_minilm_has_no_word_predictions(minilm):
    assert minilm.trace("the cat sat").predictions == []
    with pytest.raises(ValueError, match="no.*language-model head|without one"):
        minilm.fill("the [MASK] sat")


def test_ablation_works_on_minilm(minilm):
    """The interventions' switches run on the pretrained model too: knocking out every head of layer 1
    changes what the later layers see; uniform weights are what the layer used."""
    text = "The animal didn't cross the street because it was too tired."
    plain = minilm.trace(text)
    off = minilm.trace(text, switches=Switches(ablate=frozenset(("self", 0, h) for h in range(12))))
    assert np.allclose(off.attention["self"].probs[0], plain.attention["self"].probs[0])
    assert np.abs(off.attention["self"].probs[1] - plain.attention["self"].probs[1]).max() > 1e-3
    uniform = minilm.trace(text, switches=Switches(ablate=frozenset({("self", 3, 1)}), method="uniform"))
    assert np.allclose(uniform.attention["self"].probs[3, 1], 1 / len(plain.tokens))
    shuffled = minilm.trace(text, switches=Switches(positions=False))
    assert not shuffled.position_embeddings.any()


def test_minilm_explained_in_one_pass_agrees_with_outcome_then_attribution(minilm):
    """The Interventions tab's explanations take the sentence vector from the gradient pass itself: the same
    output and the same gradient × input as the output's own pass followed by the gradient pass."""
    from experiments import interventions

    text = "The animal didn't cross the street because it was too tired."
    plain, grads = interventions.explained(minilm, text)
    reference = interventions.outcome(minilm, text)
    assert (plain.what, plain.text) == (reference.what, reference.text)
    # the gradient pass and the plain one run the same arithmetic through other kernels: within 3x the plain
    # passes' own float32 rounding, measured against minilm's float64 copy (outcome and attribution hand back
    # float32, so that rounding is in it too)
    double = dataclasses.replace(minilm, model=copy.deepcopy(minilm.model).double())
    exact = interventions.outcome(double, text)
    theirs = interventions.attribution(minilm, text, reference)
    for ours, their, best in [(plain.score, reference.score, exact.score), (plain.vector, reference.vector, exact.vector),
                              (grads, theirs, interventions.attribution(double, text, exact))]:
        tolerances.assert_within(ours, their, tolerances.beside_oracle(ours, their, best))


def test_minilm_it_animal_head(minilm):
    """The lecture example: a layer-4 head puts about 0.68 of "it"'s attention on "animal"."""
    trace = minilm.trace("The animal didn't cross the street because it was too tired.")
    probs = trace.attention["self"].probs
    weight = probs[:, :, trace.tokens.index("it"), trace.tokens.index("animal")]
    layer, head = np.unravel_index(weight.argmax(), weight.shape)
    assert (layer + 1, head + 1) == (4, 2) and weight.max() == pytest.approx(0.68, abs=0.01)


# ---- tiny random checkpoints of each family, saved in Hugging Face format ------------------------------
WORDS = ["the", "cat", "sat", "on", "mat", "walk", "##ing", "##s", "she", "kept", "smil", "a", ".", ",", "!"]


def _wordpiece() -> Tokenizer:
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    tokenizer = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens(vocab[:5])
    tokenizer.enable_padding(length=24)  # as all-MiniLM's file does: the loader must switch it off
    return tokenizer


def _hf_model(family: str, vocab_size: int):
    t = transformers
    small = dict(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=48, max_position_embeddings=64)
    made = {
        "bert": lambda: t.BertForMaskedLM(t.BertConfig(**small, type_vocab_size=2)),
        "bert-bare": lambda: t.BertModel(t.BertConfig(**small, hidden_act="gelu_new"), add_pooling_layer=True),
        "roberta": lambda: t.RobertaForMaskedLM(t.RobertaConfig(**{**small, "max_position_embeddings": 66},
                                                                pad_token_id=1, type_vocab_size=1)),
        "distilbert": lambda: t.DistilBertForMaskedLM(t.DistilBertConfig(
            vocab_size=vocab_size, dim=32, n_layers=2, n_heads=4, hidden_dim=48, max_position_embeddings=64)),
        "gpt2": lambda: t.GPT2LMHeadModel(t.GPT2Config(vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=4,
                                                       n_positions=64, bos_token_id=0, eos_token_id=0)),
    }[family]
    torch.manual_seed(0)
    model = made()
    with torch.no_grad():  # far from the tiny init, so every attention map is sharp and every weight matters
        for p in model.parameters():
            p.normal_(0.0, 0.4)
    return model.eval()


def _tokenizer(family: str) -> Tokenizer:
    if family.startswith("bert") or family == "distilbert":
        return _wordpiece()
    if family == "roberta":
        tokenizer = byte_bpe(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], SENTENCES)
        tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
        return tokenizer
    return byte_bpe(["<|endoftext|>"], SENTENCES)


FAMILIES = ["bert", "bert-bare", "roberta", "distilbert", "gpt2"]


def _save(family: str, folder):
    tokenizer = _tokenizer(family)
    tokenizer.save(str(folder / "tokenizer.json"))
    model = _hf_model(family, tokenizer.get_vocab_size())
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


@pytest.fixture(scope="module", params=FAMILIES)
def tiny_folder(request, tmp_path_factory):
    return request.param, _save(request.param, tmp_path_factory.mktemp(request.param))


def test_tiny_checkpoints_round_trip_and_match_transformers(tiny_folder):
    family, folder = tiny_folder
    loaded = api.load_from(folder, device="cpu")  # a Hugging Face folder is recognised by its config.json
    oracle = transformers.AutoModel if family == "bert-bare" else (
        transformers.AutoModelForCausalLM if family == "gpt2" else transformers.AutoModelForMaskedLM)
    oracle = oracle.from_pretrained(str(folder), attn_implementation="eager").eval()
    expected = {"bert": "encoder", "bert-bare": "encoder", "roberta": "encoder", "distilbert": "encoder",
                "gpt2": "decoder"}[family]
    assert loaded.arch == expected and loaded.config.norm == ("pre" if family == "gpt2" else "post")
    raw = Tokenizer.from_file(str(folder / "tokenizer.json"))
    raw.no_padding()
    for text in SENTENCES[1:3] + ["the cat sat on the mat"]:
        assert loaded.encode(text).ids == raw.encode(text).ids  # the tokenizer's own specials, no padding
        _assert_matches(loaded, oracle, text, family)
    if family == "gpt2":
        assert loaded.trace("the cat").attention["self"].causal
        assert loaded.config.activation == "gelu_tanh"
        assert len(loaded.next_tokens("the cat", k=3)) == 3 and isinstance(loaded.generate("the cat", 3), str)
    elif family != "bert-bare":
        mask = "[MASK]" if family != "roberta" else "<mask>"
        assert len(loaded.fill(f"the cat {mask} on the mat", k=2)) == 1
        assert loaded.fill("the cat <mask> on the [MASK]", k=2)[0]  # either marker reads as the model's mask
        assert loaded.has_lm_head and loaded.trace("the cat").predictions
    else:
        assert loaded.config.activation == "gelu_tanh" and not loaded.has_lm_head


def test_readable_wordpiece_and_byte_level_labels(tiny_folder):
    family, folder = tiny_folder
    loaded = api.load_from(folder, device="cpu")
    tokens = loaded.encode("walking cats").tokens
    if family in ("bert", "bert-bare", "distilbert"):
        assert tokens == ["[CLS]", "walk", "##ing", "cat", "##s", "[SEP]"]
    elif family == "roberta":
        assert tokens[0] == "<s>" and tokens[-1] == "</s>" and "".join(tokens[1:-1]) == "walking▁cats"
    else:
        assert "".join(tokens) == "walking▁cats"


# ---- bad folders: each gets an error that names the fix --------------------------------------------------
@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    return _save("bert", tmp_path_factory.mktemp("bert"))


@pytest.fixture()
def bert_copy(bert_folder, tmp_path):
    return shutil.copytree(bert_folder, tmp_path / "bert")


@pytest.mark.parametrize("missing", pretrained.FILES)
def test_missing_file_names_it_and_the_fix(bert_copy, missing):
    (bert_copy / missing).unlink()
    with pytest.raises(CheckpointError, match=f"missing {missing}.*hf download"):
        api.load_pretrained(bert_copy, device="cpu")


def test_pickled_weights_are_refused(bert_copy):
    (bert_copy / "model.safetensors").rename(bert_copy / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="pickled weights.*never loads.*safe_serialization"):
        api.load_pretrained(bert_copy, device="cpu")


def test_unsupported_architecture_names_the_families(bert_copy):
    config = json.loads((bert_copy / "config.json").read_text())
    (bert_copy / "config.json").write_text(json.dumps({**config, "model_type": "t5", "architectures": ["T5Model"]}))
    with pytest.raises(CheckpointError, match="t5 model.*BERT.*GPT-2.*Choose"):
        api.load_pretrained(bert_copy, device="cpu")


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other model", "tokenizer"])
def test_damaged_weights_are_a_clear_error(bert_copy, damage):
    weights = bert_copy / "model.safetensors"
    if damage == "garbage":
        weights.write_bytes(b"not a safetensors file at all")
    elif damage == "truncated":
        weights.write_bytes(weights.read_bytes()[:-100])
    elif damage == "tokenizer":
        (bert_copy / "tokenizer.json").write_text('{"version": "1.0", "model": ')
    else:
        config = json.loads((bert_copy / "config.json").read_text())
        (bert_copy / "config.json").write_text(json.dumps({**config, "hidden_size": 64}))
    with pytest.raises(CheckpointError, match="damaged|does not match config.json.*download"):
        api.load_pretrained(bert_copy, device="cpu")


def test_sha256_mismatch_is_never_a_silent_load(bert_copy):
    with pytest.raises(CheckpointError, match="sha256.*not the pinned.*Download it again.*--force-reinstall"):
        api.load_pretrained(bert_copy, device="cpu", expected_sha256="0" * 64)
    actual = pretrained.sha256(bert_copy / "model.safetensors")
    assert api.load_pretrained(bert_copy, device="cpu", expected_sha256=actual).arch == "encoder"


def test_a_hub_id_offline_is_a_clear_message_naming_it(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError, match="someone/some-bert.*HF_HUB_OFFLINE.*ATTENTION_MODELS"):
        api.load_pretrained("someone/some-bert", device="cpu")
    with pytest.raises(CheckpointError, match="does not exist.*ATTENTION_MODELS"):
        api.load_pretrained(str(tmp_path / "no" / "such" / "folder"), device="cpu")


def test_configured_models_come_from_the_setting():
    assert pretrained.configured("") == {}
    assert pretrained.configured("gpt2=/models/gpt2, /models/bert-base-uncased/ ,prajjwal1/bert-tiny") == {
        "gpt2": "/models/gpt2", "bert-base-uncased": "/models/bert-base-uncased/", "bert-tiny": "prajjwal1/bert-tiny"}
    with pytest.raises(ValueError, match="names no model"):
        pretrained.configured("name=")


def test_a_hub_id_downloads_only_the_three_files(monkeypatch, bert_folder, tmp_path):
    """Where the Hub is reachable, an id is fetched with huggingface_hub (stood in for here: no test may
    use the network) and loaded like a folder; a failed download names the id and the fix."""
    huggingface_hub = pytest.importorskip("huggingface_hub")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.chdir(tmp_path)
    asked = {}

    def fake_download(repo_id, allow_patterns=None, **_):
        asked.update(repo_id=repo_id, allow_patterns=allow_patterns)
        return str(bert_folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_download)
    loaded = api.load_pretrained("someone/tiny-bert", "tiny", device="cpu")
    assert asked == {"repo_id": "someone/tiny-bert", "allow_patterns": list(pretrained.FILES)}
    assert loaded.name == "tiny" and loaded.arch == "encoder"

    def unreachable(repo_id, **_):
        raise OSError("network is unreachable")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(CheckpointError, match="someone/tiny-bert could not be downloaded.*OSError.*hf download"):
        api.load_pretrained("someone/tiny-bert", device="cpu")


def test_minilm_at_its_full_length_matches_transformers(minilm, minilm_oracle):
    """The app reads minilm up to its own 512 tokens: at 500 and more the attention, the vectors entering
    every layer and the output still equal transformers' (the long-length case of the oracle test)."""
    from bench.sentences import sentence

    assert minilm.config.max_len == 512
    for n in (500, 512):
        text = sentence(minilm, n, seed=n)
        assert len(minilm.encode(text).ids) == n and not minilm.encode(text).truncated
        _assert_matches(minilm, minilm_oracle, text, f"{n} tokens")


def test_a_shorter_context_keeps_the_first_position_vectors(minilm, minilm_oracle):
    """A server may read fewer tokens than a model's context (ATTENTION_MAX_TOKENS): the loader keeps the
    first position vectors, and the forward pass is unchanged for inputs that fit."""
    short = api.load("minilm", device="cpu", context=16)
    assert short.config.max_len == 16 and short.model.embed.positions.embedding.weight.shape == (16, 384)
    assert np.array_equal(short.model.embed.positions.embedding.weight.detach().numpy(),
                          minilm.model.embed.positions.embedding.weight[:16].detach().numpy())
    _assert_matches(short, minilm_oracle, SENTENCES[0])
    long = short.encode("word " * 40)
    assert long.truncated and len(long.ids) == 16 and long.tokens[-1] == "[SEP]"
    assert api.load("minilm", device="cpu", context=10_000).config.max_len == 512  # never longer than its own


def test_an_untied_gpt2_head_stays_its_own(tmp_path):
    """A GPT-2 whose lm_head differs from its token embedding keeps both (never overwrites the embedding)."""
    folder = tmp_path / "gpt2-untied"
    folder.mkdir()
    tokenizer = _tokenizer("gpt2")
    tokenizer.save(str(folder / "tokenizer.json"))
    t = transformers
    model = t.GPT2LMHeadModel(t.GPT2Config(vocab_size=tokenizer.get_vocab_size(), n_embd=32, n_layer=1, n_head=4,
                                           n_positions=32, tie_word_embeddings=False, bos_token_id=0,
                                           eos_token_id=0)).eval()
    with torch.no_grad():
        model.lm_head.weight.normal_(0.0, 0.5)
    model.save_pretrained(str(folder), safe_serialization=True)
    loaded = api.load_from(folder, device="cpu")
    assert not loaded.config.tie_embeddings
    assert not torch.equal(loaded.model.to_vocab.weight, loaded.model.embed.token_embedding.weight)
    oracle = t.AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager").eval()
    _assert_matches(loaded, oracle, "the cat sat")
