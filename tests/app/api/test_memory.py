"""The allocator settings app.py makes before any thread starts (ui/runtime/memory.py)."""
from __future__ import annotations

import subprocess
import sys

from harness.live_app import ROOT


def test_glibc_takes_the_arena_and_mmap_settings():
    """On Debian's glibc both settings are accepted (elsewhere limit_allocator does nothing, and says so)."""
    result = subprocess.run([sys.executable, "-c", "from ui.runtime.memory import limit_allocator; "
                             "print(limit_allocator())"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr


def test_the_arenas_free_pages_go_back_on_a_timer():
    """trim() reaches glibc's malloc_trim; trim_regularly's thread keeps calling it until stopped."""
    from ui.runtime import memory

    assert memory.trim()
    thread = memory.trim_regularly(every_s=0.01)
    assert thread is not None and thread.is_alive() and thread.daemon
    thread.stop.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
