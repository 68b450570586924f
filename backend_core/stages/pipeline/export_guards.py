"""What the tool's float export guards against. Full stack traces: torch.export (non-strict) keeps only the frames named `forward`
in a node's `stack_trace` (_ModuleStackTracer sets `_record_forward_stack_traces_only`), so an op made
inside a helper function (transformers' eager_attention_forward, a timm activation helper) is attributed
to the module line that called the helper. During our own export the tracer keeps every frame from the
first `forward` on (torch's own files are still dropped by its `uninteresting_files` filter), so the
snapshot can name the line that made the op and the chain of calls up to the user's line."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator


@contextmanager
def full_stack_traces() -> Iterator[None]:
    """Within the block, torch.export records helper frames too; a torch without the tracer attribute
    is left as it is (the traces are then the module lines, as before)."""
    try:
        from torch.fx.experimental.proxy_tensor import _ModuleStackTracer
    except ImportError:          # pragma: no cover - another torch
        yield
        return
    original = _ModuleStackTracer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._record_forward_stack_traces_only = False
        keep = self._filter_traceback_frames

        def no_torch_frames(summary: Any) -> Any:       # torch's own dispatch frames: long and no one's code
            import traceback

            return traceback.StackSummary.from_list([f for f in keep(summary) if "/torch/" not in f.filename])

        self._filter_traceback_frames = no_torch_frames

    _ModuleStackTracer.__init__ = init         # type: ignore[method-assign]
    try:
        yield
    finally:
        _ModuleStackTracer.__init__ = original  # type: ignore[method-assign]


@contextmanager
def module_attributes_kept(module: Any) -> Iterator[None]:
    """torch.export runs forward() on fake tensors, and a forward that caches on the module (ultralytics'
    Detect: `self.anchors, self.strides = make_anchors(...)` and `self.shape = shape`) leaves fake tensors
    there. The next export of the same module (a --keep-going round, a suggestion check) then captures them
    as constants, and copying that program fails ("Cannot access data pointer of Tensor"). Every module's
    plain attributes are put back as they were after the export (changed ones restored, new ones removed)."""
    import torch

    saved: list[tuple[Any, dict[str, Any]]] = []
    for mod in module.modules() if isinstance(module, torch.nn.Module) else ():
        saved.append((mod, {k: v for k, v in vars(mod).items() if not k.startswith("_")}))
    try:
        yield
    finally:
        for mod, before in saved:
            now = vars(mod)
            for k in [k for k in now if not k.startswith("_") and k not in before]:
                del now[k]
            for k, v in before.items():
                if now.get(k) is not v:
                    now[k] = v
