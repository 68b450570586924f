"""What makes ExecuTorch's library build fail before it compiles anything, found by doctor and by
`cmlens run` before any build (issue 9, item 4/6): missing submodules, a checkout directory not named
`executorch`, no CMSIS-NN without network; the cached builds of a checkout without git metadata; the
version warning once; a CMSIS-NN clone command that works. The inputs are real directory trees, a
real closed local port (the "no network" case) and real git."""
from __future__ import annotations

import json
import shlex
import socket
import subprocess
from pathlib import Path

import pytest

from backend_core.target.toolchain import checkout as co
from backend_core.target.doctor.machine import run_doctor
from tests.helpers.cli import run_cli
from tests.helpers.checkouts import fake_checkout, fake_cmsis_nn


def closed_port() -> str:
    """host:port on loopback that refuses connections: a machine without network, for real."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"127.0.0.1:{port}"


def _missing(report, name: str) -> list:
    return [i for i in report.items if i.name == name and i.status == "missing"]


def test_missing_submodules_named_by_doctor_and_run_before_any_build(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    for sub in ("third-party/flatcc", "third-party/pocketfft"):
        for f in (root / sub).iterdir():
            f.unlink()
    report = run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={})
    [item] = _missing(report, "ExecuTorch checkout")
    assert "lacks 2 submodule(s) the Arm build needs: third-party/flatcc, third-party/pocketfft" in item.detail
    assert "no git metadata" in item.fix           # this tree has no .git: git submodule cannot help
    assert not report.ok and "required item(s) missing" in report.to_text()
    (root / ".git").mkdir()
    [item] = _missing(run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={}), "ExecuTorch checkout")
    assert item.fix == f"cd {root.resolve()} && git submodule update --init --recursive"
    code, out, err = run_cli(["run", "ds_cnn", "--et-root", str(root), "--cmsis-nn", str(fake_cmsis_nn(tmp_path)),
                              "--cache-dir", str(tmp_path / "c")])
    assert code == 2 and "third-party/flatcc, third-party/pocketfft" in err
    assert "git submodule update --init --recursive" in err
    assert not (tmp_path / "c").exists() and "lowering" not in out       # stopped before lowering or building


def test_checkout_directory_must_be_named_executorch(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path).rename(tmp_path / "src" / "et-main")
    report = run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={})
    [item] = _missing(report, "ExecuTorch checkout")
    assert "named `et-main`" in item.detail and "named exactly `executorch`" in item.detail
    assert item.fix.startswith(f"Rename it: mv {root} {root.parent / 'executorch'}")
    code, _, err = run_cli(["run", "ds_cnn", "--et-root", str(root), "--cmsis-nn", str(fake_cmsis_nn(tmp_path))])
    assert code == 2 and "named exactly `executorch`" in err and "mv " in err


def test_no_cmsis_nn_and_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMLENS_NETWORK_PROBE", closed_port())
    root = fake_checkout(tmp_path)
    (root / "backends/cortex_m/CMakeLists.txt").parent.mkdir(parents=True, exist_ok=True)
    (root / "backends/cortex_m/CMakeLists.txt").write_text('set(CMSIS_NN_VERSION\n    "dbf45dbf"\n)\n')
    report = run_doctor(et_root=root, env={})
    [item] = _missing(report, "CMSIS-NN")
    assert "github.com cannot be reached" in item.detail
    assert "git -C CMSIS-NN checkout dbf45dbf" in item.fix and "--cmsis-nn PATH" in item.fix
    monkeypatch.delenv("CMSIS_NN_PATH", raising=False)
    code, out, err = run_cli(["run", "ds_cnn", "--et-root", str(root), "--cache-dir", str(tmp_path / "c")])
    assert code == 2 and "github.com cannot be reached" in err and "--cmsis-nn PATH" in err
    assert "lowering" not in out
    # with a local tree nothing is downloaded, so the network does not matter
    assert not _missing(run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={}), "CMSIS-NN")


def test_cached_libraries_of_a_checkout_without_git(tmp_path: Path) -> None:
    from backend_core.target.build.libraries import EtLibRequest

    root = fake_checkout(tmp_path)                       # no .git: the cache key hashes the path
    checkout = co.inspect_checkout(root)
    assert checkout.commit is None
    item = run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={}, cache_root=tmp_path / "cache")
    libs = next(i for i in item.items if i.name == "ExecuTorch libraries")
    assert libs.status == "info" and "not built yet for this checkout" in libs.detail
    assert "15 min" not in libs.detail and "5-11 min" in libs.detail
    req = EtLibRequest(checkout.root, "cortex-m4", cache_root=tmp_path / "cache")
    req.root.mkdir(parents=True)
    req.stamp.write_text(json.dumps({"commit": None, "cpu": "cortex-m4", "build_type": "Release",
                                     "et_root": str(checkout.root), "cold_build_s": 412.0}))
    item = run_doctor(et_root=root, cmsis_nn=fake_cmsis_nn(tmp_path), env={}, cache_root=tmp_path / "cache")
    libs = next(i for i in item.items if i.name == "ExecuTorch libraries")
    assert libs.status == "ok" and libs.detail.startswith("built for cortex-m4 Release (cold build 412 s)")


def test_version_warning_once_per_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(co, "installed_package_version", lambda dist="executorch": "1.5.1")
    root = fake_checkout(tmp_path)                       # version.txt says 1.5.0a0
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # stops at the missing QEMU, after the warning
    argv = ["run", "ds_cnn", "--et-root", str(root), "--cache-dir", str(tmp_path / "c"),
            "--cmsis-nn", str(fake_cmsis_nn(tmp_path))]
    _, first, _ = run_cli(argv)
    _, second, _ = run_cli(argv)
    assert "warning: Checkout version 1.5.0a0 differs from the installed executorch package 1.5.1" in first
    assert "differs from the installed" not in second
    report = run_doctor(et_root=root, env={}, reach=lambda: True)      # doctor always shows it
    assert any("differs from the installed" in i.detail for i in report.items)


def test_cmsis_nn_clone_command_checks_out_a_pinned_commit(tmp_path: Path) -> None:
    """The hint's commands, run as they are against a real repository: clone + checkout of a commit
    sha works; the old `git clone -b <sha>` does not."""
    repo = tmp_path / "upstream"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("pinned\n")
    subprocess.run([*git, "-C", str(repo), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "pinned"], check=True)
    pinned = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    (repo / "f").write_text("newer\n")
    subprocess.run([*git, "-C", str(repo), "commit", "-qam", "newer"], check=True)

    cmd = co.cmsis_nn_clone_command(pinned, dest=str(tmp_path / "CMSIS-NN"), repo=str(repo))
    for part in cmd.split(" && "):
        subprocess.run(shlex.split(part), check=True, capture_output=True, cwd=tmp_path)
    assert (tmp_path / "CMSIS-NN" / "f").read_text() == "pinned\n"
    old = subprocess.run(["git", "clone", str(repo), str(tmp_path / "old"), "-b", pinned], capture_output=True,
                         text=True)
    assert old.returncode != 0 and "not found" in old.stderr


def test_offline_without_cmsis_nn_is_only_a_warning_once_libraries_are_built(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from backend_core.target.build.libraries import EtLibRequest

    monkeypatch.setenv("CMLENS_NETWORK_PROBE", closed_port())
    root = fake_checkout(tmp_path)
    req = EtLibRequest(co.inspect_checkout(root).root, "cortex-m55", cache_root=tmp_path / "cache")
    req.root.mkdir(parents=True)
    req.stamp.write_text(json.dumps({"commit": None, "cpu": "cortex-m55", "build_type": "Release",
                                     "et_root": str(req.et_root), "cold_build_s": 700.0}))
    report = run_doctor(et_root=root, env={}, cache_root=tmp_path / "cache")
    item = next(i for i in report.items if i.name == "CMSIS-NN")
    assert item.status == "warning" and "built for cortex-m55 Release" in item.detail
    assert report.ok
