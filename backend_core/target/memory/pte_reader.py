"""Read a .pte without importing torch: a .pte's first paint (artefacts/pte.py) and its memory plan
(plan.py) in well under a second, where importing ExecuTorch's deserialiser costs ~8 s.

`deserialize_pte_binary` lives in `executorch.exir._serialize._program`, whose imports pull in torch
(through `executorch.exir/__init__` and `exir.tensor`, ~6-9 s on this machine). The part that parses
the program is ExecuTorch's own flatbuffer reader, `_flatbuffer_program._flatbuffer_to_program`,
which needs only `flatbuffers` and the schema dataclasses. This module imports that function with the
`executorch.exir` package's __init__ skipped (its parents stand in as bare packages only while it is
imported), then does what `_restore_segments` does for constants: it slices the constant segment
into the buffers `constant_buffer` would hold.

Anything unusual (mutable data segments, named data) returns None and the full deserialiser runs;
the artefact reader also needs every kernel's schema in its version-keyed table (artefacts/schemas.py),
so its snapshot is the one the full path gives (tests compare both readers)."""
from __future__ import annotations

import importlib.util
import struct
import sys
import types
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Callable, Iterator

_PARENTS = ("executorch.exir", "executorch.exir._serialize")


@contextmanager
def _bare_parents() -> Iterator[None]:
    """`executorch.exir` and `._serialize` as bare packages (no __init__ run) during the import."""
    added = []
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("executorch is not installed")
    root = list(spec.submodule_search_locations)[0]
    for name in _PARENTS:
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [root + "/" + name.split(".", 1)[1].replace(".", "/")]
            sys.modules[name] = mod
            added.append(name)
    try:
        yield
    finally:
        for name in added:       # a later real `import executorch.exir` runs its __init__ as usual
            sys.modules.pop(name, None)


def _flatbuffer_to_program() -> Any:
    mod = sys.modules.get("executorch.exir._serialize._flatbuffer_program")
    if mod is None:
        with _bare_parents():
            from executorch.exir._serialize import _flatbuffer_program
        mod = _flatbuffer_program
    return mod._flatbuffer_to_program


def torch_free_pte_file(data: bytes) -> Any | None:
    """SimpleNamespace(program=Program) like ExecuTorch's PTEFile, or None to use the full reader
    (torch already imported, mutable data segments or named data)."""
    if "torch" in sys.modules:           # torch is here anyway: the full deserialiser costs nothing more
        return None
    program_size, segment_base = len(data), 0
    if len(data) >= 32 and data[8:12] == b"eh00":
        _length, program_size, segment_base, _segment_size = struct.unpack_from("<IQQQ", data, 12)
    program = _flatbuffer_to_program()(data[:program_size])
    if program.mutable_data_segments or program.named_data:
        return None
    if segment_base:
        segment_data = data[segment_base:]
        seg = program.constant_segment
        if seg is not None and seg.offsets:
            s = program.segments[seg.segment_index]
            blob = segment_data[s.offset:s.offset + s.size]
            Buffer = type(program.constant_buffer[0]) if program.constant_buffer else _buffer_class()
            offs = list(seg.offsets)
            program.constant_buffer = [Buffer(storage=blob[o:(offs[i + 1] if i + 1 < len(offs) else len(blob))])
                                       for i, o in enumerate(offs)]
    return SimpleNamespace(program=program, mutable_data=None, named_data=None)


def read_pte_file(data: bytes, accept: Callable[[Any], bool] = lambda pte: True, *, torch_free: bool = True) -> Any:
    """ExecuTorch's PTEFile for `data`: read torch-free when that works and `accept` takes the result,
    else with `deserialize_pte_binary` (whose exception, on a bad file, is the caller's to word)."""
    if torch_free:
        try:
            pte = torch_free_pte_file(data)
            if pte is not None and accept(pte):
                return pte
        except Exception:  # noqa: BLE001 - the full deserialiser below gives the real error
            pass
    from executorch.exir._serialize._program import deserialize_pte_binary

    return deserialize_pte_binary(data)


def schema_module() -> Any:
    """`executorch.exir.schema` (the Program dataclasses): the one the torch-free reader loaded, or the
    full import when torch is here anyway."""
    mod = sys.modules.get("executorch.exir.schema")
    if mod is None:
        from executorch.exir import schema
        mod = schema
    return mod


def _buffer_class() -> Any:
    # imported with the flatbuffer reader; `from executorch.exir.schema import` would run exir's __init__
    return sys.modules["executorch.exir.schema"].Buffer
