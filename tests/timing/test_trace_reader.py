"""The block log followed while "QEMU" writes it (here a writer thread, in pieces, with pauses): the same
answer as reading the finished file; what was read is freed while the writer goes on; finish() returns
when nothing was ever written (QEMU failed to start) and deletes the log."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from backend_core.orchestration.jobs.steps.classes import TraceReader, class_trace, trace_log_path
from backend_core.target.timing import trace as trace_mod
from backend_core.target.timing.trace import follow_log, parse_log

from .test_trace_log import LOG


@pytest.fixture()
def elf(tmp_path: Path) -> Path:
    gcc = shutil.which("arm-none-eabi-gcc")
    if not gcc:
        pytest.skip("arm-none-eabi-gcc is not installed")
    src = tmp_path / "t.c"
    src.write_text("unsigned long long __wrap_et_pal_current_ticks(void) { return 7; }\n"
                   "int _start(void) { return (int)__wrap_et_pal_current_ticks(); }\n")
    out = tmp_path / "t.elf"
    subprocess.run([gcc, "-mcpu=cortex-m4", "-mthumb", "-O1", "-nostdlib", "-o", str(out), str(src)], check=True)
    return out


def _write_in_pieces(path: Path, text: bytes, piece: int, pause: float = 0.0) -> None:
    with open(path, "wb") as fh:                  # "w", as QEMU opens its -D file
        for i in range(0, len(text), piece):
            fh.write(text[i:i + piece])
            fh.flush()                            # QEMU 7.2 flushes its log after every line
            if pause:
                time.sleep(pause)


def test_following_gives_what_the_file_gives(tmp_path: Path, elf: Path) -> None:
    (tmp_path / "file.log").write_text(LOG)
    want = class_trace(tmp_path / "file.log", elf, "cortex-m4")
    reader = TraceReader(tmp_path / "qemu-exec.log", elf, "cortex-m4")
    writer = threading.Thread(target=_write_in_pieces, args=(reader.log, LOG.encode(), 37, 0.002))
    writer.start()
    writer.join(30)
    got, why, _ = reader.finish(timeout=10)
    assert why == "" and got is not None and got.total == want.total > 0
    assert list(got.sequence) == list(want.sequence) and not reader.log.exists()


def test_finish_returns_when_nothing_was_written(tmp_path: Path, elf: Path) -> None:
    reader = TraceReader(tmp_path / "qemu-exec.log", elf, "cortex-m4")
    got, why, _ = reader.finish(timeout=10)
    assert why == "" and got is not None and got.total == 0 and not reader.log.exists()


def test_a_long_log_is_freed_behind_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_mod, "PUNCH", 1 << 16)
    monkeypatch.setattr(trace_mod, "CHUNK", 1 << 15)
    text = LOG.encode() * 400                     # ~0.5 MB, cut mid-line by the writer's pieces
    (tmp_path / "file.log").write_bytes(text)
    want = parse_log(tmp_path / "file.log")
    log = tmp_path / "live.log"
    log.write_bytes(b"")
    done, seen = threading.Event(), {}
    reader = threading.Thread(target=lambda: seen.setdefault("raw", follow_log(log, done)))
    reader.start()
    _write_in_pieces(log, text, 4093, 0.0005)
    done.set()
    reader.join(30)
    raw = seen["raw"]
    assert list(raw.seq) == list(want.seq) and raw.tb_range == want.tb_range and raw.cut == want.cut
    if trace_mod._fallocate is not None:          # the file keeps its size, most of its blocks are gone
        st = os.stat(log)
        assert st.st_size == len(text) and st.st_blocks * 512 < len(text) // 2


def test_the_log_goes_to_ram_when_it_can(tmp_path: Path) -> None:
    p = trace_log_path(tmp_path)
    try:
        assert p.parent == (Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else tmp_path)
    finally:
        if p.parent != tmp_path:
            p.unlink(missing_ok=True)
