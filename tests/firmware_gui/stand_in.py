"""A stand-in for an ExecuTorch checkout, so the panel's target run goes through every step of the job
worker without one (as tests/simulate/test_cli_run.py does for `cmlens run`): a checkout tree that passes
the checks, a `cmake` on PATH that "installs" the libraries and copies a real kernels/ firmware (built
here once per session with the real toolchain) in place of the runner, and a tiny .bpte whose one
operator the checkout has. The firmware then runs on real QEMU."""
from __future__ import annotations

import os
from pathlib import Path

from backend_core.common.boards.table import board_for
from backend_core.target.build.kernels import FIRMWARES, BuildRequest, BuildResult, KernelBuilder

_BUILDS: dict[str, BuildResult] = {}


def kernel_firmware(build_root: Path) -> BuildResult:
    """The kernels/ firmwares for QEMU M55 (a cold build the first time in a session)."""
    if "m55" not in _BUILDS:
        _BUILDS["m55"] = KernelBuilder(BuildRequest(board_for("cortex-m55"), FIRMWARES,
                                                    build_root=build_root)).run()
    return _BUILDS["m55"]


def stand_in_run(tmp_path: Path, monkeypatch, panel, variant: str, hang_build: bool = False) -> Path:
    """Set up the stand-in checkout, CMSIS-NN, cache and `cmake` (the runner is the firmware `variant`;
    `hang_build`: the libraries' build never ends), point the panel's form at them; returns the .bpte."""
    from tests.helpers.checkouts import fake_checkout, fake_cmsis_nn
    from tests.helpers.programs import CORTEX_M_YAML, make_bpte, make_pte

    elf = kernel_firmware(Path(os.environ.get("CMLENS_TEST_BUILD_ROOT", str(tmp_path.parent / "kernels-build"))))
    elf = elf.elfs[variant]
    root = fake_checkout(tmp_path)
    (root / "backends/cortex_m/ops").mkdir(parents=True)
    (root / "backends/cortex_m/ops/operators.yaml").write_text(CORTEX_M_YAML.read_text())
    model = tmp_path / "m.bpte"
    model.write_bytes(make_bpte(make_pte([[("cortex_m::quantized_linear", "out")]])))
    install = ('mkdir -p "$(dirname "$2")/install/lib/cmake/ExecuTorch" && '
               'touch "$(dirname "$2")/install/lib/cmake/ExecuTorch/executorch-config.cmake"')
    if hang_build:
        install = 'echo "fake cmake: building forever"; sleep 900 & wait'   # a grandchild, as ninja's compilers are
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    (bindir / "cmake").write_text(f"""#!/bin/sh
echo "fake cmake $*"
if [ "$1" = "--build" ]; then
  case "$*" in
    *"--target install"*) {install} ;;
    *arm_executor_runner*) cp "{elf}" "$2/arm_executor_runner.elf" ;;
  esac
fi
""")
    (bindir / "cmake").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")   # the worker inherits it
    monkeypatch.setenv("CMLENS_CACHE_DIR", str(tmp_path / "cache"))           # libraries + runner builds
    panel.et_root.setText(str(root))
    panel.cmsis.setText(str(fake_cmsis_nn(tmp_path)))
    panel.etdump.setChecked(False)
    panel.profile.setChecked(False)
    panel.timeout.setValue(20)
    return model


def descendants(pid: int) -> dict[int, str]:
    """Every live process under `pid` (children of children too), with its command line."""
    parent: dict[int, int] = {}
    cmd: dict[int, str] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            parent[int(d.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            cmd[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
    out: dict[int, str] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        for child, par in parent.items():
            if par == p and child not in out:
                out[child] = cmd.get(child, "")
                todo.append(child)
    return out
