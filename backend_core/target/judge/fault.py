"""Plant a fault the verdict must catch: one weight byte of the program inside a .bpte, flipped after
the bundle's expected outputs were computed.

Why one byte, chosen this way: the old fault check flipped 64 bytes of the program's extended header
(segment base and size), which breaks the file rather than a weight. A flipped weight is what a real
target bug looks like (a kernel reading the wrong value): the program still loads and runs, and only an
exact comparison sees it, since one int8 weight changes an output by a step or so, well inside the old
atol 0.01. A flip can also vanish: with random weights, DS-CNN's outputs hardly depend on its convs (zeroing the
whole first conv changes one output by one step: the average pool and the bias of the last linear
dominate). So candidate bytes are tried from the last layer backwards, each applied to the same weight
of the host program first, and the first whose host run changes the outputs is the one planted: the
fault is known to be visible before the target ever runs."""
from __future__ import annotations

import copy
import struct
from dataclasses import dataclass
from typing import Any

from backend_core.target.judge.steps import OutputDifference, summary

_INT8 = 1          # executorch ScalarType CHAR
TRIES_PER_TENSOR = 8


@dataclass
class PlantedFault:
    bpte: bytes                  # the bundle with the byte flipped
    file_offset: int             # where in the .bpte
    tensor: str                  # the host program's name for the weight
    shape: tuple[int, ...]
    element: int                 # storage index of the flipped int8 value
    before: int
    after: int
    host_change: list[OutputDifference]   # host run with the flipped weight vs the bundle's expected outputs

    def describe(self) -> str:
        return (f"flipped byte {self.file_offset} of the .bpte: {self.tensor}{list(self.shape)} element "
                f"{self.element}, {self.before} -> {self.after}; on the host this changes the outputs "
                f"({summary(self.host_change)})")


@dataclass
class _Constant:
    offset: int                  # in the .pte
    numel: int
    scalar_type: int
    sizes: tuple[int, ...]
    dim_order: tuple[int, ...]


def _used_values(plan: Any) -> set[int]:
    """Indices of the values some instruction of `plan` passes to a kernel."""
    used: set[int] = set()
    for chain in plan.chains or []:
        for ins in chain.instructions or []:
            used.update(int(a) for a in getattr(ins.instr_args, "args", None) or [])
    return used


def _pte_constants(pte: bytes) -> list[_Constant]:
    """The int8 constant tensors of a .pte that a kernel reads (the weights of cortex_m conv/linear ops),
    in the order of the program's values, with their byte offsets in the file."""
    from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program

    if pte[8:12] != b"eh00":
        return []
    _length, program_size, segment_base, _size = struct.unpack_from("<IQQQ", pte, 12)
    program = _flatbuffer_to_program(pte[:program_size])
    seg = program.constant_segment
    if seg is None or not seg.offsets:
        return []
    base = segment_base + program.segments[seg.segment_index].offset
    found, seen = [], set()
    for plan in program.execution_plan:
        used = _used_values(plan)
        for i, v in enumerate(plan.values):
            t = v.val
            idx = getattr(t, "data_buffer_idx", 0)
            if i not in used or not idx or idx in seen or getattr(t, "allocation_info", None) is not None:
                continue
            st = int(getattr(t.scalar_type, "value", t.scalar_type))
            if st != _INT8:
                continue
            seen.add(idx)
            numel = 1
            for s in t.sizes:
                numel *= int(s)
            found.append(_Constant(base + seg.offsets[idx], numel, st, tuple(int(s) for s in t.sizes),
                                   tuple(int(d) for d in t.dim_order)))
    return found


def _match(tensors: dict[str, Any], c: _Constant, data: bytes) -> tuple[str, Any] | None:
    """The host module's tensor whose bytes (in the .pte's dim order) are this constant's."""
    import torch

    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int8 or tuple(t.shape) != c.sizes:
            continue
        if t.detach().permute(*c.dim_order).contiguous().numpy().tobytes() == data:
            return name, t
    return None


def _storage_index(c: _Constant, element: int) -> tuple[int, ...]:
    """The logical index of storage element `element` of a tensor laid out in `c.dim_order`."""
    permuted_sizes = [c.sizes[d] for d in c.dim_order]
    idx = []
    for size in reversed(permuted_sizes):
        idx.append(element % size)
        element //= size
    permuted_idx = list(reversed(idx))
    logical = [0] * len(c.sizes)
    for pos, d in enumerate(c.dim_order):
        logical[d] = permuted_idx[pos]
    return tuple(logical)


def plant_weight_fault(bpte: bytes, final_program: Any, inputs: tuple) -> PlantedFault:
    """Flip (bit-invert) one int8 weight byte of the program inside `bpte` such that the host run of the
    lowered program with the same flip differs from the bundle's expected outputs. ValueError when the
    bundle's program has no weight whose flip shows."""
    import torch
    from executorch.devtools.bundled_program.serialize import deserialize_from_flatbuffer_to_bundled_program

    from backend_core.target.judge.steps import compare_all

    pte = bytes(deserialize_from_flatbuffer_to_bundled_program(bpte).program)
    where = bpte.find(pte)
    if where < 0 or bpte.find(pte, where + 1) >= 0:
        raise ValueError("the program is not stored once, verbatim, in the bundle")
    module = copy.deepcopy(final_program).module()       # one host module; each try edits one value in place
    tensors = dict(module.state_dict(keep_vars=True))

    def run() -> list[Any]:
        with torch.no_grad():
            out = module(*inputs)
        return [t.detach().contiguous().numpy() for t in ((out,) if isinstance(out, torch.Tensor) else out)]

    expected = run()
    for c in reversed(_pte_constants(pte)):          # the last layers first: nothing after them can mask it
        data = pte[c.offset:c.offset + c.numel]
        hit = _match(tensors, c, data)
        if hit is None:
            continue
        name, t = hit
        for element in range(min(TRIES_PER_TENSOR, c.numel)):
            at_index = _storage_index(c, element)
            before = int(t.data[at_index])
            t.data[at_index] = ~before
            change = compare_all(run(), expected)
            t.data[at_index] = before
            if any(not d.identical for d in change):
                at = where + c.offset + element
                out = bytearray(bpte)
                out[at] ^= 0xFF
                return PlantedFault(bytes(out), at, name, c.sizes, element, before, ~before, change)
    raise ValueError("no int8 weight of the program changes the outputs when one of its bytes is flipped")
