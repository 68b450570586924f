"""The built wheel installs into a fresh venv and works with no clone: its `cmlens selftest` builds the
board layer from the wheel's own kernels/ sources and runs it on QEMU.

The fresh venv gets only the wheel (`--no-deps`); torch, ExecuTorch and Qt come from the test venv's
site-packages through a plain path entry (no .pth of it is processed, so the clone's editable install is
not visible there)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(ROOT),
                  "-w", str(tmp / "dist")], tmp)
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = next((tmp / "dist").glob("cortexm_lens-*.whl"))
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], tmp)
    assert made.returncode == 0, made.stderr
    site = Path(_run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp).stdout.strip())
    (site / "cmlens_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    inst = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], tmp)
    assert inst.returncode == 0, inst.stderr[-3000:]
    return venv


def test_the_wheel_carries_the_board_sources_and_finds_them_outside_the_clone(installed: Path, tmp_path) -> None:
    r = _run([str(installed / "bin" / "python"), "-c",
              "import app, backend_core; from backend_core.common.kernel_sources import kernels_dir; "
              "print(app.__file__); print(kernels_dir())"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    app_file, kernels = r.stdout.split()
    assert str(ROOT) not in app_file and str(installed) in app_file          # the wheel's code, not the clone's
    assert str(installed) in kernels and (Path(kernels) / "boards.json").is_file()
    assert (Path(kernels) / "runner" / "CMakeLists.txt").is_file() and (Path(kernels) / "common" / "startup.c").is_file()


@pytest.mark.skipif(not (shutil.which("arm-none-eabi-gcc") and shutil.which("qemu-system-arm")),
                    reason="needs the Arm toolchain and QEMU (make test installs them)")
def test_selftest_runs_from_the_installed_wheel(installed: Path, tmp_path) -> None:
    r = _run([str(installed / "bin" / "cmlens"), "selftest", "--sim", "qemu", "--target", "cortex-m55",
              "--build-dir", str(tmp_path / "build")], tmp_path)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "PASS" in r.stdout


def test_version_and_a_history_store_work_from_the_installed_wheel(installed: Path, tmp_path) -> None:
    """`cmlens --version` (a bug report's first lines) and the history store's migrations (package data:
    the Alembic scripts) come with the wheel."""
    r = _run([str(installed / "bin" / "cmlens"), "--version"], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert [line.split()[0] for line in r.stdout.splitlines()][:5] == ["cmlens", "python", "torch", "torchao",
                                                                         "executorch"]
    r = _run([str(installed / "bin" / "python"), "-c",
              "from backend_core.orchestration.history import open_store; s = open_store('h.db'); print(s.models())"], tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr[-2000:]
