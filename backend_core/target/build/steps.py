"""One step of a library or runner build: run a cmake command with its output streamed and its
failure explained (cause + fix), find cmake and ninja first, and hold the checkout's lock (flatcc writes
into the checkout: two configures of one checkout break each other, see libraries.py)."""
from __future__ import annotations

import contextlib
import hashlib
import shutil
import threading
import time
from pathlib import Path
from typing import Iterator, Mapping

from backend_core.target.build.paths import cache_dir
from backend_core.target.build.kernels import diagnose
from backend_core.target.build.speed import PROGRESS_STREAM, NinjaProgress
from backend_core.target.toolchain.locks import exclusive_lock
from backend_core.common.errors import BuildError, Cancelled, ToolMissingError
from backend_core.target.toolchain.process import LineCallback, StreamingProcess
from backend_core.target.toolchain.tools import APT_TOOLCHAIN, apt_install


def checkout_lock_path(et_root: Path, cache_root: Path | None = None) -> Path:
    base = Path(cache_root) if cache_root is not None else cache_dir()
    digest = hashlib.sha1(str(Path(et_root).resolve()).encode()).hexdigest()[:16]
    return base / "locks" / f"checkout-{digest}.lock"


@contextlib.contextmanager
def checkout_lock(et_root: Path, cancel_event: threading.Event, emit: LineCallback,
                  cache_root: Path | None = None) -> Iterator[None]:
    """Exclusive lock on the checkout (see the flatcc trap above), waiting cancellably."""
    with exclusive_lock(
            checkout_lock_path(et_root, cache_root), cancel_event,
            lambda: emit("cmlens", f"waiting: another build is configuring {et_root} (one at a time per checkout)"),
            "The ExecuTorch library build was cancelled."):
        yield


def run_step(argv: list[str], what: str, *, emit: LineCallback, cancel_event: threading.Event,
             env: Mapping[str, str] | None = None, cwd: Path | None = None, progress: str = "") -> float:
    """Run one cmake step with streamed output; BuildError (cause + fix) or Cancelled. With `progress`
    (what is being built), ninja's [N/M] lines also come out as percentage lines on the
    build_speed.PROGRESS_STREAM stream."""
    emit("cmlens", "$ " + " ".join(argv))
    start = time.monotonic()
    on_line = emit
    if progress:
        meter = NinjaProgress(progress)

        def on_line(stream: str, line: str) -> None:
            emit(stream, line)
            text = meter.feed(line)
            if text:
                emit(PROGRESS_STREAM, text)
    try:
        res = StreamingProcess(argv, on_line=on_line, env=env, cwd=cwd, cancel_event=cancel_event).run()
    except FileNotFoundError as exc:
        raise ToolMissingError(argv[0], apt_install("cmake"), what) from exc
    if res.cancelled:
        raise Cancelled(f"The {what} was cancelled.")
    if res.returncode != 0:
        lines = res.stdout + res.stderr
        cause, fix = diagnose(lines)
        raise BuildError(f"The {what} failed: {cause}.", f"Fix: {fix}", detail="\n".join(lines[-60:]))
    return time.monotonic() - start


def check_build_tools(env: Mapping[str, str]) -> tuple[str, str]:
    """(cmake, ninja) paths; ToolMissingError with the install command otherwise."""
    path = env.get("PATH")
    cmake, ninja = shutil.which("cmake", path=path), shutil.which("ninja", path=path)
    if not cmake:
        raise ToolMissingError("cmake", apt_install("cmake"), "build ExecuTorch")
    if not ninja:
        raise ToolMissingError("ninja", apt_install("ninja-build"), "build ExecuTorch")
    if not shutil.which("arm-none-eabi-gcc", path=path):
        raise ToolMissingError("arm-none-eabi-gcc", apt_install(APT_TOOLCHAIN), "cross-compile ExecuTorch")
    return cmake, ninja
