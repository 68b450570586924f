"""What makes the first build for a CPU short: build only what the runner links, reuse host tools,
cache compiler output, and say how far the build is.

Measured (issue 16, M55, the arm-baremetal preset as it was, 2 cores under load, 441 ninja steps,
51 min): the portable kernels were 91 % of the compile time (195 files, 4,932 CPU-s) although a runner
links a handful of them; the host `flatc` (flatbuffers' schema compiler, built from source for every
CPU) 165 s; the quantized kernels (for quantized_decomposed ops, which Cortex-M programs rarely use)
217 s. So the libraries are built without portable and quantized kernels (the runner compiles the
kernels of the ops its model uses: runner_build.kernel_sources), with the flatc that the executorch
wheel ships when it is the checkout's flatbuffers version, and through ccache when it is installed."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Mapping

_NINJA = re.compile(r"^\[(\d+)/(\d+)\]\s")
PROGRESS_STREAM = "progress"          # on_line(stream, text) of a build's percentage lines
_PROGRESS = re.compile(r"^(?P<what>.*): (?P<pct>\d+)% \((?P<done>\d+)/(?P<total>\d+) steps\)$")


def checkout_flatbuffers_version(et_root: Path) -> str | None:
    """"24.3.25" from the checkout's third-party/flatbuffers/include/flatbuffers/base.h."""
    base = Path(et_root) / "third-party" / "flatbuffers" / "include" / "flatbuffers" / "base.h"
    try:
        text = base.read_text(errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define FLATBUFFERS_VERSION_{k}\s+(\d+)", text) for k in ("MAJOR", "MINOR", "REVISION")]
    return ".".join(m.group(1) for m in parts) if all(parts) else None   # type: ignore[union-attr]


@lru_cache(maxsize=4)
def _flatc_version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"flatc version (\S+)", out)
    return m.group(1) if m else None


def wheel_flatc(et_root: Path) -> str | None:
    """The `flatc` the installed executorch wheel ships (executorch/data/bin/flatc, what its own
    serialiser runs), when its version is the checkout's flatbuffers version: generated headers
    static_assert that version, so any other flatc would break the build. None: ExecuTorch builds it."""
    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return None
    flatc = Path(list(spec.submodule_search_locations)[0]) / "data" / "bin" / "flatc"
    want = checkout_flatbuffers_version(et_root)
    if not flatc.is_file() or not os.access(flatc, os.X_OK) or want is None:
        return None
    return str(flatc) if _flatc_version(str(flatc)) == want else None


def compiler_cache_env(env: Mapping[str, str], cache_root: Path) -> dict[str, str]:
    """`env` with ccache as CMake's compiler launcher (CMake reads CMAKE_<LANG>_COMPILER_LAUNCHER from
    the environment at the first configure), its cache under the cmlens cache and paths under that
    cache hashed relative (base_dir): a rebuild of the same CPU in a new directory, or a runner build of
    another model, hits. Unchanged when ccache is not installed (`cmlens doctor` names it)."""
    out = dict(env)
    ccache = shutil.which("ccache", path=out.get("PATH"))
    if not ccache:
        return out
    out.setdefault("CMAKE_C_COMPILER_LAUNCHER", ccache)
    out.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", ccache)
    out.setdefault("CCACHE_DIR", str(Path(cache_root) / "ccache"))
    out.setdefault("CCACHE_BASEDIR", str(Path(cache_root).resolve()))
    out.setdefault("CCACHE_NOHASHDIR", "1")
    return out


class NinjaProgress:
    """ninja's `[N/M] ...` lines -> "ExecuTorch libraries for cortex-m4: 40% (177/441 steps)" every
    `every` percent (and the first and last step), for the CLI and the GUI's progress bar."""

    def __init__(self, what: str, every: int = 5) -> None:
        self.what = what
        self.every = max(1, every)
        self.last_pct = -1
        self.done = 0
        self.total = 0

    def feed(self, line: str) -> str | None:
        m = _NINJA.match(line)
        if not m:
            return None
        done, total = int(m.group(1)), int(m.group(2))
        if total <= 0:
            return None
        self.done, self.total = done, total
        pct = 100 * done // total
        bucket = pct // self.every
        if self.last_pct >= 0 and bucket == self.last_pct and done != total:
            return None
        self.last_pct = bucket
        return progress_text(self.what, done, total)


def progress_text(what: str, done: int, total: int) -> str:
    return f"{what}: {100 * done // max(total, 1)}% ({done}/{total} steps)"


def parse_progress(text: str) -> tuple[str, int, int, int] | None:
    """(what, percent, done, total) of a progress_text line, None for anything else."""
    m = _PROGRESS.match(text.strip())
    if not m:
        return None
    return m.group("what"), int(m.group("pct")), int(m.group("done")), int(m.group("total"))
