"""Build driver for the kernels/ CMake project: the cmake configure/build argument lists, run as
subprocesses with every output line streamed to a callback, cancellable, into a build directory
under a cache dir (default ~/.cache/cmlens/build/...)."""
from __future__ import annotations

import hashlib
import contextlib
import os
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from backend_core.common.boards.table import Board
from backend_core.target.toolchain.locks import exclusive_lock
from backend_core.common.errors import BuildError, Cancelled, ToolMissingError
from backend_core.target.toolchain.process import LineCallback, StreamingProcess
from backend_core.target.toolchain.tools import APT_TOOLCHAIN, apt_install
from backend_core.target.build.paths import KERNELS_DIR, cache_dir

FIRMWARES: tuple[str, ...] = ("cmlens_selftest", "cmlens_selftest_fail", "cmlens_hang", "cmlens_fault",
                              "cmlens_fault_udf", "cmlens_ticks_wrap")


@dataclass
class BuildRequest:
    """What to build: a board of kernels/, the firmware targets and where."""

    board: Board
    targets: tuple[str, ...] = ("cmlens_selftest",)
    build_type: str = "Release"
    build_root: Path | None = None              # default: cache_dir()/build
    source_dir: Path = KERNELS_DIR
    toolchain_bin: Path | None = None           # directory of arm-none-eabi-gcc when not on PATH
    defines: dict[str, str] = field(default_factory=dict)

    @property
    def build_dir(self) -> Path:
        root = self.build_root if self.build_root is not None else cache_dir() / "build"
        # CMake pins a build tree to one source tree: two checkouts (or CI's clone next to a
        # developer's) must not share one, or configure fails with "does not match the source".
        src = hashlib.sha1(str(Path(self.source_dir).resolve()).encode()).hexdigest()[:8]
        return Path(root) / f"kernels-{self.board.name}-{self.build_type.lower()}-{src}"

    def elf(self, target: str) -> Path:
        """Where the firmware target's .elf lands."""
        sub = "selftest" if target in FIRMWARES else ""
        return self.build_dir / sub / f"{target}.elf"


def configure_command(req: BuildRequest, cmake: str = "cmake", ninja: str | None = None) -> list[str]:
    """`cmake -G Ninja -S kernels -B <build dir> -D...` as an argument list."""
    argv = [cmake, "-G", "Ninja", "-S", str(req.source_dir), "-B", str(req.build_dir),
            f"-DCMAKE_TOOLCHAIN_FILE={req.source_dir / 'cmake' / 'arm-none-eabi-gcc.cmake'}",
            f"-DCMLENS_BOARD={req.board.name}", f"-DCMAKE_BUILD_TYPE={req.build_type}"]
    if ninja:
        argv.append(f"-DCMAKE_MAKE_PROGRAM={ninja}")
    if req.toolchain_bin:
        argv.append(f"-DCMLENS_TOOLCHAIN_PREFIX={req.toolchain_bin}")
    argv += [f"-D{k}={v}" for k, v in sorted(req.defines.items())]
    return argv


def build_command(req: BuildRequest, cmake: str = "cmake") -> list[str]:
    """`cmake --build <build dir> --target ...` as an argument list."""
    return [cmake, "--build", str(req.build_dir), "--target", *req.targets]


@dataclass
class BuildResult:
    """A finished build: the firmware files, timings, the flags CMake reported, the log."""

    request: BuildRequest
    elfs: dict[str, Path]
    configure_s: float
    build_s: float
    cpu_flags: list[str]
    log: list[str]


# (pattern in the output, cause, fix) for failures users can act on.
_DIAGNOSES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"nano\.specs'?: No such file|cannot find -lc_nano|cannot find -lc\b|stdio\.h: No such file"),
     "newlib (the C library for arm-none-eabi) is missing",
     apt_install("libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib")),
    (re.compile(r"No CMAKE_C_COMPILER could be found|arm-none-eabi-gcc\S*: (command )?not found|"
                r"arm-none-eabi-gcc\S*\" is not a full path to an existing compiler"),
     "the cross compiler arm-none-eabi-gcc is missing", apt_install(APT_TOOLCHAIN)),
    (re.compile(r"CMAKE_MAKE_PROGRAM is not set|Ninja.*not found|could not find ninja", re.I),
     "ninja is missing", apt_install("ninja-build")),
    (re.compile(r"Does not match the generator used previously|CMakeCache\.txt directory .* is different"),
     "the build directory was configured differently before", "delete the build directory and retry"),
    (re.compile(r"region `?(\w+)'? overflowed"),
     "the firmware does not fit the board's memory", "reduce the firmware size or pick a board with more memory"),
    (re.compile(r"undefined reference to"), "the link failed (a symbol is missing)",
     "see the undefined symbol in the output above"),
    (re.compile(r"Unknown CMLENS_BOARD"), "the board name is unknown", "use one of backend_core.common.boards.table.BOARDS"),
]


def diagnose(lines: list[str]) -> tuple[str, str]:
    """Cause and fix for a failed cmake run, from its output."""
    text = "\n".join(lines)
    for pattern, cause, fix in _DIAGNOSES:
        if pattern.search(text):
            return cause, fix
    return "the build failed", "see the compiler output above"


class KernelBuilder:
    """Configures and builds kernels/ for one board. `cancel()` stops it from any thread."""

    def __init__(self, request: BuildRequest, *, on_line: LineCallback | None = None,
                 cancel_event: threading.Event | None = None, cmake: str | None = None,
                 ninja: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.request = request
        self.on_line = on_line
        self.cancel_event = cancel_event or threading.Event()
        self.env = dict(os.environ if env is None else env)
        path = self.env.get("PATH")
        self.cmake = cmake or shutil.which("cmake", path=path)
        self.ninja = ninja or shutil.which("ninja", path=path)
        self._log: list[str] = []

    def cancel(self) -> None:
        self.cancel_event.set()

    def check_tools(self) -> None:
        """ToolMissingError (exit 2) naming the install command for cmake, ninja or the compiler."""
        if not self.cmake:
            raise ToolMissingError("cmake", apt_install("cmake"), "configure the firmware build")
        if not self.ninja:
            raise ToolMissingError("ninja", apt_install("ninja-build"), "build the firmware")
        gcc_dirs = [str(self.request.toolchain_bin)] if self.request.toolchain_bin else []
        search = os.pathsep.join(gcc_dirs + [self.env.get("PATH", "")])
        if not shutil.which("arm-none-eabi-gcc", path=search):
            raise ToolMissingError("arm-none-eabi-gcc", apt_install(APT_TOOLCHAIN), "cross-compile firmware")

    def configure_args(self) -> list[str]:
        return configure_command(self.request, self.cmake or "cmake", self.ninja)

    def build_args(self) -> list[str]:
        return build_command(self.request, self.cmake or "cmake")

    def run(self) -> BuildResult:
        """Configure + build; BuildError names the cause and fix, Cancelled when cancelled."""
        self.check_tools()
        self.request.build_dir.mkdir(parents=True, exist_ok=True)
        with self._locked():
            configure_s = self._step("configure", self.configure_args())
            build_s = self._step("build", self.build_args())
        flags: list[str] = []
        for line in self._log:
            m = re.search(r"cmlens: board=\S+ cpu=\S+ sim=\S+ flags=(.*)$", line)
            if m:
                flags = m.group(1).split()
        elfs = {t: self.request.elf(t) for t in self.request.targets}
        missing = [str(p) for p in elfs.values() if not p.is_file()]
        if missing:
            raise BuildError("The build finished but produced no firmware: " + ", ".join(missing),
                             "Check the target names.", detail="\n".join(self._log[-40:]))
        return BuildResult(self.request, elfs, configure_s, build_s, flags, list(self._log))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One build at a time per build directory (another process may be building it)."""
        with exclusive_lock(
                self.request.build_dir / ".cmlens-build.lock", self.cancel_event,
                lambda: self._emit("cmlens", f"waiting for another build of {self.request.build_dir}"),
                "The firmware build was cancelled."):
            yield

    def _step(self, what: str, argv: list[str]) -> float:
        self._emit("cmlens", f"$ {' '.join(argv)}")
        proc = StreamingProcess(argv, on_line=self._emit, env=self.env, cancel_event=self.cancel_event)
        start = time.monotonic()
        result = proc.run()
        if result.cancelled:
            raise Cancelled(f"The firmware {what} was cancelled.")
        if result.returncode != 0:
            lines = result.stdout + result.stderr
            cause, fix = diagnose(lines)
            raise BuildError(f"cmake {what} failed for board {self.request.board.name}: {cause}.",
                             f"Fix: {fix}", detail="\n".join(lines[-40:]))
        return time.monotonic() - start

    def _emit(self, stream: str, line: str) -> None:
        self._log.append(line)
        if self.on_line is not None:
            self.on_line(stream, line)


def build_firmware(board: Board, targets: tuple[str, ...] = ("cmlens_selftest",), *,
                   build_root: Path | None = None, on_line: LineCallback | None = None,
                   cancel_event: threading.Event | None = None, **kw) -> BuildResult:
    """Convenience: build `targets` of kernels/ for `board`."""
    req = BuildRequest(board, targets, build_root=build_root, **kw)
    return KernelBuilder(req, on_line=on_line, cancel_event=cancel_event).run()
