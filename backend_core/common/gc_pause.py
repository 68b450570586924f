"""The cyclic garbage collector paused over work that allocates millions of objects that live until it
ends, while the process already holds millions more.

Why: a full collection walks every tracked object. A lowering keeps its stage snapshots, the export and the
edge programs alive while torch.fx and ExecuTorch's passes allocate heavily, so the collector runs full
collections that find little and cost the more the more the tool holds: on U-Net (segmentation-models-pytorch)
a lowering took 14.4 s with the collector on and 13.5 s with it paused (bench/realworld_speed.py shows the
ratio). The garbage is collected when the collector runs next, as it would have been."""
from __future__ import annotations

import contextlib
import functools
import gc
from typing import Any, Callable, Iterator, TypeVar


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside, back to what it was after (nested uses keep it off until the outer ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


F = TypeVar("F", bound=Callable[..., Any])


def collector_paused_in(fn: F) -> F:
    """`fn` runs with the collector paused (collector_paused)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        with collector_paused():
            return fn(*args, **kwargs)
    return run  # type: ignore[return-value]
