"""The class store (classroom/store.py) on a real SQLite file: keys, limits, one answer per student per step, and
a second store on the same file (a restarted server) finding everything as it was."""
from __future__ import annotations

import pytest

from classroom import store as store_module
from classroom.store import CLOSE_AFTER_S, MAX_OPEN, ClassError, ClassStore, Step

STEP = Step(lesson="causal-mask", step=2, tab="masking", settings={"model": "lm"}, question="Which layer?",
            choices=["layer 1", "layer 2", "layer 3"], model_answer="layer 2", after="It is layer 2.")


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(tmp_path, clock):
    opened = ClassStore(tmp_path / "classes.sqlite3", clock=clock)
    yield opened
    opened.close()


def driven(store):
    code, key = store.open()
    store.drive(code, key, STEP)
    return code, key


def test_the_key_is_128_random_bits_and_only_its_hash_is_kept(store, tmp_path):
    code, key = store.open()
    assert len(key) == 22 and code != key  # token_urlsafe(16): 16 bytes
    assert key not in (tmp_path / "classes.sqlite3").read_bytes().decode("latin-1")
    assert len({store.open()[1] for _ in range(5)}) == 5


@pytest.mark.parametrize("bad_key", ["", None, "wrong", 12, "x" * 10_000])
def test_a_wrong_or_missing_key_is_refused_and_changes_nothing(store, bad_key):
    code, key = driven(store)
    before = store.get(code)
    for move in (lambda: store.drive(code, bad_key, Step(lesson="other", step=1)), lambda: store.reveal(code, bad_key),
                 lambda: store.check_key(code, bad_key)):
        with pytest.raises(ClassError, match="not the lecturer's key.*Nothing was changed"):
            move()
    assert store.get(code) == before


def test_one_answer_per_student_per_step_and_the_last_counts(store):
    code, key = driven(store)
    assert store.answer(code, "s1", "layer 1") == 1
    assert store.answer(code, "s1", "layer 3") == 1  # the same student again
    assert store.answer(code, "s2", "layer 3") == 2
    state, answers, students, answered = store.tally(code)
    assert answers == {"layer 1": 0, "layer 2": 0, "layer 3": 2} and (students, answered) == (2, 2)
    store.drive(code, key, Step(**{**STEP.__dict__, "step": 3}))  # a new step: its own answers
    assert store.tally(code)[1:] == ({"layer 1": 0, "layer 2": 0, "layer 3": 0}, 2, 0)


@pytest.mark.parametrize("answer", ["layer 4", "", None, 2, ["layer 1"], "LAYER 1"])
def test_an_answer_that_is_not_one_of_the_choices_is_refused(store, answer):
    code, _ = driven(store)
    with pytest.raises(ClassError, match="not one of this question's answers"):
        store.answer(code, "s1", answer)
    assert store.tally(code)[3] == 0


def test_a_step_without_a_question_takes_no_answer(store):
    code, key = store.open()
    store.drive(code, key, Step(lesson="x", step=1))
    with pytest.raises(ClassError, match="asks the class nothing"):
        store.answer(code, "s1", "anything")


@pytest.mark.parametrize("student", ["", "a b", "x" * 65, None, 7, "<script>"])
def test_a_student_id_is_short_and_plain(store, student):
    code, _ = driven(store)
    with pytest.raises(ClassError, match="student id"):
        store.answer(code, student, "layer 1")


def test_the_code_is_read_as_typed_on_a_phone(store):
    code, _ = driven(store)
    assert store.answer(f"  {code.lower()} ", "s1", "layer 1") == 1
    with pytest.raises(ClassError, match="No class has the code"):
        store.get("ZZZZZZ")


def test_at_most_50_classes_are_open_and_a_class_closes_4_hours_after_the_last_move(store, clock):
    codes = [store.open() for _ in range(MAX_OPEN)]
    with pytest.raises(ClassError, match="50 classes are open"):
        store.open()
    clock.now += CLOSE_AFTER_S - 1
    store.drive(*codes[0], STEP)  # the lecturer's move keeps this one open
    clock.now += 1
    with pytest.raises(ClassError, match="has closed"):
        store.get(codes[1][0])
    assert store.open_codes() == [codes[0][0]]
    store.open()  # the closed ones no longer count
    clock.now += CLOSE_AFTER_S
    with pytest.raises(ClassError, match="has closed"):
        store.answer(codes[0][0], "s1", "layer 1")


def test_at_most_1000_students_a_class(store, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_STUDENTS", 3)
    code, _ = driven(store)
    for n in range(3):
        store.join(code, f"s{n}")
    assert store.join(code, "s0") == 3  # one already in is not counted twice
    with pytest.raises(ClassError, match="3 students, the most"):
        store.answer(code, "s3", "layer 1")


def test_answers_at_most_a_few_a_second_per_student(store, monkeypatch):
    code, _ = driven(store)
    now = [100.0]
    monkeypatch.setattr(store_module.time, "monotonic", lambda: now[0])
    for _ in range(store_module.ANSWER_BURST):
        store.answer(code, "s1", "layer 1")
    with pytest.raises(ClassError, match="Too many answers"):
        store.answer(code, "s1", "layer 2")
    store.answer(code, "s2", "layer 2")  # another student is not held back
    now[0] += 1.0
    assert store.answer(code, "s1", "layer 2") == 2
    assert store.tally(code)[1]["layer 2"] == 2


def test_reveal_then_a_new_step_hides_again_and_each_move_grows_the_version(store):
    code, key = driven(store)
    first = store.get(code)
    revealed = store.reveal(code, key)
    assert revealed.revealed and revealed.version == first.version + 1
    assert store.drive(code, key, STEP).revealed  # the same step again keeps its reveal
    moved = store.drive(code, key, Step(**{**STEP.__dict__, "step": 3}))
    assert not moved.revealed and moved.version == first.version + 3


def test_a_second_store_on_the_same_file_finds_the_class_its_step_and_answers(tmp_path, clock):
    path = tmp_path / "kept.sqlite3"
    first = ClassStore(path, clock=clock)
    code, key = first.open()
    first.drive(code, key, STEP)
    first.answer(code, "s1", "layer 2")
    first.close()
    second = ClassStore(path, clock=clock)
    state, answers, students, answered = second.tally(code)
    assert state.step == STEP and answers["layer 2"] == 1 and (students, answered) == (1, 1)
    second.reveal(code, key)  # the key still opens it
    second.close()


def test_a_pages_student_pass_names_its_student_after_a_restart_and_cannot_be_made_for_another(tmp_path, clock):
    path = tmp_path / "classes.sqlite3"
    first = ClassStore(path, clock=clock)
    code, key = driven(first)
    other, _ = driven(first)
    token = first.student_pass(code.lower(), "page-1")
    assert token.startswith(f"{code}.page-1.") and first.student_of(code, token) == "page-1"
    first.close()
    second = ClassStore(path, clock=clock)  # the server restarted: the same file, the same secret
    assert second.student_of(code, token) == "page-1"
    _, _, signature = token.split(".")
    for forged in (f"{code}.page-2.{signature}",  # another student's id under this page's signature
                   f"{other}.page-1.{signature}",  # this page's pass shown to another class
                   token[:-1] + ("0" if token[-1] != "0" else "1"), f"{code}.page-1", "", None, 7,
                   f"{code}.page 1.{signature}", token + "." + signature, "x" * 10_000):
        assert second.student_of(code, forged) is None, forged
    another = ClassStore(tmp_path / "another.sqlite3", clock=clock)  # another server's file: another secret
    assert another.student_of(code, token) is None
    another.close()
    assert token.split(".")[2] not in path.read_bytes().decode("latin-1")  # what is kept is the secret, not passes
    second.close()


def test_the_file_is_named_by_ATTENTION_CLASSES(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CLASSES", str(tmp_path / "here.sqlite3"))
    assert store_module.default_path() == tmp_path / "here.sqlite3"
    monkeypatch.delenv("ATTENTION_CLASSES")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert store_module.default_path() == tmp_path / "state" / "attention" / "classes.sqlite3"
