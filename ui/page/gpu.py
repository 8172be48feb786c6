"""A GPU lent for each call on a Hugging Face ZeroGPU Space.

On ZeroGPU a handler gets a GPU only while it runs, and only if it was decorated with `spaces.GPU`. The
decoration is applied once per handler, where the handler is registered (ui.page.context, and the gr.api
endpoints), as the ZeroGPU documentation does it with `@spaces.GPU`: never around each request. Anywhere
else (`spaces` not installed, or installed but not on ZeroGPU) `spaces.GPU` returns the handler itself and
the models run as they are, on CUDA when present.
"""
from __future__ import annotations

from typing import Callable

try:
    import spaces
except ImportError:  # the package is only needed on Spaces (requirements-dev.txt installs it for its test)
    spaces = None

# Only on ZeroGPU do handlers run in a process lent a GPU, so only there must every call use a worker thread.
LENT_GPU = spaces is not None and bool(spaces.config.Config.zero_gpu)


def on_gpu(handler: Callable) -> Callable:
    """`handler` as ZeroGPU runs it (spaces.GPU), when it is built; one already lent a GPU (a handler
    that ui.page.context.listen registers) is returned as it is."""
    if getattr(handler, "lent_gpu", False):
        return handler
    lent = handler if spaces is None else spaces.GPU(handler)
    lent.lent_gpu = True
    return lent
