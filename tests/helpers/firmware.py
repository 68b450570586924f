"""The target-flow fixtures: the firmware of kernels/ built once per session per board
(a cold build into a temporary directory), and checks that the Debian tools CI installs are here."""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from backend_core.common.boards.table import board_for
from backend_core.target.build.kernels import FIRMWARES, BuildRequest, BuildResult, KernelBuilder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "uart"
QEMU_TARGETS = ("cortex-m55", "cortex-m4", "cortex-m7", "cortex-m33")
NEEDED = ("arm-none-eabi-gcc", "cmake", "ninja", "qemu-system-arm")


@pytest.fixture(scope="session")
def toolchain() -> None:
    """Fail (not skip) when a tool is missing: `make test` installs them via scripts/install_sysdeps.sh."""
    missing = [t for t in NEEDED if shutil.which(t) is None]
    assert not missing, (f"missing {missing}; run: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi "
                         "libstdc++-arm-none-eabi-newlib qemu-system-arm cmake ninja-build")


@pytest.fixture(scope="session")
def build_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cmlens-build")


@pytest.fixture(scope="session")
def build_timings() -> dict[str, float]:
    """Cold build seconds per board, printed at the end of the session (see -s / -rA)."""
    return {}


_BUILDS: dict[str, BuildResult] = {}


@pytest.fixture(scope="session")
def firmware(toolchain, build_root: Path, build_timings: dict[str, float]):
    """firmware(target, sim="qemu") -> BuildResult with every firmware variant of kernels/selftest."""

    def get(target: str, sim: str = "qemu") -> BuildResult:
        board = board_for(target, sim)
        if board.name not in _BUILDS:
            start = time.monotonic()
            _BUILDS[board.name] = KernelBuilder(BuildRequest(board, FIRMWARES, build_root=build_root)).run()
            build_timings[board.name] = time.monotonic() - start
        return _BUILDS[board.name]

    return get
