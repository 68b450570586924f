"""`doctor` with the tools present and absent, and ExecuTorch checkout / CMSIS-NN discovery."""
from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from app.cli.doctor import cmd_doctor
from backend_core.common.errors import BadInputError
from backend_core.target.toolchain import checkout as co
from backend_core.target.doctor.machine import run_doctor
from backend_core.target.toolchain.tools import version_number

APT_TOOLCHAIN = "apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib"


def _fake_checkout(root: Path, version: str = "1.5.1", tag: str = "v7.0.0") -> Path:
    (root / "examples/arm/executor_runner").mkdir(parents=True)
    (root / "examples/arm/executor_runner/arm_executor_runner.cpp").write_text("// runner\n")
    (root / "version.txt").write_text(version + "\n")
    (root / "backends/cortex_m").mkdir(parents=True)
    (root / "backends/cortex_m/CMakeLists.txt").write_text(
        f'set(CMSIS_NN_VERSION\n    "{tag}"\n    CACHE STRING "CMSIS-NN version to download"\n)\n')
    from tests.helpers.checkouts import add_submodules

    add_submodules(root)
    git = root / ".git"
    (git / "refs/heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "packed-refs").write_text("# pack-refs\n" + "ab" * 20 + " refs/heads/main\n")
    return root


def test_doctor_with_tools_present(toolchain) -> None:
    report = run_doctor(env={})
    assert report.ok
    found = {i.name: i for i in report.items if i.status == "ok"}
    for name in ("arm-none-eabi-gcc", "newlib (libc_nano.a)", "cmake", "ninja", "qemu-system-arm"):
        assert name in found, name
    assert version_number(found["arm-none-eabi-gcc"].detail.split("(", 1)[1])  # e.g. 12.2.1
    assert "QEMU emulator version" in found["qemu-system-arm"].detail
    text = report.to_text()
    assert "Everything the QEMU target flow needs is present." in text
    assert APT_TOOLCHAIN not in text


def test_doctor_with_tools_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: nothing is found
    out = io.StringIO()
    code = cmd_doctor(argparse.Namespace(et_root=None, cmsis_nn=None, json=False), out=out)
    text = out.getvalue()
    assert code == 2
    assert f"fix: {APT_TOOLCHAIN}" in text or f"fix: sudo {APT_TOOLCHAIN}" in text
    for cmd in ("apt-get install -y cmake", "apt-get install -y ninja-build", "apt-get install -y qemu-system-arm"):
        assert cmd in text
    assert "[MISS] FVP_Corstone_SSE-300_Ethos-U55 (optional)" in text
    assert "developer.arm.com" in text
    assert "required item(s) missing" in text


def test_doctor_json(toolchain) -> None:
    out = io.StringIO()
    assert cmd_doctor(argparse.Namespace(et_root=None, cmsis_nn=None, json=True), out=out) == 0
    data = json.loads(out.getvalue())
    assert data["ok"] is True
    assert any(i["name"] == "qemu-system-arm" and i["status"] == "ok" for i in data["items"])


def test_checkout_from_env_version_mismatch_and_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fake_checkout(tmp_path / "executorch", version="1.6.0a0")
    monkeypatch.setattr(co, "installed_package_version", lambda dist="executorch": "1.5.1")
    c = co.find_checkout(None, env={"EXECUTORCH_ROOT": str(root)})
    assert c is not None and c.source == "EXECUTORCH_ROOT"
    assert c.version == "1.6.0a0" and c.package_version == "1.5.1"
    assert c.commit == "ab" * 20
    assert len(c.warnings) == 1 and "differs from the installed executorch package 1.5.1" in c.warnings[0]
    assert c.problems == []
    same = co.inspect_checkout(_fake_checkout(tmp_path / "et2" / "executorch", version="1.5.1"))
    assert same.warnings == [] and same.problems == []


def test_no_checkout_and_bad_checkout(tmp_path: Path) -> None:
    assert co.find_checkout(None, env={}) is None
    with pytest.raises(BadInputError, match="is not an ExecuTorch checkout"):
        co.find_checkout(tmp_path, env={})
    report = run_doctor(et_root=tmp_path / "missing", env={})
    item = next(i for i in report.items if i.name == "ExecuTorch checkout")
    assert item.status == "missing" and "does not exist" in item.detail
    assert not report.ok


def test_installed_package_version_without_import() -> None:
    import sys

    before = "executorch" in sys.modules
    co.installed_package_version()
    assert ("executorch" in sys.modules) == before
    assert co.installed_package_version("no-such-distribution-cmlens") is None


def test_cmsis_nn_discovery(tmp_path: Path) -> None:
    checkout = co.inspect_checkout(_fake_checkout(tmp_path / "et", tag="v7.0.0"))
    nn = co.find_cmsis_nn(None, checkout, env={})
    assert nn.path is None and nn.fetch_tag == "v7.0.0"
    assert "-DFETCHCONTENT_SOURCE_DIR_CMSIS_NN" in nn.note and "git -C CMSIS-NN checkout v7.0.0" in nn.note
    assert " -b " not in nn.note
    src = tmp_path / "CMSIS-NN"
    (src / "Include").mkdir(parents=True)
    (src / "Include/arm_nnfunctions.h").write_text("")
    assert co.find_cmsis_nn(None, checkout, env={"CMSIS_NN_PATH": str(src)}).path == src.resolve()
    with pytest.raises(BadInputError, match="is not CMSIS-NN"):
        co.find_cmsis_nn(tmp_path, checkout, env={})


def test_toolchain_found_in_executorch_arm_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ExecuTorch's setup.sh puts the Arm GNU toolchain under examples/arm/arm-scratch."""
    root = _fake_checkout(tmp_path / "et")
    bindir = root / "examples/arm/arm-scratch/arm-gnu-toolchain-13.3.rel1-x86_64-arm-none-eabi/bin"
    bindir.mkdir(parents=True)
    gcc = bindir / "arm-none-eabi-gcc"
    gcc.write_text("#!/bin/sh\necho 'arm-none-eabi-gcc (Arm GNU Toolchain 13.3.Rel1) 13.3.1 20240614'\n")
    gcc.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    report = run_doctor(et_root=root, env={})
    item = next(i for i in report.items if i.name == "arm-none-eabi-gcc")
    assert item.status == "ok" and str(gcc) in item.detail and "13.3.1" in item.detail


def test_doctor_lists_cached_executorch_libraries(tmp_path) -> None:
    import json

    from backend_core.target.toolchain.checkout import Checkout
    from backend_core.target.doctor.machine import _library_cache_item

    commit = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
    co = Checkout(tmp_path, "--et-root", "1.5.0", commit, "1.5.1")
    assert _library_cache_item(co, tmp_path).status == "info"
    d = tmp_path / "executorch" / "cff6f4dd32e6-cortex-m55-release"
    d.mkdir(parents=True)
    (d / "cmlens-libs.json").write_text(json.dumps({"commit": commit, "cpu": "cortex-m55", "build_type": "Release",
                                                    "cold_build_s": 753.4}))
    item = _library_cache_item(co, tmp_path)
    assert item.status == "ok" and item.detail.startswith("built for cortex-m55 Release (cold build 753 s)")
