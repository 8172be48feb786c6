"""Start the real app (`python app.py`) in a subprocess and drive it like a visitor would.

Used by the browser, hostile-input and fault tests, and by `python -m bench`. Nothing here
imports the app: it is started exactly as `make run` starts it, on a free port, with
analytics off so it never reaches the network.

    with live_app(log=Path("test-artifacts/logs/app.log")) as app:
        client = app.client()
        client.predict(..., api_name="/ping")
"""
from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
URL_LINE = re.compile(r"Running on local URL:\s*(http://\S+)")
GENERIC_ERROR = "upstream Gradio app has raised an exception"
BUG_PREFIX = "Something went wrong"  # ui.page.context.friendly's wording for an unexpected exception
START_TIMEOUT_S = 180  # three models load at start; the machine may be busy with other work


@dataclass
class LiveApp:
    url: str  # ends with "/"
    process: subprocess.Popen
    log: Path
    env: dict = field(default_factory=dict)  # what the test set beside the machine's environment

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.is_file() else ""

    def client(self):
        from gradio_client import Client

        return Client(self.url, verbose=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serves(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "gradio_api/info", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def start_app(log: Path, env: dict | None = None, command: list[str] | None = None,
              timeout: float = START_TIMEOUT_S) -> LiveApp:
    """Start the app and return once it answers HTTP; fail with the end of its log if it does not."""
    port = free_port()
    log = Path(log)
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # each pytest-xdist worker starts its own servers
    if worker:  # their logs side by side: a log shared by two servers would give one the other's URL
        log = log.with_name(f"{log.stem}-{worker}{log.suffix}")
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port),
                "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1", **(env or {})}
    handle = open(log, "w", encoding="utf-8")
    process = subprocess.Popen(command or [sys.executable, "app.py"], cwd=ROOT, env=full_env,
                               stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    handle.close()
    app = LiveApp(f"http://127.0.0.1:{port}/", process, log, dict(env or {}))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"app.py exited with code {process.returncode} before serving. "
                               f"End of {log}:\n{app.log_text()[-3000:]}")
        # Only the URL our app printed: Gradio moves to the next port if ours was taken meanwhile, and the port
        # we picked may then be another server's (the two test workers each start theirs).
        found = URL_LINE.search(app.log_text())
        if found:
            app.url = found.group(1).rstrip("/") + "/"
            if _serves(app.url):
                return app
        time.sleep(0.5)
    stop_app(app)
    raise RuntimeError(f"app.py did not serve within {timeout:.0f} s. End of {log}:\n{app.log_text()[-3000:]}")


def stop_app(app: LiveApp) -> None:
    if app.process.poll() is None:
        app.process.terminate()
        try:
            app.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            app.process.kill()
            app.process.wait(timeout=15)


@contextlib.contextmanager
def live_app(log: Path, env: dict | None = None, command: list[str] | None = None):
    app = start_app(log, env, command)
    try:
        yield app
    finally:
        stop_app(app)


def _children() -> dict[int, list[int]]:
    """Every process's children, read from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold spaces
        children.setdefault(parent, []).append(int(entry.name))
    return children


def training_processes(app: LiveApp) -> list[int]:
    """The app's toy trainings running now: the processes its fork server (training/toy_session.py) forked."""
    children = _children()
    found = []
    for pid in children.get(app.process.pid, []):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"forkserver" in command:
            found += children.get(pid, [])
    return found


def assert_no_training_left(app: LiveApp, slots: int = 1, timeout: float = 120) -> None:
    """After a test that trained: no training process left, and `slots` visitors at once each start a
    training without waiting (every slot is free). Waits for the server to close what a closed page left
    (Gradio closes its stream, the trainer kills the process); only a failure waits `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while training_processes(app):
        assert time.monotonic() < deadline, (
            f"training processes {training_processes(app)} still run {timeout:.0f} s after the test: a training "
            "was left behind (it holds a slot the next visitor waits for)")
        time.sleep(0.2)
    outputs = {}

    def probe(n: int):  # copy for one second: the shortest training there is
        job = app.client().submit("copy", True, 1, api_name="/train_toy")
        job.result(timeout=timeout)
        outputs[n] = job.outputs()

    threads = [threading.Thread(target=probe, args=(n,)) for n in range(slots)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert len(outputs) == slots, f"a probe training did not finish within {timeout:.0f} s"
    waited = [n for n, events in outputs.items()
              if any(isinstance(e, dict) and e.get("status") == "waiting" for e in events)]
    assert not waited, f"{len(waited)} of {slots} probe trainings waited for a slot: a slot was left held"
    while training_processes(app):  # the probes' own processes end as their runs do
        assert time.monotonic() < deadline, f"the probes' training processes {training_processes(app)} never ended"
        time.sleep(0.2)


def require_chromium() -> str:
    """The Debian chromium the browser tests drive; a clear failure (never a skip) when it is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"{CHROMIUM} is missing: the browser tests need it. Install it with "
                           "`sudo apt-get install chromium` (or run `make test`, which does).")
    return CHROMIUM


class Endpoints:
    """Positional arguments for the app's named endpoints, from its own API description: the
    values given by parameter name, the app's defaults (or None) for the rest. Keeps the tests
    independent of the order and number of a handler's inputs."""

    def __init__(self, client):
        self.info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]

    def args(self, api_name: str, **given) -> list:
        if api_name not in self.info:
            raise AssertionError(f"the app has no endpoint {api_name}; it has {sorted(self.info)}")
        params = self.info[api_name]["parameters"]
        names = [p["parameter_name"] for p in params]
        unknown = set(given) - set(names)
        assert not unknown, f"{api_name} takes {names}, not {sorted(unknown)}"
        return [given[p["parameter_name"]] if p["parameter_name"] in given else p.get("parameter_default")
                for p in params]


def assert_clear_message(message, what: str) -> None:
    """An error message for a person: present, specific, no traceback, not the app's bug catch-all."""
    assert message, f"{what}: the error carries no message at all"
    message = str(message)
    assert GENERIC_ERROR not in message, f"{what}: Gradio's generic error instead of a clear message"
    assert "Traceback" not in message and 'File "' not in message, f"{what}: a traceback reached the caller"
    assert not message.startswith(BUG_PREFIX), f"{what}: the app hit a bug: {message}"
    assert not re.search(r"(?:^|[\s'\"(])(?:/[\w.-]+){2,}", message), f"{what}: the message names a server path: {message}"
