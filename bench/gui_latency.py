"""GUI latency benchmark (medians; printed, not asserted).

  launch -> window shown            (a fresh process, no torch import)
  stage switch, mv2 final graph     (layout from the disk cache, scene built; goal <= 50 ms)
  layout, mv2 and a 5,000-node graph (first show, then cached; goal <= 3 s first show)
  paint of a full frame at fit-to-view, mv2 final graph (goal <= 16 ms)

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/gui_latency.py [--model mv2] [--repeat N]
mv2 is lowered once through the worker (cached afterwards, ~1-2 min the first time).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAUNCH_CHILD = """
import time, sys
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QTimer
app = QApplication([])
from app.shell.main_window import MainWindow
w = MainWindow()
w.show()
def shown():
    print("SHOWN", time.time(), "torch" in sys.modules, flush=True)
    w.close(); app.quit()
QTimer.singleShot(0, shown)
app.exec()
"""


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_launch(repeat: int) -> None:
    times = []
    torch_loaded = False
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, CMLENS_SETTINGS=str(Path(d) / "s.ini"))
        for _ in range(repeat):
            t0 = time.time()
            out = subprocess.run([sys.executable, "-c", LAUNCH_CHILD], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=120).stdout
            line = next(ln for ln in out.splitlines() if ln.startswith("SHOWN"))
            times.append(float(line.split()[1]) - t0)
            torch_loaded |= line.split()[2] == "True"
    print(f"launch -> window shown:         median {med(times) * 1000:7.0f} ms  "
          f"(n={repeat}, torch imported: {torch_loaded})")


def bench_layout(snap, label: str, repeat: int, weights: bool = False) -> None:
    from backend_core.analyses.graph_layout import LayoutOptions, auto_collapse, compute_layout

    with tempfile.TemporaryDirectory() as d:
        first, cached, items = [], [], 0
        for _ in range(repeat):
            sub = Path(tempfile.mkdtemp(dir=d))
            t0 = time.perf_counter()
            opts = LayoutOptions(collapsed=auto_collapse(snap, weights), show_weights=weights)
            lay = compute_layout(snap, opts, cache_dir=sub)
            first.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            lay2 = compute_layout(snap, LayoutOptions(collapsed=auto_collapse(snap, weights),
                                                      show_weights=weights), cache_dir=sub)
            cached.append(time.perf_counter() - t0)
            assert lay2.from_cache
            items = len(lay.boxes)
        groups = sum(1 for i in lay.graph.items.values() if i.is_group)
    print(f"layout {label:24s} first {med(first) * 1000:7.0f} ms, cached {med(cached) * 1000:5.0f} ms"
          f"  ({len(snap.nodes)} nodes -> {items} boxes, {groups} collapsed groups, "
          f"{len(lay.graph.clusters)} clusters)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mv2")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    bench_launch(args.repeat)

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from app.shell.main_window import MainWindow
    from backend_core.analyses.graph_layout import synthetic_snapshot

    os.environ.setdefault("CMLENS_SETTINGS", str(Path(tempfile.mkdtemp()) / "s.ini"))
    win = MainWindow()
    win.resize(1500, 920)
    win.show()
    done: list[str] = []
    win.session.finished.connect(done.append)
    t0 = time.perf_counter()
    win.open_model(args.model)
    while not done:
        app.processEvents()
        time.sleep(0.01)
    s = win.session
    if done[0] != "done":
        print(f"lowering {args.model} failed: {done[0]} {s.error}")
        return 1
    final = s.final()
    print(f"lower {args.model} via worker:       {time.perf_counter() - t0:7.1f} s "
          f"({'cached' if s.from_cache else 'cold'}; {len(final.nodes)} nodes in the final graph)")

    bench_layout(final, f"{args.model} final", args.repeat)
    bench_layout(final, f"{args.model} final + weights", args.repeat, weights=True)
    edge = s.snapshots[s.stage_index("edge")]
    bench_layout(edge, f"{args.model} edge + weights", args.repeat, weights=True)
    bench_layout(synthetic_snapshot(5000), "synthetic 5,000 nodes", args.repeat)

    # stage switch: layout from the disk cache + scene build, measured to sceneShown
    panel = win.graph
    other = s.stage_index("AtenToCortexMPass") or final.index - 1

    def switch(to: int, clear: bool) -> float:
        if clear:
            panel._scenes.clear()
        shown: list[int] = []
        conn = panel.sceneShown.connect(shown.append)
        t = time.perf_counter()
        win.state.set_stage(to)
        while to not in shown:
            app.processEvents()
        dt = time.perf_counter() - t
        panel.sceneShown.disconnect(conn)
        return dt

    for st in (other, final.index):       # warm the disk cache
        switch(st, True)
    disk, memory = [], []
    for _ in range(args.repeat * 2):
        switch(other, True)
        disk.append(switch(final.index, True))
        switch(other, False)
        memory.append(switch(final.index, False))
    print(f"stage switch -> {args.model} final:     median {med(disk) * 1000:7.1f} ms from the layout "
          f"disk cache, {med(memory) * 1000:5.1f} ms from the scene cache")

    # paint a full frame at fit-to-view
    view = panel.view
    for weights in (False, True):
        win.state.set_toggle("show_weights", weights)
        while not panel.is_showing(final.index):
            app.processEvents()
        view.fit()
        app.processEvents()
        times = []
        for _ in range(20):
            t = time.perf_counter()
            view.viewport().repaint()
            times.append(time.perf_counter() - t)
        n = len(panel.current_scene().boxes)
        print(f"paint, fit-to-view {'(weights shown)' if weights else '':16s} median {med(times) * 1000:6.1f} ms "
              f"({n} boxes, viewport {view.viewport().width()}x{view.viewport().height()}, "
              f"zoom {view.zoom_factor():.2f})")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
