"""Training windows that reward copying, and the snapshots kept around the induction jump."""
import numpy as np

from training import batches
from training.train import jump_steps


def _repeated_span(row: np.ndarray) -> tuple[int, int, int] | None:
    """(first, second, length) of the longest span of 2+ tokens that occurs twice without overlapping."""
    best = None
    n = len(row)
    for length in range(n // 2, 1, -1):
        for a in range(n - 2 * length + 1):
            for b in range(a + length, n - length + 1):
                if (row[a : a + length] == row[b : b + length]).all():
                    return a, b, length
    return best


def test_every_window_gets_a_repeated_span_at_rate_one():
    stream = np.arange(10_000) + 10  # no token repeats in the plain stream
    gen = np.random.default_rng(0)
    inputs, targets = batches.next_token_batch_with_repeats(stream, 16, 32, gen, rate=1.0, random_share=0.0,
                                                            max_span=8, filler=stream)
    windows = np.concatenate([inputs.numpy(), targets.numpy()[:, -1:]], 1)
    for row in windows:
        found = _repeated_span(row)
        assert found is not None and 2 <= found[2] <= 8
    assert (targets.numpy() != batches.IGNORE).all()  # text copies: every target is still predicted


def test_random_spans_come_from_the_filler_and_their_first_copy_is_not_a_target():
    stream = np.arange(10_000) + 10
    filler = np.array([3, 4, 5, 6, 7, 8, 9])  # tokens the stream never holds
    gen = np.random.default_rng(1)
    inputs, targets = batches.next_token_batch_with_repeats(stream, 32, 16, gen, rate=1.0, random_share=1.0,
                                                            max_span=6, filler=filler)
    inputs, targets = inputs.numpy(), targets.numpy()
    windows = np.concatenate([inputs, targets[:, -1:]], 1)
    for row, target in zip(windows, targets):
        random_positions = np.flatnonzero(row < 10)
        assert random_positions.size >= 4  # two copies of at least 2 tokens
        ignored = np.flatnonzero(target == batches.IGNORE) + 1  # target i is token i + 1
        assert ignored.size and set(ignored.tolist()) <= set(random_positions.tolist())
        # the second copy is predicted: some random tokens are still targets
        assert (target[target != batches.IGNORE] < 10).any()


def test_rate_zero_changes_nothing_and_a_seed_gives_the_same_batch():
    stream = np.arange(5_000) + 10
    plain = batches.next_token_batch(stream, 4, 16, np.random.default_rng(3))
    none = batches.next_token_batch_with_repeats(stream, 4, 16, np.random.default_rng(3), rate=0.0, random_share=0.5,
                                                 max_span=8, filler=stream)
    assert all((a == b).all() for a, b in zip(plain, none))
    one = batches.next_token_batch_with_repeats(stream, 4, 16, np.random.default_rng(5), rate=0.5, random_share=0.5,
                                                max_span=8, filler=stream)
    two = batches.next_token_batch_with_repeats(stream, 4, 16, np.random.default_rng(5), rate=0.5, random_share=0.5,
                                                max_span=8, filler=stream)
    assert all((a == b).all() for a, b in zip(one, two))


def test_jump_snapshots_bracket_the_rise():
    scores = [0.03, 0.03, 0.04, 0.05, 0.2, 0.45, 0.6, 0.62, 0.63]
    probes = [{"step": 50 * (i + 1), "induction": s} for i, s in enumerate(scores)]
    chosen = jump_steps(probes, 4)
    assert chosen[0] == 200  # the last step before the rise
    assert 250 in chosen and chosen[-1] <= 350
    assert jump_steps(probes, 0) == [] and jump_steps(probes[:1], 3) == []


def test_repeat_phases_come_first_then_the_repeat_rate():
    from training.presets import PRESETS, TrainSettings

    settings = TrainSettings(steps=300, batch_size=2, repeat_phases=((1 / 3, 0.5),), repeat_rate=0.2)
    assert [settings.repeats(s) for s in (0, 99, 100, 299)] == [0.5, 0.5, 0.2, 0.2]
    assert TrainSettings(steps=10, batch_size=2).repeats(0) == 0.0
    lm = PRESETS["lm"].train
    assert lm.repeats(0) > lm.repeats(lm.steps - 1) > 0  # the shipped lm: many repeats first, a few after


def test_a_run_with_the_probe_records_the_induction_score_and_keeps_jump_snapshots(
        tmp_path, fixture_wordnet_dir, empty_fortunes_dir):
    import csv
    import json

    from training.train import train

    out = tmp_path / "lm"
    train("tiny-lm", out=out, tokenizer_path=tmp_path / "tokenizer.json", wordnet_dir=fixture_wordnet_dir,
          fortunes_dir=empty_fortunes_dir, runs=tmp_path / "runs", overrides=dict(
              repeat_rate=0.5, probe_every=2, jump_snapshots=2))
    metrics = json.loads((out / "metrics.json").read_text())
    assert [p["step"] for p in metrics["induction_probe"]] == [2, 4, 6]
    assert all(0 <= p["induction"] <= 1 for p in metrics["induction_probe"])
    assert (tmp_path / "runs" / "dense" / "step_000004.safetensors").is_file()
    for step in metrics["jump_snapshots"]:
        assert (out / "snapshots" / f"step_{step:06d}.safetensors").is_file()
    with open(out / "loss.csv") as f:
        assert all(row["induction"] for row in csv.DictReader(f))
