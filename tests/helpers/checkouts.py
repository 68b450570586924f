"""Stand-ins for an ExecuTorch checkout and a CMSIS-NN tree: the files the checks read, nothing built.
Shared by the build, toolchain, doctor, simulate and window tests (CI has no checkout)."""
from __future__ import annotations

from pathlib import Path


def fake_checkout(tmp_path: Path) -> Path:
    root = tmp_path / "src" / "executorch"
    (root / "examples/arm/executor_runner").mkdir(parents=True, exist_ok=True)
    (root / "examples/arm/executor_runner/arm_executor_runner.cpp").write_text("// stub\n")
    (root / "CMakePresets.json").write_text("{}")
    (root / "version.txt").write_text("1.5.0a0\n")
    add_submodules(root)
    return root


def add_submodules(root: Path) -> None:
    """The files that say the Arm build's submodules are checked out (checkout.ARM_BUILD_SUBMODULES)."""
    from backend_core.target.toolchain.checkout import ARM_BUILD_SUBMODULES

    for sub, marker in ARM_BUILD_SUBMODULES.items():
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / marker).write_text("")


def fake_cmsis_nn(tmp_path: Path) -> Path:
    src = tmp_path / "CMSIS-NN"
    (src / "Include").mkdir(parents=True, exist_ok=True)
    (src / "Include/arm_nnfunctions.h").write_text("")
    return src
