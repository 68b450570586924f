"""Open time of an ExecuTorch .pte (default: MobileNetV2's, 3.9 MB) to its graph on screen, in the
running app: from `open_model(path)` to the program stage's scene shown (worker process started, program
read, snapshot streamed, layout, scene). Printed side by side with Netron, never asserted.

Three situations, alternating, each in a fresh cache directory:
  cold       nothing cached: the worker imports torch/ExecuTorch once to read the kernels' schemas
  new file   the version-keyed schema table exists (any artefact opened before): no torch import
  reopen     the same file again: read result and layout from the cache

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/open_pte.py [--pte F] [--repeat N]
Without --pte, mv2 is lowered once (cached) and its .pte written to a temporary file.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
NETRON_S = (1.5, 1.9)        # Netron 9.3.3 in a browser on this machine, same file (FACTS / issue 13)

CHILD = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from app.shell.main_window import MainWindow
w = MainWindow(); w.resize(1500, 920); w.show()
pte = sys.argv[1]
def go():
    t0 = time.perf_counter()
    def shown(i):
        if w.graph.is_showing(w.state.stage) and w.session.snapshots and w.session.status == "done":
            print("SHOWN", time.perf_counter() - t0, len(w.session.snapshots[-1].nodes), w.session.from_cache,
                  "torch" in sys.modules, flush=True)
            w.close(); app.quit()
    w.graph.sceneShown.connect(shown)
    w.session.finished.connect(lambda s: shown(0))
    w.open_model(pte)
QTimer.singleShot(200, go)
QTimer.singleShot(120000, lambda: (print("TIMEOUT", flush=True), app.quit()))
app.exec()
"""


def mv2_pte(out: Path) -> Path:
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    res = lower("mv2", PipelineOptions(), outputs=LowerOutputs(pte=True))
    out.write_bytes(res.blobs["model.pte"])
    return out


def run_once(pte: Path, cache: Path, settings: Path) -> tuple[float, int, bool, bool]:
    env = dict(os.environ, CMLENS_CACHE=str(cache), CMLENS_SETTINGS=str(settings))
    out = subprocess.run([sys.executable, "-c", CHILD, str(pte)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=180).stdout
    line = next((ln for ln in out.splitlines() if ln.startswith(("SHOWN", "TIMEOUT"))), "TIMEOUT")
    if line.startswith("TIMEOUT"):
        raise SystemExit(f"no graph on screen within 120 s:\n{out[-2000:]}")
    _, secs, nodes, cached, torch_in_gui = line.split()
    return float(secs), int(nodes), cached == "True", torch_in_gui == "True"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pte", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        pte = args.pte or mv2_pte(root / "mv2.pte")
        times: dict[str, list[float]] = {"cold": [], "new file": [], "reopen": []}
        nodes, gui_torch = 0, False
        for _ in range(args.repeat):
            cold = Path(tempfile.mkdtemp(dir=root))
            t, nodes, _, gt = run_once(pte, cold, cold / "s.ini")
            times["cold"].append(t)
            gui_torch |= gt
            fresh = Path(tempfile.mkdtemp(dir=root))      # only the schema table carried over
            shutil.copytree(cold / "schemas", fresh / "schemas")
            t, _, cached, gt = run_once(pte, fresh, fresh / "s.ini")
            assert not cached
            times["new file"].append(t)
            t, _, cached, gt = run_once(pte, fresh, fresh / "s.ini")
            times["reopen"].append(t)
            gui_torch |= gt
    load = os.getloadavg()
    print(f"open {pte.name} ({pte.stat().st_size / 1e6:.1f} MB, {nodes} nodes in the program stage) to the graph "
          f"on screen, median of {args.repeat} (torch imported in the GUI process: {gui_torch}; load average "
          f"{load[0]:.1f} on {os.cpu_count()} cores: wall times grow with it):")
    for k, v in times.items():
        m = statistics.median(v)
        print(f"  {k:9s} {m:6.2f} s   (runs: {', '.join(f'{x:.2f}' for x in v)})   "
              f"vs Netron {NETRON_S[0]}-{NETRON_S[1]} s: {m / NETRON_S[0]:.2f}-{m / NETRON_S[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
