"""Classes and their answers in SQLite (Python's sqlite3): a file ($ATTENTION_CLASSES, else classes.sqlite3 in the
user's state folder, docs/classes.md), so a server restart mid-lecture keeps each class, its step and its answers.

The limits are the server's, whatever a page or a script sends: at most MAX_OPEN classes open at once and
MAX_STUDENTS students a class; a class closes CLOSE_AFTER_S after the lecturer's last move; a student answers at
most ANSWERS_PER_S a second (a burst of ANSWER_BURST). The lecturer's key is random (128 bits); only its SHA-256 is
kept, compared in constant time. The code alone follows and answers, nothing else. No name is asked or kept: a
student is an id the page makes (or an API caller's word).

    store = ClassStore(path)
    code, key = store.open("causal-mask")
    store.drive(code, key, Step("causal-mask", 2, question="...", choices=["a", "b"], ...))
    store.answer(code, "s1", "a")       # the number of students who answered this step
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from model.inputs import InputError, shown

CLASSES_ENV = "ATTENTION_CLASSES"
MAX_OPEN = 50
MAX_STUDENTS = 1000
CLOSE_AFTER_S = 4 * 3600
ANSWERS_PER_S = 3.0
ANSWER_BURST = 5
CODE_LETTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I/L: read off a projector
CODE_LENGTH = 6
STUDENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, opened REAL NOT NULL, last_move REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, revealed INTEGER NOT NULL DEFAULT 0, step TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS students (code TEXT NOT NULL, student TEXT NOT NULL, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, lesson TEXT NOT NULL, step INTEGER NOT NULL, student TEXT NOT NULL, answer TEXT NOT NULL,
    PRIMARY KEY (code, lesson, step, student));
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ClassError(InputError):
    """A class request the server refuses (a wrong key, an unknown code, a limit): the message says why."""


def default_path() -> Path:
    """$ATTENTION_CLASSES, else classes.sqlite3 in $XDG_STATE_HOME/attention (~/.local/state/attention)."""
    if os.environ.get(CLASSES_ENV):
        return Path(os.environ[CLASSES_ENV])
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "attention" / "classes.sqlite3"


@dataclass
class Step:
    """What the lecturer's step shows the class, kept with the class (a restart needs no lesson to answer)."""

    lesson: str = ""
    step: int = 0  # from 1; 0: no step yet
    tab: str = ""
    settings: dict = field(default_factory=dict)  # the step's deep link settings
    question: str = ""
    choices: list = field(default_factory=list)  # what a student may answer; empty: the step asks nothing
    model_answer: str = ""  # the model's measured answer (one of the choices)
    after: str = ""  # the step's After: text, shown on Reveal


@dataclass
class ClassState:
    """One class as the store holds it."""

    code: str
    step: Step
    revealed: bool
    version: int  # grows with every move of the lecturer's (a drive, a reveal): what followers wait on
    last_move: float


def key_hash(key) -> str:
    return hashlib.sha256(str(key).encode("utf-8", "replace")).hexdigest()


class ClassStore:
    """Every class of this server process, in one SQLite file (thread-safe: one connection, one lock)."""

    def __init__(self, path: str | Path | None = None, clock=time.time):
        self.path = Path(path) if path is not None else default_path()
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives the process ending
        self._db.executescript(SCHEMA)
        # the key that signs a page's student id (student_pass): kept in the file, so a pass outlives a restart
        self._db.execute("INSERT OR IGNORE INTO secrets VALUES ('student_pass', ?)", (secrets.token_hex(32),))
        (secret,) = self._db.execute("SELECT value FROM secrets WHERE name='student_pass'").fetchone()
        self._secret = bytes.fromhex(secret)
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # (code, student) -> (tokens, when)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ---- the lecturer's moves ---------------------------------------------------------------------------------

    def open(self) -> tuple[str, str]:
        """A new class: (code, key). Refused when MAX_OPEN classes are open."""
        now = self.clock()
        with self._lock:
            self._forget_closed(now)
            (count,) = self._db.execute("SELECT COUNT(*) FROM classes").fetchone()
            if count >= MAX_OPEN:
                raise ClassError(f"{MAX_OPEN} classes are open on this server, the most it keeps: try again when "
                                 "one closes (4 hours after its lecturer's last move).")
            key = secrets.token_urlsafe(16)  # 128 random bits
            while True:
                code = "".join(secrets.choice(CODE_LETTERS) for _ in range(CODE_LENGTH))
                if not self._db.execute("SELECT 1 FROM classes WHERE code=?", (code,)).fetchone():
                    break
            self._db.execute("INSERT INTO classes (code, key_hash, opened, last_move, step) VALUES (?,?,?,?,?)",
                             (code, key_hash(key), now, now, json.dumps(asdict(Step()))))
        return code, key

    def drive(self, code, key, step: Step) -> ClassState:
        """The class moves to `step` (its answers hidden until revealed; the same step again keeps its reveal)."""
        with self._lock:
            state = self._lecturer(code, key)
            same = (state.step.lesson, state.step.step) == (step.lesson, step.step)
            self._db.execute("UPDATE classes SET step=?, revealed=?, version=version+1, last_move=? WHERE code=?",
                             (json.dumps(asdict(step)), int(same and state.revealed), self.clock(), state.code))
            return self._open_class(state.code)

    def reveal(self, code, key) -> ClassState:
        """The class's answers shown to everyone following."""
        with self._lock:
            state = self._lecturer(code, key)
            self._db.execute("UPDATE classes SET revealed=1, version=version+1, last_move=? WHERE code=?",
                             (self.clock(), state.code))
            return self._open_class(state.code)

    def check_key(self, code, key) -> ClassState:
        """The class, if `key` is its lecturer's; else ClassError (nothing changes)."""
        with self._lock:
            return self._lecturer(code, key)

    # ---- what the code alone does -----------------------------------------------------------------------------

    def get(self, code) -> ClassState:
        with self._lock:
            return self._open_class(code)

    def join(self, code, student) -> int:
        """Count `student` in the class (once); the number of students. Refused past MAX_STUDENTS."""
        student = check_student(student)
        with self._lock:
            state = self._open_class(code)
            self._join(state.code, student)
            return self._count("SELECT COUNT(*) FROM students WHERE code=?", state.code)

    def answer(self, code, student, answer) -> int:
        """`student`'s answer to the class's step (the last one counts): the number who answered it. Refused when
        the step asks nothing, the answer is not one of its choices, or the student answers too fast."""
        student = check_student(student)
        with self._lock:
            state = self._open_class(code)
            step = state.step
            if not step.choices:
                raise ClassError("This step asks the class nothing: wait for the lecturer's question.")
            if not isinstance(answer, str) or answer not in step.choices:
                raise ClassError(f"{shown(answer)} is not one of this question's answers: "
                                 f"choose one of {', '.join(step.choices[:12])}{' …' if len(step.choices) > 12 else ''}.")
            self._throttle(state.code, student)
            self._join(state.code, student)
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?,?,?,?,?)",
                             (state.code, step.lesson, step.step, student, answer))
            return self._count("SELECT COUNT(*) FROM answers WHERE code=? AND lesson=? AND step=?",
                               state.code, step.lesson, step.step)

    def answer_of(self, code, student) -> str | None:
        """`student`'s answer to the class's step now, or None (a page that answered before its view caught up
        shows that answer as its own)."""
        with self._lock:
            state = self._open_class(code)
            row = self._db.execute("SELECT answer FROM answers WHERE code=? AND lesson=? AND step=? AND student=?",
                                   (state.code, state.step.lesson, state.step.step, str(student))).fetchone()
        return row[0] if row else None

    def tally(self, code) -> tuple[ClassState, dict[str, int], int, int]:
        """(the class, {choice: answers} in the choices' order, students, answered) for its step."""
        with self._lock:
            state = self._open_class(code)
            step = state.step
            rows = self._db.execute("SELECT answer, COUNT(*) FROM answers WHERE code=? AND lesson=? AND step=? "
                                    "GROUP BY answer", (state.code, step.lesson, step.step)).fetchall()
            counts = dict(rows)
            students = self._count("SELECT COUNT(*) FROM students WHERE code=?", state.code)
        answers = {choice: int(counts.get(choice, 0)) for choice in step.choices}
        return state, answers, students, sum(answers.values())

    def student_pass(self, code, student) -> str:
        """A page's pass for `student` in the class `code`: "CODE.student.signature" (HMAC-SHA256 with this
        database's secret), which the page keeps and shows again after a restart (student_of), so one page stays
        one student; a page cannot make a pass for another's id."""
        student = check_student(student)
        name = str(code).strip().upper()
        return f"{name}.{student}.{self._signature(name, student)}"

    def student_of(self, code, token) -> str | None:
        """The student id a pass from student_pass names, if the pass is this database's for the class `code`;
        else None (a forged, altered or other class's pass)."""
        if not isinstance(token, str) or len(token) > 200 or token.count(".") != 2:
            return None
        name, student, signature = token.split(".")
        if name != str(code).strip().upper() or not STUDENT_ID.fullmatch(student):
            return None
        return student if hmac.compare_digest(signature.encode(), self._signature(name, student).encode()) else None

    def _signature(self, code: str, student: str) -> str:
        return hmac.new(self._secret, f"{code}:{student}".encode(), hashlib.sha256).hexdigest()[:32]

    def open_codes(self) -> list[str]:
        with self._lock:
            self._forget_closed(self.clock())
            return [code for (code,) in self._db.execute("SELECT code FROM classes")]

    # ---- inside the lock ------------------------------------------------------------------------------------------

    def _open_class(self, code) -> ClassState:
        name = str(code).strip().upper() if isinstance(code, str) else ""
        row = self._db.execute("SELECT code, step, revealed, version, last_move FROM classes WHERE code=?",
                               (name,)).fetchone() if name else None
        if row is None:
            raise ClassError(f"No class has the code {shown(code, 20)}: check the code on the projector.")
        state = ClassState(row[0], Step(**json.loads(row[1])), bool(row[2]), int(row[3]), float(row[4]))
        if self.clock() - state.last_move >= CLOSE_AFTER_S:
            raise ClassError(f"The class {state.code} has closed: 4 hours passed since its lecturer's last move.")
        return state

    def _lecturer(self, code, key) -> ClassState:
        state = self._open_class(code)
        (stored,) = self._db.execute("SELECT key_hash FROM classes WHERE code=?", (state.code,)).fetchone()
        given = key_hash(key) if isinstance(key, str) and key else ""
        if not hmac.compare_digest(given.encode(), stored.encode()):
            raise ClassError(f"That is not the lecturer's key of the class {state.code}: only its lecturer moves "
                             "it (the key /class_open gave). Nothing was changed.")
        return state

    def _join(self, code: str, student: str) -> None:
        if self._db.execute("SELECT 1 FROM students WHERE code=? AND student=?", (code, student)).fetchone():
            return
        if self._count("SELECT COUNT(*) FROM students WHERE code=?", code) >= MAX_STUDENTS:
            raise ClassError(f"The class {code} has {MAX_STUDENTS} students, the most a class takes.")
        self._db.execute("INSERT INTO students VALUES (?,?)", (code, student))

    def _throttle(self, code: str, student: str) -> None:
        """A token bucket per student: ANSWERS_PER_S a second, bursts of ANSWER_BURST."""
        now = time.monotonic()
        tokens, when = self._buckets.get((code, student), (ANSWER_BURST, now))
        tokens = min(ANSWER_BURST, tokens + (now - when) * ANSWERS_PER_S)
        if tokens < 1:
            raise ClassError("Too many answers at once: wait a second, then answer again (the last one counts).")
        self._buckets[(code, student)] = (tokens - 1, now)

    def _count(self, sql: str, *args) -> int:
        return int(self._db.execute(sql, args).fetchone()[0])

    def _forget_closed(self, now: float) -> None:
        closed = [c for (c,) in self._db.execute("SELECT code FROM classes WHERE last_move <= ?",
                                                   (now - CLOSE_AFTER_S,))]
        for code in closed:
            for table in ("answers", "students", "classes"):
                self._db.execute(f"DELETE FROM {table} WHERE code=?", (code,))
        if closed:
            self._buckets = {k: v for k, v in self._buckets.items() if k[0] not in closed}


def check_student(student) -> str:
    if not isinstance(student, str) or not STUDENT_ID.fullmatch(student):
        raise ClassError(f"A student id is 1 to 64 letters, digits, '-' or '_'; got {shown(student, 30)}.")
    return student
