"""Build the ExecuTorch libraries for Arm bare metal from the user's checkout, into one cache directory per
(checkout commit, CPU, build type, and a variant: checkout path, CMSIS-NN tree, ETDump, Python), so options
that change defines never reconfigure a shared build; the runner (runner_build.py) links them.

Recipe (measured in issue 5): the `arm-baremetal` preset without the Ethos-U parts (they fetch the
Ethos-U SDK from Arm's GitLab, which fails offline), with CMSIS-NN from a local tree, then
`cmake --build ... --target install`; since issue 16 without the portable and quantized kernels and
with the wheel's flatc (build_speed.py: 218 ninja steps instead of 441), through ccache. Still minutes, so:
- a stamp file (cmlens-libs.json) records the command lines and timings, but it is never trusted alone:
  a later request asks ninja whether the build is still up to date (`ninja -n`, freshness.py: about a
  second), so an edited kernel, an uncommitted change or an edited CMSIS-NN tree is rebuilt (incremental);
- one build at a time per checkout: flatcc writes libflatccrt.a into the source tree and every
  ExecuTorch configure deletes that folder, so two configures on one checkout break each other;
- every command's output is streamed and the build can be cancelled from any thread."""
from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from backend_core.target.build.paths import cache_dir
from backend_core.target.build.speed import compiler_cache_env, wheel_flatc
from backend_core.target.build.shared_outputs import forget_shared_archive, installed_runtime_is_this_builds
from backend_core.target.toolchain.checkout import git_head
from backend_core.target.build.freshness import Freshness, check_build
from backend_core.common.errors import BadInputError, BuildError
from backend_core.target.toolchain.process import LineCallback
from backend_core.target.build.steps import checkout_lock, check_build_tools, run_step
from backend_core.target.build.library_stamp import STAMP, build_time_hint


def slim_default() -> bool:
    """Libraries with only what the runner links (build_speed.py), unless CMLENS_FULL_LIBRARIES=1 (the
    whole preset, as before issue 16). Measured on 2 cores at load 11.5: 218 ninja steps, 500 s wall,
    186 CPU-s (M4), against 441 steps and 4,766 s wall for the whole preset (M7, load ~12)."""
    return os.environ.get("CMLENS_FULL_LIBRARIES") != "1"
# Marker that `--target install` finished: the CMake package the runner's find_package() reads.
CONFIG_FILE = "lib/cmake/ExecuTorch/executorch-config.cmake"


def codegen_python(executable: str | None = None) -> str:
    """The venv's Python, one name for one interpreter: a worker started as `.venv/bin/python3.11`
    (multiprocessing spawn, the GUI's workers) and the CLI's `.venv/bin/python` are the same program,
    but as different strings they made different variants: every CPU's libraries were configured and
    built again (measured 2026-12-01: four new installs in 4 minutes). Not resolved past the venv
    (the venv's site-packages is what codegen needs)."""
    exe = Path(executable or sys.executable)
    for name in ("python", "python3"):
        cand = exe.with_name(name)
        try:
            if cand == exe or (cand.exists() and os.path.samefile(cand, exe)):
                return str(cand)
        except OSError:
            continue
    return str(exe)


@dataclass
class EtLibRequest:
    """Which ExecuTorch libraries to build: checkout, CPU, build type, CMSIS-NN, Python for codegen."""

    et_root: Path
    cpu: str = "cortex-m55"
    build_type: str = "Release"
    cmsis_nn: Path | None = None          # None: ExecuTorch's CMake fetches it (needs network)
    python: str = field(default_factory=lambda: codegen_python())   # torch/PyYAML for ExecuTorch's codegen
    cache_root: Path | None = None        # default: cache_dir()
    etdump: bool = True                   # devtools: bundled_program (.bpte) + etdump (event tracer)
    jobs: int | None = None
    commit: str | None = None             # default: the checkout's git HEAD
    # only what the runner links (build_speed.py): no portable/quantized kernels (the runner compiles
    # those its model uses), the wheel's flatc; False: the full preset (CMLENS_FULL_LIBRARIES=1)
    slim: bool = field(default_factory=lambda: slim_default())

    def __post_init__(self) -> None:
        self.et_root = Path(self.et_root)
        if self.cmsis_nn is not None:
            self.cmsis_nn = Path(self.cmsis_nn)
        if self.commit is None:
            self.commit = git_head(self.et_root)

    @property
    def legacy_key(self) -> str:
        """`<commit12>-<cpu>-<build type>`; without git, a hash of the checkout's path. The directory name
        before variants had their own: an existing build there with the same defines is still used."""
        rev = (self.commit or "nogit-" + hashlib.sha1(str(self.et_root).encode()).hexdigest())[:12]
        return f"{rev}-{self.cpu}-{self.build_type.lower()}"

    def variant(self) -> str:
        """What else changes the configure: the checkout's path (CMake pins a build tree to one source
        tree), the CMSIS-NN tree (or a download), ETDump on/off and the Python used for codegen."""
        parts = [str(Path(self.et_root).resolve()), str(Path(self.cmsis_nn).resolve()) if self.cmsis_nn else "fetch",
                 "etdump" if self.etdump else "no-etdump", str(self.python)] + (["slim"] if self.slim else [])
        return hashlib.sha1("\0".join(parts).encode()).hexdigest()[:8]

    @property
    def key(self) -> str:
        """`<commit12>-<cpu>-<build type>-<variant>`."""
        return f"{self.legacy_key}-{self.variant()}"

    @property
    def root(self) -> Path:
        base = (Path(self.cache_root) if self.cache_root is not None else cache_dir()) / "executorch"
        legacy = base / self.legacy_key
        if not (base / self.key).exists() and self._stamp_matches(legacy):
            return legacy
        return base / self.key

    def _stamp_matches(self, root: Path) -> bool:
        try:
            stamp = json.loads((root / STAMP).read_text())
        except (OSError, ValueError):
            return False
        return stamp.get("defines") == self.defines(root) and stamp.get("et_root") == str(self.et_root)

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    @property
    def install_dir(self) -> Path:
        return self.root / "install"

    @property
    def stamp(self) -> Path:
        return self.root / STAMP

    def defines(self, root: Path | None = None) -> dict[str, str]:
        """The -D options on top of the preset (for the build in `root`, default self.root)."""
        d = {
            "CMAKE_BUILD_TYPE": self.build_type,
            "TARGET_CPU": self.cpu,
            "EXECUTORCH_BUILD_ARM_BAREMETAL": "OFF",    # Ethos-U delegate: needs the Ethos-U SDK download
            "EXECUTORCH_BUILD_PTHREADPOOL": "OFF",
            "EXECUTORCH_BUILD_CPUINFO": "OFF",
            "EXECUTORCH_BUILD_DEVTOOLS": "ON" if self.etdump else "OFF",
            "EXECUTORCH_BUILD_ARM_ETDUMP": "ON" if self.etdump else "OFF",
            "EXECUTORCH_BAREMETAL_SKIP_INSTALL": "OFF",
            "CMAKE_INSTALL_PREFIX": str((root / "install") if root is not None else self.install_dir),
            "PYTHON_EXECUTABLE": str(self.python),
        }
        if self.cmsis_nn is not None:
            d["FETCHCONTENT_SOURCE_DIR_CMSIS_NN"] = str(self.cmsis_nn)
            d["FETCHCONTENT_FULLY_DISCONNECTED"] = "ON"
        if self.slim:
            d["EXECUTORCH_BUILD_PORTABLE_OPS"] = "OFF"         # 195 kernels; the runner compiles its few
            d["EXECUTORCH_BUILD_KERNELS_QUANTIZED"] = "OFF"    # likewise (quantized_decomposed ops)
            flatc = wheel_flatc(self.et_root)
            if flatc:
                d["FLATC_EXECUTABLE"] = flatc                  # not built from source for every CPU
        return d


def library_configure_command(req: EtLibRequest, cmake: str = "cmake") -> list[str]:
    """`cmake -S <checkout> -B <cache>/build --preset arm-baremetal -G Ninja -D...`."""
    return [cmake, "-S", str(req.et_root), "-B", str(req.build_dir), "--preset", "arm-baremetal",
            "-G", "Ninja", *[f"-D{k}={v}" for k, v in req.defines().items()]]


def library_build_command(req: EtLibRequest, cmake: str = "cmake") -> list[str]:
    """`cmake --build <cache>/build -j N --target install`."""
    jobs = req.jobs or os.cpu_count() or 2
    return [cmake, "--build", str(req.build_dir), "-j", str(jobs), "--target", "install"]


@dataclass
class EtLibraries:
    """Installed ExecuTorch libraries for one CPU (install_dir holds lib/cmake/ExecuTorch)."""

    request: EtLibRequest
    install_dir: Path
    cached: bool
    configure_s: float
    build_s: float
    cold_build_s: float | None = None      # the first (full) build of this cache entry, from the stamp
    log: list[str] = field(default_factory=list)
    freshness: Freshness | None = None     # cached: ninja's no-op check that said so


def read_stamp(req: EtLibRequest) -> dict | None:
    try:
        return json.loads(req.stamp.read_text())
    except (OSError, ValueError):
        return None


def is_built(req: EtLibRequest) -> bool:
    """True when the cache holds a finished install made with the same options. Whether the sources
    changed since is not the stamp's to say: ensure_libraries asks ninja (freshness.check_build)."""
    stamp = read_stamp(req)
    return (stamp is not None and stamp.get("defines") == req.defines() and stamp.get("complete", True) is not False
            and (req.install_dir / CONFIG_FILE).is_file())


def ensure_libraries(req: EtLibRequest, *, on_line: LineCallback | None = None,
                     cancel_event: threading.Event | None = None, force: bool = False,
                     env: Mapping[str, str] | None = None) -> EtLibraries:
    """The installed libraries for `req`: built first when the cache has none, rebuilt (incrementally)
    when ninja says a source changed since (an edited kernel, uncommitted changes, CMSIS-NN's tree)."""
    cancel_event = cancel_event or threading.Event()
    log: list[str] = []

    def emit(stream: str, line: str) -> None:
        log.append(line)
        if on_line:
            on_line(stream, line)

    if not (req.et_root / "CMakePresets.json").is_file():
        raise BadInputError(f"{req.et_root} has no CMakePresets.json: not an ExecuTorch checkout this "
                            "build driver supports.", "Pass a checkout of pytorch/executorch from 2025 or later.")
    env = compiler_cache_env(dict(os.environ if env is None else env),
                             Path(req.cache_root) if req.cache_root is not None else cache_dir())
    cmake, ninja = check_build_tools(env)

    def cached(fresh: Freshness) -> EtLibraries:
        emit("cmlens", f"ExecuTorch libraries for {req.cpu} ({req.root.name}) are cached in {req.install_dir}: "
                       f"{fresh.describe()}")
        return EtLibraries(req, req.install_dir, True, 0.0, 0.0, (read_stamp(req) or {}).get("cold_build_s"), log,
                           freshness=fresh)

    if not force and is_built(req):
        fresh = check_build(req.build_dir, ninja, env)
        if fresh.up_to_date and installed_runtime_is_this_builds(req.build_dir, req.install_dir):
            return cached(fresh)
        why = (fresh.describe() if not fresh.up_to_date else "the installed libflatccrt.a is another CPU's (flatcc "
               "archives it into the checkout, shared by every CPU's build)")
        emit("cmlens", f"the cached ExecuTorch libraries for {req.cpu} ({req.root.name}): {why}: rebuilding what changed")
    req.root.mkdir(parents=True, exist_ok=True)
    with checkout_lock(req.et_root, cancel_event, emit, req.cache_root):
        if not force and is_built(req):     # built by whoever held the lock before us
            fresh = check_build(req.build_dir, ninja, env)
            if fresh.up_to_date and installed_runtime_is_this_builds(req.build_dir, req.install_dir):
                return cached(fresh)
        forget_shared_archive(req.et_root)     # re-archived from this build's objects (shared_outputs.py)
        stamp = read_stamp(req)
        from_scratch = not (req.build_dir / "build.ninja").is_file()    # else ninja only redoes what changed
        # Configured with these defines already: ninja re-runs CMake by itself if a CMakeLists changed.
        configured = not from_scratch and stamp is not None and stamp.get("defines") == req.defines()
        if stamp is not None:       # until the install finishes, the stamp must not say it did
            req.stamp.write_text(json.dumps({**stamp, "complete": False}, indent=2))
        emit("cmlens", f"building the ExecuTorch libraries for {req.cpu} from {req.et_root} "
                       f"(commit {req.commit or 'unknown'}) into {req.root}"
                       + (", incremental" if not from_scratch else f", once per CPU: {build_time_hint(req.cache_root)}"))
        configure_argv = library_configure_command(req, cmake)
        build_argv = library_build_command(req, cmake)
        configure_s = 0.0 if configured else run_step(configure_argv, "ExecuTorch configure", emit=emit,
                                                      cancel_event=cancel_event, env=env, cwd=req.et_root)
        # CMake's install skips a file whose size and modification second match the installed copy
        # ("Up-to-date"): a kernel rebuilt within the second of the last install kept the old library
        # (seen in tests/target_build/test_library_staleness.py). ALWAYS copies, keeping the sources' times
        # (headers keep theirs: the runner is not recompiled for nothing).
        build_s = run_step(build_argv, "ExecuTorch library build", emit=emit, cancel_event=cancel_event,
                           env={**env, "CMAKE_INSTALL_ALWAYS": "1"}, progress=f"ExecuTorch libraries for {req.cpu}")
    if not (req.install_dir / CONFIG_FILE).is_file():
        raise BuildError(f"The ExecuTorch build finished but {req.install_dir / CONFIG_FILE} is missing.",
                         "Check the install step in the output above.", detail="\n".join(log[-40:]))
    # The cold build is the one that started from an empty build directory. A rebuild with other options
    # (e.g. a run without --cmsis-nn, then one with it) is incremental: it must not overwrite the record
    # (seen: the M55 entry's 1413 s became "18.5 s" after two such runs).
    previous = (stamp or {}).get("cold_build_s")
    cold = configure_s + build_s if from_scratch or previous is None else previous
    req.stamp.write_text(json.dumps({
        "commit": req.commit, "cpu": req.cpu, "build_type": req.build_type, "et_root": str(req.et_root),
        "defines": req.defines(), "configure": configure_argv, "build": build_argv,
        "configure_s": round(configure_s, 2), "build_s": round(build_s, 2), "cold_build_s": round(cold, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "complete": True,
    }, indent=2))
    return EtLibraries(req, req.install_dir, False, configure_s, build_s, cold, log)
