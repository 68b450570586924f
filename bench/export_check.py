"""Cold `--check`-style build of an exported bundle with its selective op list vs the current road
(`cmlens run`: slim libraries + the stock runner), side by side: wall time and firmware flash, ratio.

  .venv/bin/python bench/export_check.py --et-root PATH/TO/executorch --cmsis-nn PATH/TO/CMSIS-NN \
      [--model ds_cnn] [--target cortex-m55]

Both start cold with the compiler cache off (CCACHE_DISABLE=1) in fresh temporary folders:
  bundle   `cmlens export`, then a user project with the check's main.c (uses only the bundle's API)
           configured WITHOUT CMLENS_ET_INSTALL_DIR: cmlens_model.cmake builds ExecuTorch's libraries for
           the CPU itself (cmlens's recipe, no devtools), then registers only the program's ops;
  runner   `cmlens run MODEL --cache-dir <fresh>`: the slim libraries (with ETDump/bundled program, as
           `cmlens run` builds them) and the stock arm_executor_runner with cortex_m_ops_lib whole.
Flash = code + rodata + .data image + the model (arm-none-eabi-size -A, memory/elf.py). The bundle's
library build writes into the checkout (flatcc), so it holds the checkout's build lock."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_core.common.boards.table import board_for  # noqa: E402
from backend_core.target.export.check import FIRMWARE, MAIN_C, check_inputs_header, project_cmakelists, _bundled_inputs  # noqa: E402
from backend_core.target.memory.elf import elf_sizes  # noqa: E402
from backend_core.target.build.libraries import codegen_python  # noqa: E402
from backend_core.target.build.paths import KERNELS_DIR  # noqa: E402
from backend_core.target.build.steps import checkout_lock  # noqa: E402

CMLENS = ROOT / ".venv" / "bin" / "cmlens"
LOGS = Path(tempfile.gettempdir()) / "cmlens-bench-export-logs"      # kept after the run: what failed, if anything


def _flash(elf: Path) -> int:
    s = elf_sizes(elf)
    return s["flash_code"] + s["model_in_image"]


def bundle_road(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> dict:
    from backend_core.orchestration.jobs import ExportOptions, LowerRequest, execute_job
    from backend_core.orchestration.jobs.steps.export import export_job

    start = time.monotonic()
    res = execute_job(export_job(args.model, LowerRequest(target=args.target), None,
                             ExportOptions(output=str(tmp / "bundle")), args.et_root, args.cmsis_nn))
    res.raise_error()
    export_s = time.monotonic() - start
    info = json.loads((tmp / "bundle" / "bundle.json").read_text())
    project = tmp / "project"
    project.mkdir()
    (project / "main.c").write_text(MAIN_C)
    bpte = res.lowering.blobs["model.bpte"]
    (project / "check_inputs.h").write_text(check_inputs_header(_bundled_inputs(bpte),
                                                                [o["nbytes"] for o in info["io"]["outputs"]]))
    (project / "CMakeLists.txt").write_text(project_cmakelists(tmp / "bundle"))
    board = board_for(args.target)
    flags = " ".join(board.gcc_flags)
    build = project / "build"
    argv = ["cmake", "-G", "Ninja", "-S", str(project), "-B", str(build),
            f"-DCMAKE_TOOLCHAIN_FILE={KERNELS_DIR}/cmake/arm-none-eabi-gcc.cmake", f"-DCMLENS_BOARD={board.name}",
            f"-DCMLENS_ET_ROOT={args.et_root}", f"-DCMLENS_CMSIS_NN={args.cmsis_nn}", f"-DCMLENS_PYTHON={codegen_python()}",
            f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}"]
    log = (LOGS / "bundle-build.log").open("w")
    start = time.monotonic()
    with checkout_lock(Path(args.et_root), threading.Event(), lambda s, line: None, None):
        subprocess.run(argv, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)     # builds the libraries
        configure_s = time.monotonic() - start
        subprocess.run(["cmake", "--build", str(build)], check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
    total = time.monotonic() - start
    return {"road": "bundle (selective ops)", "export_s": export_s, "configure_s": configure_s, "build_s": total,
            "flash": _flash(build / f"{FIRMWARE}.elf"), "ops": len(info["selective_build"]["ops"])}


def runner_road(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> dict:
    out = tmp / "run.json"
    start = time.monotonic()
    subprocess.run([str(CMLENS), "run", args.model, "--target", args.target, "--et-root", args.et_root,
                    "--cmsis-nn", args.cmsis_nn, "--cache-dir", str(tmp / "cache"), "--quiet", "--json-file", str(out)],
                   check=False, stdout=(LOGS / "runner.log").open("w"), stderr=subprocess.STDOUT, env=env)
    total = time.monotonic() - start
    data = json.loads(out.read_text())
    elf = Path(data.get("elf") or "")
    timings = data.get("timings_s") or {}
    return {"road": "cmlens run (slim libraries + stock runner)", "build_s": total,
            "libraries_s": timings.get("libraries_s"), "flash": _flash(elf) if elf.is_file() else None,
            "outcome": data.get("outcome")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--et-root", required=True)
    ap.add_argument("--cmsis-nn", required=True)
    ap.add_argument("--model", default="ds_cnn")
    ap.add_argument("--target", default="cortex-m55")
    args = ap.parse_args()
    env = {**os.environ, "CCACHE_DISABLE": "1"}
    LOGS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cmlens-bench-export-") as d:
        tmp = Path(d)
        (tmp / "b").mkdir()
        (tmp / "r").mkdir()
        a = bundle_road(args, tmp / "b", env)
        b = runner_road(args, tmp / "r", env)
    print(f"{args.model} on {args.target}, cold, ccache off (load average at the end: {os.getloadavg()[0]:.1f})")
    print(f"{'road':46} {'wall s':>8} {'flash B':>10}")
    for r in (a, b):
        print(f"{r['road']:46} {r['build_s']:8.1f} {r['flash'] or 0:10,}")
    print(f"bundle: export {a['export_s']:.1f} s, configure (with the library build) {a['configure_s']:.1f} s, "
          f"{a['ops']} ops registered; runner: libraries {b.get('libraries_s') or 0:.1f} s, outcome {b.get('outcome')}")
    if b["flash"]:
        print(f"ratio bundle/runner: time {a['build_s'] / b['build_s']:.2f}x, flash {a['flash'] / b['flash']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
