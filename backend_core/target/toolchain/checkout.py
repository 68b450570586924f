"""Find the user's ExecuTorch checkout (explicit path or EXECUTORCH_ROOT), its version and commit,
compare it with the installed `executorch` package (without importing it: that takes ~8 s), and find
CMSIS-NN sources (or say what ExecuTorch's CMake would fetch)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import socket
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Mapping

from backend_core.common.errors import BadInputError

RUNNER_SOURCE = "examples/arm/executor_runner/arm_executor_runner.cpp"
CMSIS_NN_REPO = "https://github.com/ARM-software/CMSIS-NN.git"
# Submodules the Arm bare-metal library build configures or includes (measured: the CMake configure
# fails 17 s in without them), each with a file that is there when the submodule is checked out.
ARM_BUILD_SUBMODULES: dict[str, str] = {
    "third-party/flatbuffers": "CMakeLists.txt",
    "third-party/flatcc": "CMakeLists.txt",
    "third-party/json": "CMakeLists.txt",
    "third-party/gflags": "CMakeLists.txt",
    "third-party/pocketfft": "pocketfft_hdronly.h",
    "backends/xnnpack/third-party/FXdiv": "CMakeLists.txt",
}
SUBMODULE_COMMAND = "git submodule update --init --recursive"


@dataclass
class Checkout:
    """An ExecuTorch source tree."""

    root: Path
    source: str                      # how it was found: "--et-root", "EXECUTORCH_ROOT"
    version: str | None              # version.txt
    commit: str | None               # git HEAD, read from .git without running git
    package_version: str | None      # installed `executorch` distribution
    warnings: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)   # (cause, fix): the build would fail

    def require_buildable(self) -> None:
        """BadInputError (exit 2) naming every cause and fix when the library build is certain to fail."""
        if self.problems:
            raise BadInputError(" ".join(c for c, _ in self.problems), " ".join(f for _, f in self.problems))


@dataclass
class CmsisNn:
    """CMSIS-NN sources: a local path, or what ExecuTorch's CMake would fetch."""

    path: Path | None
    source: str
    fetch_tag: str | None = None
    note: str = ""


def installed_package_version(dist: str = "executorch") -> str | None:
    """Version of an installed distribution via importlib.metadata (no import of the package)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _base_version(v: str) -> str:
    """`1.5.0a0+abc`, `1.5.0.dev20260101` -> `1.5.0`."""
    m = re.match(r"\d+(?:\.\d+)*", v.strip())
    return m.group(0) if m else v.strip()


def git_head(root: Path) -> str | None:
    """Commit of HEAD, from .git/HEAD, loose refs or packed-refs (worktrees: the gitdir file)."""
    git = root / ".git"
    if git.is_file():  # worktree or submodule: "gitdir: <path>"
        text = git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            git = (root / text.split(":", 1)[1].strip()).resolve()
    head = git / "HEAD"
    if not head.is_file():
        return None
    ref = head.read_text(errors="replace").strip()
    if not ref.startswith("ref:"):
        return ref or None
    name = ref.split(":", 1)[1].strip()
    bases = [git]
    if (git / "commondir").is_file():  # worktree: refs live in the main repository's .git
        bases.append((git / (git / "commondir").read_text().strip()).resolve())
    for base in bases:
        loose = base / name
        if loose.is_file():
            return loose.read_text().strip()
        packed = base / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(errors="replace").splitlines():
                if line.endswith(" " + name):
                    return line.split(" ", 1)[0]
    return None


def inspect_checkout(root: str | Path, source: str = "--et-root") -> Checkout:
    """Validate an ExecuTorch checkout and read its version; BadInputError when it is not one."""
    path = Path(root).expanduser()
    if not path.is_dir():
        raise BadInputError(f"ExecuTorch checkout {path} ({source}) does not exist.",
                            "Pass the directory of a `git clone https://github.com/pytorch/executorch`.")
    if not (path / RUNNER_SOURCE).is_file():
        raise BadInputError(
            f"{path} ({source}) is not an ExecuTorch checkout: {RUNNER_SOURCE} is missing.",
            "Pass the top directory of an ExecuTorch source tree (the one holding version.txt).")
    path = path.resolve()
    version_file = path / "version.txt"
    version = version_file.read_text().strip() if version_file.is_file() else None
    pkg = installed_package_version()
    co = Checkout(path, source, version, git_head(path), pkg)
    co.problems = build_problems(path)
    if version is None:
        co.warnings.append("version.txt is missing: cannot compare with the installed executorch package.")
    elif pkg is None:
        co.warnings.append("The executorch Python package is not installed: models cannot be lowered here.")
    elif _base_version(version) != _base_version(pkg):
        co.warnings.append(
            f"Checkout version {version} differs from the installed executorch package {pkg}: a .pte "
            "lowered with the package may use operators the checkout's runtime lacks (e.g. *_nhwc "
            "cortex_m ops); check backends/cortex_m/ops/operators.yaml or check out the matching tag.")
    return co


def unseen_warnings(checkout: Checkout, state_dir: Path) -> list[str]:
    """The checkout's warnings not yet shown for this checkout and these versions; marks them shown.

    The checkout-vs-package version warning is true on every run but news only once: `cmlens run`
    shows it the first time, `cmlens doctor` always."""
    state = Path(state_dir) / "shown-warnings.json"
    try:
        seen = set(json.loads(state.read_text()))
    except (OSError, ValueError, TypeError):
        seen = set()
    fresh = []
    for w in checkout.warnings:
        key = hashlib.sha1(f"{checkout.root}\0{w}".encode()).hexdigest()[:16]
        if key not in seen:
            fresh.append(w)
            seen.add(key)
    if fresh:
        try:
            state.parent.mkdir(parents=True, exist_ok=True)
            state.write_text(json.dumps(sorted(seen)))
        except OSError:
            pass              # a read-only cache only means the warning shows again next time
    return fresh


def missing_submodules(root: Path) -> list[str]:
    """The Arm build's submodules that are absent or empty in the checkout at `root`."""
    return [sub for sub, marker in ARM_BUILD_SUBMODULES.items() if not (root / sub / marker).is_file()]


def build_problems(root: Path) -> list[tuple[str, str]]:
    """(cause, fix) for what makes ExecuTorch's CMake fail on this checkout before it compiles anything."""
    out: list[tuple[str, str]] = []
    if root.name != "executorch":
        out.append((f"The checkout directory is named `{root.name}`, and ExecuTorch's CMake requires it to be "
                    "named exactly `executorch` (CMakeLists.txt: FATAL_ERROR, pytorch/executorch#6475).",
                    f"Rename it: mv {root} {root.parent / 'executorch'} (a symlink is not enough: the build "
                    "uses the real path)."))
    missing = missing_submodules(root)
    if missing:
        is_git = (root / ".git").exists()
        fix = (f"cd {root} && {SUBMODULE_COMMAND}" if is_git else
               f"This checkout has no git metadata: put the sources of these submodules at those paths "
               f"(the commits are in the checkout's .gitmodules and git tree), or clone with git and run "
               f"{SUBMODULE_COMMAND}.")
        out.append((f"The checkout lacks {len(missing)} submodule(s) the Arm build needs: " + ", ".join(missing) + ".",
                    fix))
    return out


def find_checkout(explicit: str | Path | None = None, env: Mapping[str, str] | None = None) -> Checkout | None:
    """The checkout from `explicit` (a flag or setting), else $EXECUTORCH_ROOT, else None."""
    env = os.environ if env is None else env
    if explicit:
        return inspect_checkout(explicit, "--et-root")
    if env.get("EXECUTORCH_ROOT"):
        return inspect_checkout(env["EXECUTORCH_ROOT"], "EXECUTORCH_ROOT")
    return None


def _is_cmsis_nn(path: Path) -> bool:
    return (path / "Include" / "arm_nnfunctions.h").is_file()


def cmsis_nn_fetch_tag(checkout: Checkout | None) -> str | None:
    """The CMSIS-NN tag the checkout's backends/cortex_m/CMakeLists.txt would fetch."""
    if checkout is None:
        return None
    cml = checkout.root / "backends" / "cortex_m" / "CMakeLists.txt"
    if not cml.is_file():
        return None
    text = cml.read_text(errors="replace")
    m = re.search(r'CMSIS_NN_VERSION\s+"([^"]+)"', text) or re.search(
        r"CMSIS-NN\.git\s+GIT_TAG\s+(\S+)", text)
    return m.group(1) if m else None


def find_cmsis_nn(explicit: str | Path | None = None, checkout: Checkout | None = None,
                  env: Mapping[str, str] | None = None) -> CmsisNn:
    """CMSIS-NN from `explicit`, $CMSIS_NN_PATH, or a previous ExecuTorch build's _deps; otherwise
    describe the FetchContent download ExecuTorch's CMake does (needs network)."""
    env = os.environ if env is None else env
    tag = cmsis_nn_fetch_tag(checkout)
    for value, source in ((explicit, "--cmsis-nn"), (env.get("CMSIS_NN_PATH"), "CMSIS_NN_PATH")):
        if value:
            p = Path(value).expanduser()
            if not _is_cmsis_nn(p):
                raise BadInputError(f"{p} ({source}) is not CMSIS-NN: Include/arm_nnfunctions.h is missing.",
                                    "Clone it: " + cmsis_nn_clone_command(tag))
            return CmsisNn(p.resolve(), source, tag)
    if checkout is not None:
        for p in sorted(checkout.root.glob("cmake-out*/_deps/cmsis_nn-src")):
            if _is_cmsis_nn(p):
                return CmsisNn(p, "previous ExecuTorch build", tag)
    note = (f"ExecuTorch's CMake fetches CMSIS-NN {tag or '(tag in backends/cortex_m/CMakeLists.txt)'} "
            f"from {CMSIS_NN_REPO} (needs network). Offline: {cmsis_nn_clone_command(tag)} and pass "
            "--cmsis-nn PATH (-DFETCHCONTENT_SOURCE_DIR_CMSIS_NN=PATH).")
    return CmsisNn(None, "FetchContent", tag, note)


def cmsis_nn_clone_command(tag: str | None, dest: str = "CMSIS-NN", repo: str = CMSIS_NN_REPO) -> str:
    """Commands that give the CMSIS-NN sources the checkout pins. `git clone -b` takes a branch or tag,
    not a commit (the pin is a commit sha), so: clone, then check the commit out."""
    if not tag:
        return f"git clone {repo} {dest}"
    return f"git clone {repo} {dest} && git -C {dest} checkout {tag}"


def can_reach(address: str | None = None, timeout: float = 3.0) -> bool:
    """True when a TCP connection to `address` (host:port; default $CMLENS_NETWORK_PROBE, else
    github.com:443) opens: ExecuTorch's CMake downloads CMSIS-NN from GitHub when no local tree is
    given, and fails offline only after the configure has run."""
    address = address or os.environ.get("CMLENS_NETWORK_PROBE") or "github.com:443"
    host, _, port_text = address.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        host, port = address, 443
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def offline_cmsis_nn_error(tag: str | None) -> BadInputError:
    """No CMSIS-NN tree and no way to download one: the build cannot succeed."""
    return BadInputError(
        "No CMSIS-NN sources were given and github.com cannot be reached: ExecuTorch's CMake would try to "
        f"download CMSIS-NN {tag or ''} and fail.".replace("  ", " "),
        f"Get the sources where there is network ({cmsis_nn_clone_command(tag)}), copy them here and pass "
        "--cmsis-nn PATH (or set CMSIS_NN_PATH).")
