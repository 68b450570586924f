"""Stale ExecuTorch libraries (issue 20): a source edited after a build is rebuilt, never answered from
the stamp. A real cmake + ninja + arm-none-eabi-gcc build of a tiny checkout that ensure_libraries drives
exactly as it drives ExecuTorch (`--preset arm-baremetal`, the same -D options, `--target install`): CI
has no ExecuTorch checkout, and a real one takes 5-10 minutes to build."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from backend_core.target.build.libraries import EtLibRequest, ensure_libraries, read_stamp
from tests.helpers.fake_checkout import make_checkout

pytestmark = pytest.mark.skipif(any(shutil.which(t) is None for t in ("cmake", "ninja", "arm-none-eabi-gcc")),
                                reason="needs cmake, ninja and arm-none-eabi-gcc (scripts/install_sysdeps.sh)")


def installed(req: EtLibRequest) -> bytes:
    return (req.install_dir / "lib" / "libcortex_m_kernels.a").read_bytes()


def build(req: EtLibRequest, lines: list[str] | None = None):
    return ensure_libraries(req, on_line=(lambda s, t: lines.append(t)) if lines is not None else None,
                            env={**os.environ})


def test_an_edited_source_is_rebuilt_not_answered_from_the_stamp(tmp_path: Path) -> None:
    et, cmsis = make_checkout(tmp_path)
    req = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2)
    assert req.commit                                      # a git checkout: the key has its HEAD
    first = build(req)
    assert not first.cached and b"kernel-v1" in installed(req) and b"cmsis-v1" in installed(req)

    lines: list[str] = []
    again = build(req, lines)                              # nothing changed: ninja has no work
    assert again.cached and again.freshness is not None and again.freshness.up_to_date
    assert any("ninja: no work to do" in t for t in lines)

    # An uncommitted edit of a header the kernel includes: same commit, same key, new libraries.
    (et / "backends/cortex_m/ops/kernel_version.h").write_text('#define KERNEL_VERSION "kernel-v2"\n')
    lines.clear()
    edited = build(req, lines)
    assert not edited.cached and edited.configure_s == 0.0          # incremental: ninja, no reconfigure
    assert any("out of date" in t for t in lines)
    assert b"kernel-v2" in installed(req) and b"kernel-v1" not in installed(req)
    assert read_stamp(req)["cold_build_s"] == pytest.approx(first.cold_build_s, abs=0.01)   # the cold record stays

    # CMSIS-NN's tree is a source too.
    (cmsis / "Source/arm_add.c").write_text('const char cmlens_cmsis[] = "cmsis-v2";\n')
    assert not build(req).cached and b"cmsis-v2" in installed(req)
    assert build(req).cached

    # An installed library deleted by hand is installed again.
    (req.install_dir / "lib" / "libcortex_m_kernels.a").unlink()
    assert not build(req).cached and b"kernel-v2" in installed(req)


def test_etdump_and_cmsis_nn_variants_do_not_flip_one_build(tmp_path: Path) -> None:
    """Runs with and without ETDump (or --cmsis-nn) each keep their own configured build."""
    et, cmsis = make_checkout(tmp_path)
    on = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2, etdump=True)
    off = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2, etdump=False)
    assert not build(on).cached and not build(off).cached
    assert on.root != off.root
    assert b"etdump-on" in installed(on) and b"etdump-off" in installed(off)
    assert build(on).cached and build(off).cached           # neither reconfigured the other
    assert b"etdump-on" in installed(on)


def test_a_build_from_before_variants_is_still_used(tmp_path: Path) -> None:
    """A cache directory named `<commit>-<cpu>-<type>` (before variants had their own) with the same
    defines is adopted, not built again from scratch (a cold ExecuTorch build is 5-10 minutes)."""
    et, cmsis = make_checkout(tmp_path)
    req = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2)
    legacy_root = req.root.parent / req.legacy_key

    class OldDriver(EtLibRequest):
        @property
        def root(self) -> Path:          # the directory name the driver used before
            return legacy_root

    assert not build(OldDriver(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2)).cached
    assert req.root == legacy_root and build(req).cached          # adopted: no second cold build
    other = EtLibRequest(et, "cortex-m55", "Release", cmsis, cache_root=tmp_path / "cache", jobs=2, etdump=False)
    assert other.root != legacy_root                              # other defines: not that build
