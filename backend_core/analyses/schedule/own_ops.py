"""The project's own copy ops for patch schedules, on the host: `cmlens::window` and `cmlens::tiles`.

Why our own (issue 47 item 3): with ExecuTorch's portable ops a halo window of a channels-last tensor
costs three copies (portable slice_copy and cat need contiguous tensors: a `_clone_dim_order` there and
back, then `cortex_m.pad` for the border), which made mv2's schedule +8.8 % instructions on QEMU on top of
its halo recompute. `window` copies the window once, its border padded with the next conv's input zero
point; `tiles` writes each patch's output into its place in the whole tensor once. Both are registered
here for torch (schema, Python reference: the host bit-exactness check runs it, fake kernel: export sees
a channels-last output) and implemented for the target in kernels/ops/cmlens_ops.cpp (listed in
kernels/ops/cmlens_ops.yaml, compiled into the runner and the export bundle when a program uses them)."""
from __future__ import annotations

from typing import Any

import torch
from torch.library import Library, impl, register_fake

NAMESPACE = "cmlens"
OPS = ("cmlens::window.out", "cmlens::tiles.out")

_lib = Library(NAMESPACE, "DEF")
_lib.define("window(Tensor input, int[] box, int pad_value) -> Tensor")
_lib.define("window.out(Tensor input, int[] box, int pad_value, *, Tensor(a!) out) -> Tensor(a!)")
_lib.define("tiles(Tensor[] patches, int cols) -> Tensor")
_lib.define("tiles.out(Tensor[] patches, int cols, *, Tensor(a!) out) -> Tensor(a!)")


def _window_shape(x: torch.Tensor, box: list[int]) -> list[int]:
    return [int(x.shape[0]), int(x.shape[1]), box[1] - box[0], box[3] - box[2]]


@register_fake("cmlens::window")
def _window_fake(x: torch.Tensor, box: list[int], pad_value: int) -> torch.Tensor:
    return torch.empty(_window_shape(x, box), dtype=x.dtype, device=x.device).to(memory_format=torch.channels_last)


@impl(_lib, "window", "CompositeExplicitAutograd")
def window(x: torch.Tensor, box: list[int], pad_value: int) -> torch.Tensor:
    """x's pixels inside box = [h0, h1, w0, w1] (logical NCHW coordinates, may leave the tensor), pad_value
    where it does; channels-last like the cortex_m convs that read it. Same as cmlens_ops.cpp window_out."""
    h0, h1, w0, w1 = (int(b) for b in box)
    out = torch.full(_window_shape(x, [h0, h1, w0, w1]), pad_value, dtype=x.dtype, device=x.device)
    out = out.to(memory_format=torch.channels_last)
    a0, a1 = max(h0, 0), min(h1, int(x.shape[2]))
    b0, b1 = max(w0, 0), min(w1, int(x.shape[3]))
    if a1 > a0 and b1 > b0:
        out[:, :, a0 - h0:a1 - h0, b0 - w0:b1 - w0] = x[:, :, a0:a1, b0:b1]
    return out


def _tiles_rows(patches: list[torch.Tensor], cols: int) -> list[list[torch.Tensor]]:
    if cols < 1 or len(patches) % cols:
        raise ValueError(f"cmlens::tiles: {len(patches)} patches are not rows of {cols}")
    return [list(patches[i:i + cols]) for i in range(0, len(patches), cols)]


@register_fake("cmlens::tiles")
def _tiles_fake(patches: list[torch.Tensor], cols: int) -> torch.Tensor:
    rows = _tiles_rows(patches, cols)
    h = sum(int(r[0].shape[2]) for r in rows)
    w = sum(int(p.shape[3]) for p in rows[0])
    p0 = patches[0]
    return torch.empty([int(p0.shape[0]), int(p0.shape[1]), h, w], dtype=p0.dtype,
                       device=p0.device).to(memory_format=torch.channels_last)


@impl(_lib, "tiles", "CompositeExplicitAutograd")
def tiles(patches: list[torch.Tensor], cols: int) -> torch.Tensor:
    """The patches (row-major, `cols` per row) assembled into one channels-last tensor."""
    rows = _tiles_rows(list(patches), cols)
    whole = torch.cat([torch.cat(r, dim=3) for r in rows], dim=2)
    return whole.contiguous(memory_format=torch.channels_last)


def edge_ops() -> Any:
    """exir's edge dialect namespace of these ops (exir_ops.edge.cmlens)."""
    from executorch.exir.dialects._ops import ops as exir_ops

    return exir_ops.edge.cmlens
