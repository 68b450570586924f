"""The block log read through a named pipe while "QEMU" writes it (here a writer thread): the same
answer as reading the file, and finish() returns when nothing ever opened the pipe (QEMU failed to start)."""
from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from backend_core.orchestration.jobs.steps.classes import TraceReader, class_trace

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


def test_pipe_gives_what_the_file_gives(tmp_path: Path, elf: Path) -> None:
    (tmp_path / "file.log").write_text(LOG)
    want = class_trace(tmp_path / "file.log", elf, "cortex-m4")
    reader = TraceReader(tmp_path / "qemu-exec.log", elf, "cortex-m4")
    writer = threading.Thread(target=lambda: (tmp_path / "qemu-exec.log").write_text(LOG))
    writer.start()
    writer.join(10)
    got, why, _ = reader.finish(timeout=10)
    assert why == "" and got is not None and got.total == want.total > 0
    assert list(got.sequence) == list(want.sequence) and not (tmp_path / "qemu-exec.log").exists()


def test_finish_returns_when_no_writer_ever_came(tmp_path: Path, elf: Path) -> None:
    reader = TraceReader(tmp_path / "qemu-exec.log", elf, "cortex-m4")
    got, why, _ = reader.finish(timeout=10)
    assert why == "" and got is not None and got.total == 0 and not (tmp_path / "qemu-exec.log").exists()
