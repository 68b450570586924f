"""The cheaper class counting gives the same answer: the log parsed in chunks of any size (lines cut at a
chunk's end are carried over), and the ELF's disassembly read back from its cache without objdump."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.target.timing import isa, trace
from backend_core.target.timing.isa import Insn

from .test_trace_log import INSNS, LOG
from .test_trace_reader import elf  # noqa: F401  (fixture)


@pytest.mark.parametrize("chunk", [7, 64, 1 << 22])
def test_any_chunk_size_gives_the_same_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    log = tmp_path / "qemu-exec.log"
    log.write_text(LOG)
    whole = trace.read_trace(log, INSNS, 0x100)
    monkeypatch.setattr(trace, "CHUNK", chunk)
    part = trace.read_trace(log, INSNS, 0x100)
    assert part.totals() == whole.totals() and list(part.reads) == list(whole.reads) == [0, 12]
    assert part.total == 14


def test_disassembly_is_cached_per_elf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, elf: Path) -> None:  # noqa: F811
    first = isa.disassembly(elf, "cortex-m4", cache=tmp_path / "c")
    assert first == isa.disassemble(elf, "cortex-m4") and first
    assert len(list((tmp_path / "c").glob("*.json"))) == 1

    def no_objdump(*a: object) -> dict[int, Insn]:
        raise AssertionError("objdump ran although the disassembly is cached")

    monkeypatch.setattr(isa, "disassemble", no_objdump)
    assert isa.disassembly(elf, "cortex-m4", cache=tmp_path / "c") == first
    elf.write_bytes(elf.read_bytes() + b"\0")          # another ELF: another key, objdump again
    with pytest.raises(AssertionError, match="objdump ran"):
        isa.disassembly(elf, "cortex-m4", cache=tmp_path / "c")
