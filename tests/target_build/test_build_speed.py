"""What makes a new CPU's library build short, on plain files (CI has no ExecuTorch checkout): the
runner compiles only the kernels of its model's ops (found in the checkout's kernel registry and
sources), the wheel's flatc is used only when it is the checkout's flatbuffers version, ccache is the
compiler launcher, and ninja's [N/M] lines become percentage lines."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend_core.target.build.speed import (NinjaProgress, checkout_flatbuffers_version, compiler_cache_env, parse_progress,
                                             progress_text, wheel_flatc)
from backend_core.target.build.runner import kernel_sources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "target"


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "executorch"
    cpu = root / "kernels" / "portable" / "cpu"
    (cpu / "pattern").mkdir(parents=True)
    shutil.copy(FIXTURES / "portable_functions_excerpt.yaml", root / "kernels" / "portable" / "functions.yaml")
    (cpu / "op_add.cpp").write_text('#include <executorch/kernels/portable/cpu/pattern/pattern.h>\n'
                                    "Tensor& add_out(\n    KernelRuntimeContext& ctx, const Tensor& a) { return a; }\n")
    (cpu / "op_view_copy.cpp").write_text("Tensor& view_copy_out(KernelRuntimeContext& ctx, const Tensor& a);\n")
    # softmax_out is defined in op_softmax.cpp; op_log_softmax.cpp only calls it (a call passes `ctx`)
    (cpu / "op_log_softmax.cpp").write_text("Tensor& f(KernelRuntimeContext& ctx) { return softmax_out(ctx, a); }\n")
    (cpu / "op_softmax.cpp").write_text("Tensor& softmax_out(executorch::runtime::KernelRuntimeContext& ctx) {}\n")
    (cpu / "op_unused.cpp").write_text("Tensor& unused_out(KernelRuntimeContext& ctx) {}\n")
    (cpu / "pattern" / "unary_ufunc_realhbf16.cpp").write_text("// pattern\n")
    # the checkout's op_tanh.cpp: the kernel is defined by a pattern macro, not a function signature
    (cpu / "op_tanh.cpp").write_text('#include <executorch/kernels/portable/cpu/pattern/pattern.h>\n'
                                     "DEFINE_UNARY_UFUNC_REALHBBF16_TO_FLOATHBF16(tanh_out, std::tanh)\n")
    return root


def test_the_runner_compiles_only_the_kernels_of_its_ops(tmp_path: Path) -> None:
    root = _checkout(tmp_path)
    cpu = root / "kernels" / "portable" / "cpu"
    got = kernel_sources(root, ["cortex_m::quantized_conv2d.out", "aten::view_copy.out", "aten::_softmax.out",
                                "executorch_prim::et_view.default"])
    assert got == {"portable": [str(cpu / "op_softmax.cpp"), str(cpu / "op_view_copy.cpp")], "quantized": []}
    with_pattern = kernel_sources(root, ["aten::add.out"])["portable"]
    assert with_pattern == [str(cpu / "op_add.cpp"), str(cpu / "pattern" / "unary_ufunc_realhbf16.cpp")]
    # a float tanh kept by the model: without op_tanh.cpp the link said "undefined reference to tanh_out"
    assert kernel_sources(root, ["aten::tanh.out"])["portable"] == [
        str(cpu / "op_tanh.cpp"), str(cpu / "pattern" / "unary_ufunc_realhbf16.cpp")]
    assert kernel_sources(root, ["aten::not_in_the_registry.out"]) == {"portable": [], "quantized": []}
    assert kernel_sources(tmp_path / "no-checkout", ["aten::add.out"]) == {"portable": [], "quantized": []}


def test_the_wheels_flatc_only_for_the_checkouts_flatbuffers_version(tmp_path: Path) -> None:
    pytest.importorskip("executorch")
    inc = tmp_path / "executorch" / "third-party" / "flatbuffers" / "include" / "flatbuffers"
    inc.mkdir(parents=True)

    def version(v: str) -> None:
        a, b, c = v.split(".")
        inc.joinpath("base.h").write_text(f"#define FLATBUFFERS_VERSION_MAJOR {a}\n#define FLATBUFFERS_VERSION_MINOR {b}\n"
                                          f"#define FLATBUFFERS_VERSION_REVISION {c}\n")
    version("24.3.25")                  # what executorch 1.5.1's wheel ships (flatc version 24.3.25)
    assert checkout_flatbuffers_version(tmp_path / "executorch") == "24.3.25"
    flatc = wheel_flatc(tmp_path / "executorch")
    assert flatc is not None and flatc.endswith("executorch/data/bin/flatc")
    version("23.5.26")                  # generated headers static_assert the version: ExecuTorch builds its own
    assert wheel_flatc(tmp_path / "executorch") is None
    assert wheel_flatc(tmp_path / "nothing") is None


def test_ccache_is_the_compiler_launcher_when_installed(tmp_path: Path) -> None:
    env = compiler_cache_env({"PATH": "/usr/bin:/bin"}, tmp_path)
    if shutil.which("ccache", path="/usr/bin:/bin"):
        assert env["CMAKE_CXX_COMPILER_LAUNCHER"].endswith("ccache") and env["CMAKE_C_COMPILER_LAUNCHER"]
        assert env["CCACHE_DIR"] == str(tmp_path / "ccache") and env["CCACHE_BASEDIR"] == str(tmp_path.resolve())
    assert compiler_cache_env({"PATH": str(tmp_path)}, tmp_path) == {"PATH": str(tmp_path)}   # no ccache: as is


def test_ninja_lines_become_percentages() -> None:
    meter = NinjaProgress("ExecuTorch libraries for cortex-m4")
    lines = [f"[{i}/120] Building CXX object x{i}.obj" for i in range(1, 121)]
    out = [t for t in (meter.feed(x) for x in ["-- Configuring done"] + lines) if t]
    assert out[0] == "ExecuTorch libraries for cortex-m4: 0% (1/120 steps)"
    assert out[-1] == "ExecuTorch libraries for cortex-m4: 100% (120/120 steps)"
    assert len(out) == 21                        # every 5 %, not once per step
    assert parse_progress(out[10]) == ("ExecuTorch libraries for cortex-m4", 50, 60, 120)
    fine = NinjaProgress("x", every=1)
    assert len([t for t in (fine.feed(x) for x in lines) if t]) == 101
    assert parse_progress("cmlens: something else") is None
    assert progress_text("runner", 3, 7) == "runner: 42% (3/7 steps)"


def test_an_install_with_another_cpus_flatcc_runtime_is_out_of_date(tmp_path: Path) -> None:
    """flatcc archives libflatccrt.a into the checkout, one file for every CPU's build: an incremental
    M4 rebuild installed the M55's and the M4 runner faulted (undefined instruction) setting up the ETDump."""
    import subprocess

    from backend_core.target.build.shared_outputs import (OBJECTS, SHARED_ARCHIVE, archive_members, forget_shared_archive,
                                                          installed_runtime_is_this_builds)

    if not shutil.which("ar"):
        pytest.skip("binutils' ar is not installed")
    build, install = tmp_path / "build", tmp_path / "install"
    objs = build / OBJECTS
    objs.mkdir(parents=True)
    (install / "lib").mkdir(parents=True)
    names = ["builder.c.obj", "json_printer.c.obj"]            # a long name goes to the `//` table
    for n in names:
        (objs / n).write_bytes(b"objects of this CPU " + n.encode())
    lib = install / "lib" / "libflatccrt.a"
    subprocess.run(["ar", "rc", str(lib), *[str(objs / n) for n in names]], check=True)
    assert set(archive_members(lib)) == set(names)
    assert installed_runtime_is_this_builds(build, install)
    (objs / "builder.c.obj").write_bytes(b"objects of another CPU")     # what the shared archive held
    assert not installed_runtime_is_this_builds(build, install)
    assert installed_runtime_is_this_builds(tmp_path / "nothing", install)   # nothing to compare: no claim
    shared = tmp_path / "executorch" / SHARED_ARCHIVE
    shared.parent.mkdir(parents=True)
    shared.write_bytes(b"!<arch>\n")
    forget_shared_archive(tmp_path / "executorch")
    assert not shared.exists()
    forget_shared_archive(tmp_path / "executorch")               # already gone: fine
