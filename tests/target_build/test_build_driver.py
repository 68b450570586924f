"""The build driver: exact cmake argument lists, cache location, failure diagnosis, missing tools,
cancellation."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from backend_core.common.boards.table import BOARDS, board_for
from backend_core.target.build.paths import KERNELS_DIR, cache_dir
from backend_core.target.build.kernels import BuildRequest, KernelBuilder, build_command, configure_command, diagnose
from backend_core.common.errors import BuildError, Cancelled, ToolMissingError


def test_configure_and_build_command_lines(tmp_path: Path) -> None:
    req = BuildRequest(board_for("cortex-m4"), ("cmlens_selftest", "cmlens_hang"), build_root=tmp_path)
    bdir = req.build_dir
    assert bdir.parent == tmp_path and bdir.name.startswith("kernels-mps2-an386-release-")
    assert configure_command(req, "/usr/bin/cmake", "/usr/bin/ninja") == [
        "/usr/bin/cmake", "-G", "Ninja", "-S", str(KERNELS_DIR), "-B", str(bdir),
        f"-DCMAKE_TOOLCHAIN_FILE={KERNELS_DIR / 'cmake' / 'arm-none-eabi-gcc.cmake'}",
        "-DCMLENS_BOARD=mps2-an386", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja"]
    assert build_command(req, "cmake") == ["cmake", "--build", str(bdir), "--target", "cmlens_selftest",
                                           "cmlens_hang"]
    assert req.elf("cmlens_hang") == bdir / "selftest" / "cmlens_hang.elf"


def test_toolchain_dir_build_type_and_defines_are_arguments_not_shell(tmp_path: Path) -> None:
    req = BuildRequest(board_for("cortex-m55"), build_type="Debug", build_root=tmp_path,
                       toolchain_bin=Path("/opt/arm gnu/bin"), defines={"CMLENS_SEMIHOSTING_ARGS": "ON"})
    argv = configure_command(req)
    assert req.build_dir.name.startswith("kernels-mps3-an547-debug-")
    assert "-DCMAKE_BUILD_TYPE=Debug" in argv
    assert "-DCMLENS_TOOLCHAIN_PREFIX=/opt/arm gnu/bin" in argv  # one argument, space kept
    assert argv[-1] == "-DCMLENS_SEMIHOSTING_ARGS=ON"


def test_cache_dir_default_and_overrides(tmp_path: Path) -> None:
    assert cache_dir({"CMLENS_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert cache_dir({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/cmlens")
    assert cache_dir({}) == Path.home() / ".cache" / "cmlens"
    assert BuildRequest(BOARDS["mps2-an500"]).build_dir.parent.name == "build"


@pytest.mark.parametrize("output, cause, fix", [
    ("CMake Error: No CMAKE_C_COMPILER could be found.", "arm-none-eabi-gcc is missing",
     "apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib"),
    ("arm-none-eabi-gcc: fatal error: cannot read spec file 'nano.specs': No such file or directory",
     "newlib", "apt-get install -y libnewlib-arm-none-eabi"),
    ("ld: region `DTCM' overflowed by 1024 bytes", "does not fit", "reduce the firmware size"),
    ("main.c:(.text+0x8): undefined reference to `foo'", "link failed", "undefined symbol"),
])
def test_failure_diagnosis(output: str, cause: str, fix: str) -> None:
    got_cause, got_fix = diagnose(["[1/2] Building", output])
    assert cause in got_cause and fix in got_fix


def test_missing_tools_name_the_install_command(tmp_path: Path) -> None:
    req = BuildRequest(board_for("cortex-m4"), build_root=tmp_path)
    with pytest.raises(ToolMissingError) as exc:
        KernelBuilder(req, env={"PATH": str(tmp_path)}).run()
    assert exc.value.exit_code == 2
    assert "apt-get install -y cmake" in exc.value.hint
    builder = KernelBuilder(req, env={"PATH": str(tmp_path)}, cmake="/usr/bin/cmake", ninja="/usr/bin/ninja")
    with pytest.raises(ToolMissingError) as exc:
        builder.run()
    assert exc.value.tool == "arm-none-eabi-gcc"
    assert "apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi" in exc.value.user_text()


def test_cmake_error_becomes_a_build_error_with_the_output(toolchain, tmp_path: Path) -> None:
    """A failing configure (here: an unknown board) is a BuildError naming cause, fix and output."""
    from dataclasses import replace

    bogus = replace(BOARDS["mps2-an386"], name="no-such-board")
    lines: list[str] = []
    with pytest.raises(BuildError) as exc:
        KernelBuilder(BuildRequest(bogus, build_root=tmp_path), on_line=lambda s, line: lines.append(line)).run()
    assert exc.value.exit_code == 3
    assert "cmake configure failed for board no-such-board: the board name is unknown" in exc.value.message
    assert "Unknown CMLENS_BOARD 'no-such-board'" in exc.value.detail
    assert any("Known boards: mps3-an547" in line for line in lines)  # streamed while it ran


def test_cancel_during_the_build(toolchain, tmp_path: Path) -> None:
    cancel = threading.Event()
    seen: list[str] = []

    def on_line(stream: str, line: str) -> None:
        seen.append(line)
        if line.startswith("-- "):  # cmake is running: cancel from the callback
            cancel.set()

    req = BuildRequest(board_for("cortex-m7"), build_root=tmp_path)
    with pytest.raises(Cancelled):
        KernelBuilder(req, on_line=on_line, cancel_event=cancel).run()
    assert not req.elf("cmlens_selftest").exists()
    assert not any("Linking" in line for line in seen)


def test_two_checkouts_get_separate_build_trees(tmp_path) -> None:
    """CMake refuses a build tree configured from another source tree (CI clones next to a dev tree)."""
    from backend_core.common.boards.table import board_for
    from backend_core.target.build.kernels import BuildRequest

    board = board_for("cortex-m55")
    a = BuildRequest(board, build_root=tmp_path, source_dir=tmp_path / "checkout-a" / "kernels")
    b = BuildRequest(board, build_root=tmp_path, source_dir=tmp_path / "checkout-b" / "kernels")
    assert a.build_dir != b.build_dir
    assert a.build_dir == BuildRequest(board, build_root=tmp_path, source_dir=a.source_dir).build_dir
