"""The followers' board (classroom/board.py): a wait ends when the class moves past it, woken from another thread;
and Once (classroom/once.py): a key computed once while every other caller waits for it."""
from __future__ import annotations

import asyncio
import threading

import pytest

from classroom.board import Board
from classroom.once import Once


def test_a_wait_returns_at_once_when_the_class_is_past_it_and_else_when_it_moves():
    board = Board()
    board.moved("ABC", 3)

    async def scenario():
        assert await board.wait("ABC", since=2, timeout=5) == 3
        waiters = [asyncio.ensure_future(board.wait("ABC", since=3, timeout=30)) for _ in range(300)]
        while board.waiting("ABC") < 300:
            await asyncio.sleep(0)
        mover = threading.Thread(target=board.moved, args=("ABC", 4))  # a Gradio worker thread's move
        mover.start()
        versions = await asyncio.gather(*waiters)
        mover.join()
        return versions

    assert asyncio.run(scenario()) == [4] * 300
    assert board.waiting("ABC") == 0


def test_a_wait_that_times_out_leaves_nothing_behind_and_an_older_version_wakes_no_one():
    board = Board()
    board.moved("ABC", 5)
    board.moved("ABC", 4)  # late news of an older move

    async def scenario():
        return await board.wait("ABC", since=5, timeout=0.05)

    assert asyncio.run(scenario()) == 5
    assert board.waiting("ABC") == 0 and board.version("ABC") == 5


def test_once_computes_a_key_once_while_the_others_wait():
    once, calls, started = Once(1 << 20), [], threading.Event()
    release = threading.Event()

    def make():
        calls.append(1)
        started.set()
        release.wait(10)
        return {"figure": [1, 2, 3]}

    results = []
    threads = [threading.Thread(target=lambda: results.append(once.get("step", make))) for _ in range(50)]
    threads[0].start()
    started.wait(10)
    for thread in threads[1:]:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(calls) == 1 and once.computed == 1 and len(results) == 50
    assert all(r is results[0] for r in results)
    assert once.get("other", lambda: None) is None and once.get("other", lambda: 1 / 0) is None  # None is kept


def test_once_hands_an_error_to_everyone_waiting_and_computes_again_next_time():
    once, release = Once(1 << 20), threading.Event()

    def fails():
        release.wait(10)
        raise ValueError("no")

    errors = []

    def call():
        try:
            once.get("k", fails)
        except ValueError as e:
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(5)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert len(errors) == 5 and once.computed == 0
    assert once.get("k", lambda: "fine") == "fine"


def test_once_is_bounded_by_bytes():
    once = Once(max_bytes=10_000)
    for n in range(100):
        once.get(n, lambda: "x" * 1000)
    assert once._kept.bytes <= 10_000
    with pytest.raises(ZeroDivisionError):
        once.get(0, lambda: 1 / 0)  # pushed out long ago: computed again
