"""The ExecuTorch library / runner build driver without ExecuTorch: command lines, cache keys, the
stamp, the per-checkout lock and streaming, with a fake `cmake` on PATH standing in for the real one."""
from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.common.boards.table import board_for
from backend_core.common.errors import BuildError, Cancelled
from backend_core.target.build.libraries import (CONFIG_FILE, EtLibRequest, ensure_libraries, is_built, library_build_command,
                                                 library_configure_command)
from backend_core.target.build.steps import checkout_lock
from tests.helpers.checkouts import fake_checkout
from backend_core.target.build.runner import (RUNNER_SOURCE_DIR, RunnerRequest, build_runner, portable_ops, runner_build_command,
                                              runner_configure_command)

COMMIT = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"


def request(tmp_path: Path, **kw) -> EtLibRequest:
    kw.setdefault("cmsis_nn", tmp_path / "CMSIS-NN")
    return EtLibRequest(fake_checkout(tmp_path), "cortex-m55", "Release", python="/venv/bin/python",
                        cache_root=tmp_path / "cache", commit=COMMIT, jobs=2, **kw)


def test_library_command_lines(tmp_path: Path) -> None:
    req = request(tmp_path)
    assert req.legacy_key == "cff6f4dd32e6-cortex-m55-release"
    assert req.key == f"cff6f4dd32e6-cortex-m55-release-{req.variant()}" and len(req.variant()) == 8
    root = tmp_path / "cache" / "executorch" / req.key
    assert req.build_dir == root / "build" and req.install_dir == root / "install"
    argv = library_configure_command(req)
    assert argv[:9] == ["cmake", "-S", str(req.et_root), "-B", str(root / "build"), "--preset", "arm-baremetal",
                        "-G", "Ninja"]
    assert argv[9:] == [
        "-DCMAKE_BUILD_TYPE=Release", "-DTARGET_CPU=cortex-m55", "-DEXECUTORCH_BUILD_ARM_BAREMETAL=OFF",
        "-DEXECUTORCH_BUILD_PTHREADPOOL=OFF", "-DEXECUTORCH_BUILD_CPUINFO=OFF", "-DEXECUTORCH_BUILD_DEVTOOLS=ON",
        "-DEXECUTORCH_BUILD_ARM_ETDUMP=ON", "-DEXECUTORCH_BAREMETAL_SKIP_INSTALL=OFF",
        f"-DCMAKE_INSTALL_PREFIX={root / 'install'}", "-DPYTHON_EXECUTABLE=/venv/bin/python",
        f"-DFETCHCONTENT_SOURCE_DIR_CMSIS_NN={tmp_path / 'CMSIS-NN'}", "-DFETCHCONTENT_FULLY_DISCONNECTED=ON",
        # only what the runner links (build_speed.py); no FLATC_EXECUTABLE: this checkout has no flatbuffers
        "-DEXECUTORCH_BUILD_PORTABLE_OPS=OFF", "-DEXECUTORCH_BUILD_KERNELS_QUANTIZED=OFF"]
    assert library_build_command(req) == ["cmake", "--build", str(root / "build"), "-j", "2", "--target", "install"]
    full = request(tmp_path, slim=False)          # CMLENS_FULL_LIBRARIES=1: the whole preset, its own directory
    assert not any("PORTABLE_OPS" in a for a in library_configure_command(full)) and full.root != req.root


def test_library_command_without_cmsis_nn_lets_cmake_fetch(tmp_path: Path) -> None:
    req = request(tmp_path, cmsis_nn=None, etdump=False)
    argv = library_configure_command(req)
    assert not any("FETCHCONTENT" in a for a in argv)
    assert "-DEXECUTORCH_BUILD_DEVTOOLS=OFF" in argv


def test_key_depends_on_commit_cpu_and_build_type(tmp_path: Path) -> None:
    a = request(tmp_path)
    b = EtLibRequest(a.et_root, "cortex-m4", "Debug", commit="0123456789abcdef", cache_root=a.cache_root)
    assert b.key.startswith("0123456789ab-cortex-m4-debug-")
    c = EtLibRequest(a.et_root, "cortex-m4", commit=None, cache_root=a.cache_root)   # not a git checkout
    assert c.commit is None and c.key.startswith("nogit-") and "-cortex-m4-release-" in c.key


def test_options_that_change_defines_get_their_own_build_directory(tmp_path: Path) -> None:
    """--cmsis-nn or not, ETDump or not, another checkout: never one build tree reconfigured back and forth."""
    a = request(tmp_path)
    variants = [request(tmp_path, cmsis_nn=None), request(tmp_path, etdump=False),
                EtLibRequest(a.et_root, "cortex-m55", "Release", tmp_path / "CMSIS-NN", python="/other/python",
                             cache_root=a.cache_root, commit=COMMIT)]
    roots = {a.root, *(v.root for v in variants)}
    assert len(roots) == 4 and all(r.parent == a.root.parent for r in roots)


def install_fake_cmake(tmp_path: Path, fail: bool = False, sleep: float = 0.0) -> dict[str, str]:
    """A `cmake` that logs its argv, prints lines, and on `--build ... install` writes the config file."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "cmake"
    script.write_text(f"""#!/bin/sh
echo "$@" >> "{tmp_path}/cmake.log"
echo "-- fake cmake $1"
echo "warning on stderr" >&2
sleep {sleep}
if [ "$1" = "-S" ]; then mkdir -p "$4" && touch "$4/build.ninja"; fi
if [ "$1" = "--build" ]; then
  {'echo "FAILED: undefined reference to cortex_m::foo"; exit 1' if fail else ''}
  prefix=$(dirname "$2")/install
  mkdir -p "$prefix/lib/cmake/ExecuTorch" && touch "$prefix/{CONFIG_FILE}"
  echo "$prefix/{CONFIG_FILE}" > "$2/install_manifest.txt"
fi
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    # ninja -n: what tmp_path/ninja-dry-run.txt says, else nothing to rebuild
    (bindir / "ninja").write_text(f"""#!/bin/sh
if [ -f "{tmp_path}/ninja-dry-run.txt" ]; then cat "{tmp_path}/ninja-dry-run.txt"; else echo "ninja: no work to do."; fi
""")
    (bindir / "ninja").chmod(0o755)
    (bindir / "arm-none-eabi-gcc").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "arm-none-eabi-gcc").chmod(0o755)
    return {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_ensure_libraries_builds_once_then_uses_the_cache(tmp_path: Path) -> None:
    req = request(tmp_path)
    env = install_fake_cmake(tmp_path)
    lines: list[tuple[str, str]] = []
    libs = ensure_libraries(req, on_line=lambda s, t: lines.append((s, t)), env=env)
    assert not libs.cached and libs.install_dir == req.install_dir
    assert ("stdout", "-- fake cmake -S") in lines and ("stderr", "warning on stderr") in lines
    assert any(s == "cmlens" and t.startswith("$ ") and "--preset arm-baremetal" in t for s, t in lines)
    stamp = json.loads(req.stamp.read_text())
    assert stamp["commit"] == COMMIT and stamp["cpu"] == "cortex-m55" and stamp["defines"] == req.defines()
    assert stamp["cold_build_s"] == pytest.approx(stamp["configure_s"] + stamp["build_s"], abs=0.02)
    assert is_built(req)
    again = ensure_libraries(req, env=env)
    assert again.cached and again.cold_build_s == stamp["cold_build_s"]
    assert again.freshness is not None and again.freshness.up_to_date       # asked ninja, not only the stamp
    assert len((tmp_path / "cmake.log").read_text().splitlines()) == 2   # configure + build, once
    other = request(tmp_path, etdump=False)                                # other options: their own build
    assert not is_built(other) and other.root != req.root
    req.stamp.write_text(json.dumps({**stamp, "cold_build_s": 1413.0}))   # as the real M55 cold build recorded
    (tmp_path / "ninja-dry-run.txt").write_text("[1/2] Building C object kernels/op_add.c.obj\n[2/2] Linking\n")
    rebuilt = ensure_libraries(req, env=env)             # a source changed: incremental, no configure
    assert not rebuilt.cached and rebuilt.cold_build_s == 1413.0 and rebuilt.configure_s == 0.0
    assert json.loads(req.stamp.read_text())["cold_build_s"] == 1413.0   # the record survives the rebuild
    assert [ln.split()[0] for ln in (tmp_path / "cmake.log").read_text().splitlines()] == ["-S", "--build", "--build"]


def test_ensure_libraries_failure_names_the_cause(tmp_path: Path) -> None:
    req = request(tmp_path)
    with pytest.raises(BuildError) as exc:
        ensure_libraries(req, env=install_fake_cmake(tmp_path, fail=True))
    assert "ExecuTorch library build failed: the link failed" in exc.value.message
    assert "undefined reference to cortex_m::foo" in exc.value.detail
    assert not req.stamp.exists()


def test_ensure_libraries_rejects_a_tree_without_presets(tmp_path: Path) -> None:
    req = request(tmp_path)
    (req.et_root / "CMakePresets.json").unlink()
    with pytest.raises(BadInputError, match="no CMakePresets.json"):
        ensure_libraries(req, env=install_fake_cmake(tmp_path))


def test_one_build_per_checkout_and_cancel_while_waiting(tmp_path: Path) -> None:
    root = fake_checkout(tmp_path)
    cache = tmp_path / "cache"
    msgs: list[str] = []
    held = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with checkout_lock(root, threading.Event(), lambda s, t: None, cache):
            held.set()
            release.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        with checkout_lock(root, cancel, lambda s, m: msgs.append(m), cache):
            pass
    assert time.monotonic() - start < 3
    assert msgs and "one at a time per checkout" in msgs[0]
    release.set()
    t.join()


def test_cancel_stops_a_running_library_build(tmp_path: Path) -> None:
    req = request(tmp_path)
    env = install_fake_cmake(tmp_path, sleep=30)
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    start = time.monotonic()
    with pytest.raises(Cancelled):
        ensure_libraries(req, env=env, cancel_event=cancel)
    assert time.monotonic() - start < 10


def test_runner_command_lines(tmp_path: Path) -> None:
    from backend_core.target.build.libraries import EtLibraries

    lib_req = request(tmp_path)
    libs = EtLibraries(lib_req, lib_req.install_dir, True, 0.0, 0.0)
    model = tmp_path / "ds_cnn.bpte"
    model.write_bytes(b"\x00\x00\x00\x00BP08fake")
    ops = ["cortex_m::quantized_conv2d.out", "aten::view_copy.out", "executorch_prim::et_view.default",
           "quantized_decomposed::add.out", "dim_order_ops::_clone_dim_order.out"]
    req = RunnerRequest(board_for("cortex-m55"), libs, model=model, ops=ops, build_root=tmp_path / "runner")
    # `.contiguous()` lowers to dim_order_ops::_clone_dim_order: a portable kernel the runner must register
    assert portable_ops(ops) == ["aten::view_copy.out", "dim_order_ops::_clone_dim_order.out",
                                 "quantized_decomposed::add.out"]
    assert req.bundle_io
    assert req.build_dir.parent == tmp_path / "runner" / lib_req.key
    assert req.build_dir.name.startswith("mps3-an547-baked-")
    argv = runner_configure_command(req, "cmake", "/usr/bin/ninja")
    assert argv[:7] == ["cmake", "-G", "Ninja", "-S", str(RUNNER_SOURCE_DIR), "-B", str(req.build_dir)]
    d = dict(a[2:].split("=", 1) for a in argv[7:])
    assert d["CMAKE_MAKE_PROGRAM"] == "/usr/bin/ninja"
    assert d["CMLENS_BOARD"] == "mps3-an547" and d["EXECUTORCH_ROOT"] == str(lib_req.et_root)
    assert d["ET_INSTALL_DIR"] == str(lib_req.install_dir) and d["ET_BUNDLE_IO"] == "ON"
    assert d["ET_PTE_FILE_PATH"] == str(req.build_dir / "model.bpte")
    assert d["CMLENS_PORTABLE_OPS"] == "aten::view_copy.out,dim_order_ops::_clone_dim_order.out,quantized_decomposed::add.out"
    assert d["ET_ATOL"] == "0.01" and d["SEMIHOSTING"] == "OFF" and d["EXECUTORCH_ENABLE_EVENT_TRACER"] == "OFF"
    assert d["CMAKE_TOOLCHAIN_FILE"].endswith("kernels/cmake/arm-none-eabi-gcc.cmake")
    assert runner_build_command(req) == ["cmake", "--build", str(req.build_dir), "--target", "arm_executor_runner"]
    # another model -> another build directory; the same model -> the same one
    other = tmp_path / "other.bpte"
    other.write_bytes(b"\x00\x00\x00\x00BP08other")
    assert RunnerRequest(board_for("cortex-m55"), libs, model=other, ops=ops,
                         build_root=tmp_path / "runner").build_dir != req.build_dir
    assert d["CMLENS_OWN_OPS"] == "OFF"
    # a program with the project's own ops (kernels/ops) compiles them: its own build directory
    own = RunnerRequest(board_for("cortex-m55"), libs, model=model, ops=[*ops, "cmlens::window.out"],
                        build_root=tmp_path / "runner")
    assert dict(a[2:].split("=", 1) for a in runner_configure_command(own)[7:])["CMLENS_OWN_OPS"] == "ON"
    assert own.build_dir != req.build_dir
    semi = RunnerRequest(board_for("cortex-m4"), libs, ops=ops, semihosting=True, build_root=tmp_path / "runner")
    sd = dict(a[2:].split("=", 1) for a in runner_configure_command(semi)[7:])
    assert "ET_PTE_FILE_PATH" not in sd and sd["SEMIHOSTING"] == "ON" and sd["CMLENS_BOARD"] == "mps2-an386"


def test_runner_build_streams_and_reuses_the_directory(tmp_path: Path) -> None:
    from backend_core.target.build.libraries import EtLibraries

    env = install_fake_cmake(tmp_path)
    lib_req = request(tmp_path)
    libs = EtLibraries(lib_req, lib_req.install_dir, True, 0.0, 0.0)
    model = tmp_path / "m.pte"
    model.write_bytes(b"\x00\x00\x00\x00ET12")
    req = RunnerRequest(board_for("cortex-m55"), libs, model=model, build_root=tmp_path / "runner")
    lines: list[str] = []
    first = build_runner(req, on_line=lambda s, t: lines.append(t), env=env)
    assert not first.reused and req.model_copy.read_bytes() == model.read_bytes()
    assert any("-S " + str(RUNNER_SOURCE_DIR) in t for t in lines)
    (req.build_dir / "build.ninja").write_text("")       # what a real configure leaves behind
    second = build_runner(req, env=env)
    assert second.reused and second.configure_s == 0.0
    log = (tmp_path / "cmake.log").read_text().splitlines()
    assert [ln.split()[0] for ln in log] == ["-G", "--build", "--build"]


def test_diagnosis_of_a_link_error_is_not_mistaken_for_missing_newlib() -> None:
    from backend_core.target.build.kernels import diagnose

    lines = [": && arm-none-eabi-g++ -O3 --specs=nano.specs -u _printf_float main.o -o runner.elf",
             "arm_executor_runner.cpp:(.text+0x566): undefined reference to `executorch::etdump::ETDumpGen'"]
    assert diagnose(lines)[0] == "the link failed (a symbol is missing)"


def test_one_interpreter_under_two_names_is_one_library_variant(tmp_path) -> None:
    """A spawned worker runs as .venv/bin/python3.11, the CLI as .venv/bin/python: the same program,
    which made two variants and rebuilt every CPU's libraries (2026-12-01)."""
    import sys

    from backend_core.target.build.libraries import EtLibRequest, codegen_python

    (tmp_path / "python").symlink_to(sys.executable)
    (tmp_path / "python3.11").symlink_to(tmp_path / "python")
    assert codegen_python(str(tmp_path / "python3.11")) == str(tmp_path / "python")
    a = EtLibRequest(tmp_path, "cortex-m4", python=codegen_python(str(tmp_path / "python3.11")), commit="c" * 40)
    b = EtLibRequest(tmp_path, "cortex-m4", python=codegen_python(str(tmp_path / "python")), commit="c" * 40)
    assert a.key == b.key
    other = tmp_path / "other"
    other.mkdir()
    (other / "python").write_text("")                    # a different interpreter keeps its own variant
    assert EtLibRequest(tmp_path, "cortex-m4", python=str(other / "python"), commit="c" * 40).key != a.key
