"""The live-training toy tasks: data and split, caps, a few seconds that learn "copy", runs that share
nothing, and the trainings manager (real worker processes: queue, busy, stop, a closed client)."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest
import torch

from tests import tolerances
from training import toy
from training.toy_session import AlreadyTraining, Busy, Trainings, Waiting
from model.inputs import InputError
from training.toy_tasks import (TASKS, SettingsError, ascii_codes, bracket_partners, evaluation_set, held_out,
                                training_batch)

torch.set_num_threads(1)


def answer(task: str, text: str) -> str:
    return bytes(TASKS[task].answer(ascii_codes([text]))[0]).decode("ascii")


# ---- tasks and data ------------------------------------------------------------------------------------
def test_each_task_answers_by_its_rule():
    assert answer("reverse", "abcdefghij") == "jihgfedcba"
    assert answer("sort", "hebjadgcif") == "abcdefghij"
    assert answer("copy", "hebjadgcif") == "hebjadgcif"
    assert answer("count", "abacabade") == "424142411"
    assert answer("brackets", "(()(.)).()") == "6215.30.98"
    assert bracket_partners("(()") is None and bracket_partners(")(") is None


@pytest.mark.parametrize("name", list(TASKS))
def test_samples_fit_the_task_and_the_example_is_an_input(name):
    task, rng = TASKS[name], np.random.default_rng(0)
    rows = training_batch(task, rng, 64)
    assert rows.shape == (64, task.length)
    assert set(bytes(rows.ravel()).decode()) <= set(task.inputs)
    assert set(bytes(task.answer(rows).ravel()).decode()) <= set(task.outputs)
    assert task.check(task.example) == task.example
    if name == "reverse":  # ten different letters: without positions the best guess is 1 in 9
        assert all(len(set(row)) == task.length for row in rows)


@pytest.mark.parametrize("name", list(TASKS))
def test_held_out_inputs_are_never_trained_on(name):
    task, rng = TASKS[name], np.random.default_rng(1)
    batch = training_batch(task, rng, 2000)
    assert not held_out(batch).any()
    held = evaluation_set(name)
    assert len(held) >= 100 and held_out(held).all()
    assert np.array_equal(held, evaluation_set.__wrapped__(name)), "the held-out set must be the same every run"
    trained = {bytes(r) for r in batch}
    assert not trained & {bytes(r) for r in held}


def test_the_split_keeps_about_a_tenth():
    rows = TASKS["copy"].sample(np.random.default_rng(2), 20_000)
    assert 0.08 < held_out(rows).mean() < 0.12


@pytest.mark.parametrize("text,message", [("abc", "exactly 10"), ("abcdefghiz", "'z' cannot appear"),
                                          (42, "as text"), ("ABCDEFGHIJ ", None)])
def test_typed_input_is_checked(text, message):
    if message is None:
        assert TASKS["reverse"].check(text) == "abcdefghij"  # case and spaces do not matter
        return
    with pytest.raises(SettingsError, match=message):
        TASKS["reverse"].check(text)


# ---- caps ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field,value,message", [
    ("seconds", 61, "seconds must be from 1 to 60"), ("seconds", 0, "from 1 to 60"), ("seconds", float("nan"), "number"),
    ("seconds", "30", "number"), ("layers", 5, "layers must be from 1 to 4"), ("layers", 1.5, "whole number"),
    ("heads", 3, "one of (1, 2, 4)"), ("width", 48, "one of (16, 32, 64, 128)"), ("width", 4096, "from 16 to 128"),
    ("positions", "yes", "true or false"), ("wide", 1, "true or false"), ("task", "fly", "task must be one of"),
    ("seed", -1, "seed"),
])
def test_settings_out_of_bounds_say_what_is_allowed(field, value, message):
    with pytest.raises(SettingsError) as info:
        toy.ToySettings(**{field: value})
    assert message in str(info.value)
    assert isinstance(info.value, InputError)  # the page answers it as any bad input (ui.page.context)


def test_the_step_cap_holds_whatever_is_asked(monkeypatch):
    monkeypatch.setattr(toy, "MAX_STEPS", 3)
    *_, (last,) = toy.train([toy.Trainer(toy.ToySettings(task="copy", seconds=60))], max_steps=10**9, every=10.0)
    assert last.step == 3 and last.reason == "steps"


# ---- training ------------------------------------------------------------------------------------------
def test_a_hundred_steps_learn_copy():
    """Bounded by steps, not seconds (which the time budget leaves far from binding): the same on any machine."""
    snapshots = [s for (s,) in toy.train([toy.Trainer(toy.ToySettings(task="copy", seconds=60))], max_steps=100)]
    first, last = snapshots[0], snapshots[-1]
    assert first.step == 0 and not first.done and first.weights is None
    assert last.done and last.reason in ("steps", "learned") and last.weights
    assert last.accuracy >= 0.95, f"copy should be learned in 100 steps, got {last.accuracy:.1%} after {last.step} steps"
    steps = [s.step for s in snapshots]
    assert steps == sorted(steps)
    attention = last.attention
    assert attention.shape == (2, 2, 10, 10)
    np.testing.assert_allclose(attention.sum(-1), 1.0, atol=tolerances.weights_sum(10), rtol=0)  # float32 rows
    model = toy.TrainedToy(last.settings, last.weights)
    assert model.predict("hebjadgcif").output == "hebjadgcif"
    assert model.predict("tsrqponmlk").right == [True] * 10


def test_stop_ends_the_run_with_what_it_learned():
    calls = iter([False, False, True])
    *_, (last,) = toy.train([toy.Trainer(toy.ToySettings(task="reverse", seconds=30))], stop=lambda: next(calls))
    assert last.done and last.reason == "stopped" and last.step == 2 and last.weights


def test_two_runs_side_by_side_share_nothing():
    """A run trained beside another ends with exactly the weights it has when trained alone."""
    alone = toy.Trainer(toy.ToySettings(task="copy", seed=3))
    *_, (alone_last,) = toy.train([alone], max_steps=25, every=0.0)
    copy, reverse = toy.Trainer(toy.ToySettings(task="copy", seed=3)), toy.Trainer(toy.ToySettings(task="reverse"))
    *_, (copy_last, reverse_last) = toy.train([copy, reverse], max_steps=25, every=0.0)
    assert copy_last.weights == alone_last.weights
    assert copy_last.settings["task"] == "copy" and reverse_last.settings["task"] == "reverse"
    assert reverse_last.weights != copy_last.weights


def test_the_same_settings_in_two_threads_train_the_same_model():
    results = {}

    def run(name):
        *_, (last,) = toy.train([toy.Trainer(toy.ToySettings(task="sort", seed=5))], max_steps=20, every=0.0)
        results[name] = last.weights

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["a"] == results["b"]


# ---- the trainings manager: real worker processes ---------------------------------------------------------
def drain(events, into: dict, key: str):
    for event in events:
        into.setdefault(key, []).append(event)


def test_two_visitors_train_at_once_each_in_their_own_process():
    """Each run, trained in a worker process while another trains beside it, ends with exactly the weights
    the same settings give when trained alone here: nothing leaks from one visitor's run into another's."""
    trainings, results = Trainings(limit=2), {}
    runs = {"ann": toy.ToySettings(task="copy", seconds=60, seed=1),
            "bob": toy.ToySettings(task="reverse", positions=False, seconds=60, seed=2)}
    threads = [threading.Thread(target=drain, args=(trainings.run(owner, [s], max_steps=30), results, owner))
               for owner, s in runs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for owner, settings in runs.items():
        last = [e[0] for e in results[owner] if not isinstance(e, Waiting)][-1]
        assert last.done and last.reason == "steps" and last.settings == settings.to_dict()
        *_, (alone,) = toy.train([toy.Trainer(settings)], max_steps=30, every=0.0)
        assert last.weights == alone.weights, f"{owner}'s run differs from the same run trained alone"
    assert trainings.counts() == (0, 0) and trainings.pids() == {}


def test_one_at_a_time_then_a_queue_then_busy():
    trainings = Trainings(limit=1, max_waiting=1)
    first = trainings.run("ann", [toy.ToySettings(task="copy", seconds=30)])
    assert not isinstance(next(first), Waiting)  # ann trains
    with pytest.raises(AlreadyTraining, match="one per visitor"):
        next(trainings.run("ann", [toy.ToySettings(task="copy")]))
    second = trainings.run("bob", [toy.ToySettings(task="copy", seconds=2)])
    place = next(second)
    assert isinstance(place, Waiting) and place.ahead == 0 and place.running == 1
    with pytest.raises(Busy, match="busy"):
        next(trainings.run("cyd", [toy.ToySettings(task="copy")]))
    assert trainings.stop("ann")
    assert [e for e in first][-1][0].reason == "stopped"  # ann keeps what was learned; bob's turn comes
    assert [e for e in second if not isinstance(e, Waiting)][-1][0].done
    assert trainings.counts() == (0, 0)


def test_a_closed_client_frees_its_slot_and_its_process():
    trainings = Trainings(limit=1)
    events = trainings.run("ann", [toy.ToySettings(task="reverse", seconds=60)])
    next(events)
    pid = trainings.pids()["ann"]
    events.close()  # what Gradio does when the browser goes away
    assert trainings.counts() == (0, 0) and trainings.pids() == {}
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    *_, (last,) = [e for e in trainings.run("bob", [toy.ToySettings(task="copy", seconds=1)])]
    assert last.done


def test_a_visitor_who_stops_while_queued_leaves_the_queue():
    trainings = Trainings(limit=1)
    first = trainings.run("ann", [toy.ToySettings(task="copy", seconds=30)])
    next(first)
    second = trainings.run("bob", [toy.ToySettings(task="copy", seconds=2)])
    assert isinstance(next(second), Waiting)
    trainings.stop("bob")
    assert [e for e in second if not isinstance(e, Waiting)] == []
    assert trainings.counts() == (1, 0)
    first.close()
