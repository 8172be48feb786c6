"""Training the tiny presets end to end on the fixture corpus: the files written,
loading them back, and resuming."""
import csv
import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from model import api
from model.config import TransformerConfig
from model.transformer import build
from training import batches, tasks, train
from training.presets import PRESETS
from tests import tolerances

TINY = ("tiny-lm", "tiny-mlm", "tiny-dates")


@pytest.mark.parametrize("name", TINY)
def test_training_writes_weights_config_metrics_loss_and_snapshots(tiny_trained_models, name):
    out = tiny_trained_models[name]
    for file in ("model.safetensors", "config.json", "metrics.json", "loss.csv"):
        assert (out / file).is_file(), file
    assert sorted(p.name for p in (out / "snapshots").glob("step_*.safetensors")) == ["step_000006.safetensors"]
    snapshot = load_file(str(out / "snapshots" / "step_000006.safetensors"))
    assert {t.dtype for t in snapshot.values()} == {torch.int8, torch.float16}, "snapshots: int8 matrices, the rest half"
    assert all(t.dtype == torch.int8 for k, t in snapshot.items() if t.ndim == 2 and not k.endswith(".int8_scale"))

    config = TransformerConfig.load(out / "config.json")
    assert config.arch == PRESETS[name].model["arch"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["preset"] == name and metrics["steps"] == 6
    assert metrics["final"]["step"] == 6
    assert np.isfinite(metrics["final"]["val_loss"]) and np.isfinite(metrics["final"]["train_loss"])
    assert metrics["snapshots"] == [metrics["final"]]
    with open(out / "loss.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [3, 6]  # eval_every=3
    columns = {"step", "train_loss", "val_loss", "lr", "tokens_per_s"}
    assert set(rows[0]) == (columns if name == "tiny-dates" else columns | {"window"})
    if name != "tiny-dates":
        assert [int(r["window"]) for r in rows] == [32, 32], "the losses say which windows they were measured on"


@pytest.mark.parametrize("name", TINY)
def test_a_trained_model_loads_and_traces(tiny_trained_models, name):
    loaded = api.load_from(tiny_trained_models[name], device="cpu")
    assert loaded.config.vocab_size == loaded.tokenizer.get_vocab_size()
    text = "19 March 2024" if name == "tiny-dates" else "the quiet cat holds the lamp"
    trace = loaded.trace(text)
    kinds = {"tiny-dates": {"encoder", "decoder", "cross"}}.get(name, {"self"})
    assert set(trace.attention) == kinds
    for att in trace.attention.values():
        np.testing.assert_allclose(att.probs.sum(-1), 1.0, atol=tolerances.weights_sum(att.probs.shape[-1]),
                                   rtol=0)  # float32 softmax rows


def test_text_models_share_one_tokenizer_one_folder_up(tiny_trained_models):
    root = tiny_trained_models["tiny-lm"].parent
    assert (root / "tokenizer.json").is_file()
    assert api.tokenizer_path(tiny_trained_models["tiny-lm"]) == root / "tokenizer.json"
    assert api.tokenizer_path(tiny_trained_models["tiny-dates"]) == tiny_trained_models["tiny-dates"] / "tokenizer.json"


def test_training_is_reproducible_with_the_same_seed(tiny_trained_models, fixture_wordnet_dir, empty_fortunes_dir,
                                                    tmp_path):
    root = tiny_trained_models["tiny-lm"].parent
    train.train("tiny-mlm", out=tmp_path / "again", tokenizer_path=root / "tokenizer.json",
                wordnet_dir=fixture_wordnet_dir, fortunes_dir=empty_fortunes_dir, runs=tmp_path / "runs")
    first = load_file(str(tiny_trained_models["tiny-mlm"] / "model.safetensors"))
    again = load_file(str(tmp_path / "again" / "model.safetensors"))
    assert first.keys() == again.keys()
    assert all(torch.equal(first[k], again[k]) for k in first)


@pytest.mark.parametrize("name", TINY)
def test_resume_after_three_steps_equals_six_uninterrupted_steps(tiny_trained_models, fixture_wordnet_dir,
                                                                 empty_fortunes_dir, tmp_path, name):
    root = tiny_trained_models[name].parent
    common = dict(out=tmp_path / "out", tokenizer_path=root / "tokenizer.json", wordnet_dir=fixture_wordnet_dir,
                  fortunes_dir=empty_fortunes_dir, runs=tmp_path / "runs")
    half = train.train(name, steps=3, **common)
    assert half["final"]["step"] == 3
    assert json.loads((tmp_path / "runs" / "state.json").read_text())["step"] == 3
    resumed = train.train(name, steps=6, resume=True, **common)
    assert resumed["final"]["step"] == 6
    assert [r["step"] for r in resumed["snapshots"]] == [6]

    uninterrupted = load_file(str(tiny_trained_models[name] / "model.safetensors"))
    continued = load_file(str(tmp_path / "out" / "model.safetensors"))
    assert uninterrupted.keys() == continued.keys()
    different = [k for k in uninterrupted if not torch.equal(uninterrupted[k], continued[k])]
    assert different == [], f"resumed weights differ from an uninterrupted run in {different}"
    # the loss history is continued, not restarted
    with open(tmp_path / "out" / "loss.csv") as f:
        assert [int(r["step"]) for r in csv.DictReader(f)] == [3, 6]


def test_resume_without_saved_state_starts_from_zero(tmp_path):
    metrics = train.train("tiny-dates", out=tmp_path / "out", steps=2, resume=True, runs=tmp_path / "runs")
    assert metrics["final"]["step"] == 2
    assert json.loads((tmp_path / "runs" / "state.json").read_text())["step"] == 2


def test_resume_state_keeps_an_untied_output_layer(tmp_path):
    """save_resume once dropped 'to_vocab.weight' even when untied, so the output layer restarted from scratch."""
    torch.manual_seed(0)
    config = TransformerConfig(arch="decoder", vocab_size=20, max_len=8, d_model=8, n_heads=2, n_layers=1,
                               d_ff=16, tie_embeddings=False)
    from model.transformer import build

    class NoRng:
        def rng_state(self):
            return {}

        def set_rng_state(self, state):
            pass

    model = build(config)
    optimizer = torch.optim.AdamW(model.parameters())
    train.save_resume(tmp_path, model, optimizer, 1, [], NoRng())
    torch.manual_seed(1)
    fresh = build(config)
    train.load_resume(tmp_path, fresh, torch.optim.AdamW(fresh.parameters()), NoRng())
    for name, tensor in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[name], tensor), name


def test_snapshot_steps_are_log_spaced_from_ten_to_the_end():
    steps = train.snapshot_steps(2000, 6)
    assert steps[0] == 10 and steps[-1] == 2000 and len(steps) == 6
    ratios = np.diff(np.log(steps))
    np.testing.assert_allclose(ratios, np.log(200) / 5, atol=0.03)  # equal steps on a log scale, up to rounding
    assert train.snapshot_steps(6, 3) == [6]


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    settings = PRESETS["lm"].train
    lrs = [train.learning_rate(s, settings) for s in range(settings.steps + 1)]
    assert lrs[0] == pytest.approx(settings.lr / settings.warmup)
    assert lrs[settings.warmup - 1] == pytest.approx(settings.lr)
    assert max(lrs) == pytest.approx(settings.lr)
    assert lrs[-1] == pytest.approx(settings.lr / 10)
    assert all(a >= b for a, b in zip(lrs[settings.warmup:], lrs[settings.warmup + 1:]))


def test_next_token_batch_targets_are_inputs_shifted_by_one():
    stream = np.arange(100, dtype=np.int32)
    inputs, targets = batches.next_token_batch(stream, 4, 8, np.random.default_rng(0))
    assert inputs.shape == targets.shape == (4, 8) and inputs.dtype == torch.int64
    assert torch.equal(targets, inputs + 1)


def test_masked_batch_follows_berts_recipe():
    stream = np.random.default_rng(1).integers(5, 300, size=20_000).astype(np.int32)
    stream[::7] = 1  # specials are never picked
    inputs, targets = batches.masked_batch(stream, 64, 32, np.random.default_rng(0), mask_id=3, vocab_size=300,
                                           n_special=5)
    picked = targets != batches.IGNORE
    assert 0.10 < picked.float().mean() < 0.20
    assert (targets[picked] >= 5).all()
    # unpicked tokens are left as they were; targets hold the originals at picked positions
    originals, _ = batches.next_token_batch(stream, 64, 32, np.random.default_rng(0))
    assert torch.equal(inputs[~picked], originals[~picked])
    assert torch.equal(targets[picked], originals[picked])
    masked = (inputs == 3) & picked
    assert 0.7 < masked.sum() / picked.sum() < 0.9


def test_encode_dates_pads_and_shifts():
    from model import tokenizer as tok

    chars = tok.char_tokenizer("0123456789- abcdefghijklmnopqrstuvwxyz")
    ids = dict(bos=1, eos=2, pad=0)
    src, keep, dec_in, target = batches.encode_dates([("1 may 2020", "2020-05-01"), ("may 2", "2002-05-02")],
                                                     chars, **ids)
    assert src.shape == keep.shape == (2, 10)
    assert keep[1].tolist() == [True] * 5 + [False] * 5
    assert dec_in.shape == target.shape == (2, 11)
    assert dec_in[:, 0].tolist() == [1, 1]
    assert target[:, -1].tolist() == [2, 2]
    assert torch.equal(dec_in[:, 1:], target[:, :-1])


def test_masked_training_loss_projects_only_the_masked_positions_and_agrees_with_the_full_loss():
    config = TransformerConfig(arch="encoder", vocab_size=300, max_len=32, d_model=16, n_heads=2, n_layers=1, d_ff=32,
                               dropout=0.0)
    torch.manual_seed(0)
    model = build(config)
    stream = np.random.default_rng(1).integers(5, 300, size=5_000).astype(np.int32)
    batch = batches.masked_batch(stream, 8, 32, np.random.default_rng(0), mask_id=3, vocab_size=300, n_special=5)
    cheap, n = tasks.text_loss(model, batch, "cpu", masked=True)
    full, n_full = tasks.text_loss(model, batch, "cpu", masked=False)
    assert n == n_full == 8 * 32
    # the same cross-entropy over the same positions, their rows projected in another grouping (the masked rows alone)
    # and averaged in another order: within 3x the full loss's own float32 rounding, measured against its float64 run
    inputs, targets = batch
    logits = tolerances.in_float64(model)(inputs)[0]
    exact = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1),
                                              ignore_index=batches.IGNORE)
    ours, theirs, exact = (float(x.detach()) for x in (cheap, full, exact))
    assert ours == pytest.approx(theirs, abs=float(tolerances.beside_oracle(ours, theirs, exact)), rel=0)
    cheap.backward()  # and it trains: gradients reach the embeddings through the projection
    assert model.embed.token_embedding.weight.grad.abs().sum() > 0


def test_a_fresh_run_replaces_an_earlier_runs_snapshots(tmp_path):
    out = tmp_path / "out"
    (out / "snapshots").mkdir(parents=True)
    (out / "snapshots" / "step_999999.safetensors").write_bytes(b"from an earlier, longer run")
    train.train("tiny-dates", out=out, steps=2, runs=tmp_path / "runs")
    assert sorted(p.name for p in (out / "snapshots").glob("*.safetensors")) == ["step_000002.safetensors"]


def test_the_length_curriculum_keeps_tokens_per_step_and_ends_on_full_windows():
    from training.presets import TrainSettings

    settings = TrainSettings(steps=100, batch_size=16, seq_len=256, curriculum=((0.3, 16), (0.3, 64)))
    assert settings.window(0) == (16, 256)
    assert settings.window(29) == (16, 256)
    assert settings.window(30) == (64, 64)
    assert settings.window(59) == (64, 64)
    assert settings.window(60) == (256, 16)
    assert settings.window(99) == (256, 16)
    assert TrainSettings(steps=10, batch_size=4).window(0) == (256, 4), "no curriculum: full windows from the start"


def test_text_batches_follow_the_curriculum(fixture_wordnet_dir, empty_fortunes_dir, tmp_path):
    from training.presets import Preset, TrainSettings

    base = PRESETS["tiny-lm"]
    settings = TrainSettings(**{**base.train.__dict__, "curriculum": ((0.5, 8),)})
    task = tasks.TextTask(Preset(base.task, base.model, settings), tmp_path, tmp_path / "tok.json",
                          fixture_wordnet_dir, empty_fortunes_dir, seed=0)
    early, late = task.batch(0), task.batch(settings.steps - 1)
    assert early[0].shape == (2 * 32 // 8, 8)
    assert late[0].shape == (2, 32)
    assert task.window(0) == 8 and task.window(settings.steps - 1) == 32
    assert {b[0].shape for b in task.validation_batches(0)} == {(8, 8)}, "validated on the windows being trained"
    assert task.validation_batches(0) is task.validation_batches(1), "the same fixed batches every time"
