"""The docs screenshots: the real main window, filled with real results (tests/gui/filled.py: real lowerings,
real numerics runs, recorded real QEMU runs), every Details tab and every Run-on-target result tab, saved
as 8-bit palette PNGs (app.cli.gui_script.to_palette) and checked for text over text (tests/gui/overlap.py).

Under Xvfb, the size of a laptop or a desktop screen (the window is sized to the screen's available
geometry, as a user's first run would be):
    Xvfb :99 -screen 0 1366x768x24 &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/gui_screenshots.py --out docs/screenshots
High DPI and a dark palette (a 2732x1536 screen at scale 2 is a 1366x768 desktop in logical pixels):
    Xvfb :98 -screen 0 2732x1536x24 &
    DISPLAY=:98 QT_QPA_PLATFORM=xcb QT_SCALE_FACTOR=2 .venv/bin/python scripts/gui_screenshots.py --dark \\
        --suffix _dark_hidpi --only memory,target_result
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# which model shows each view best: layernorm_mlp has fallbacks (table, float island, profile islands)
MODEL_OF = {"fallbacks": "layernorm_mlp", "quantizer": "layernorm_mlp", "log": "layernorm_mlp",
            "numerics": "layernorm_mlp", "memory": "ds_cnn", "sweep": "ds_cnn",
            "target_result": "ds_cnn", "target_per_layer_gaps": "ds_cnn", "target_profile": "layernorm_mlp",
            "target_doctor": "ds_cnn", "target_console": "ds_cnn", "accuracy": "digits_cnn"}


def real_sweep() -> Path:
    """A real sweep folder for the Sweep tab: the two models of the other views on two CPUs (lower + memory,
    one local worker; the lowerings come from the result cache when the window's were made already)."""
    from backend_core.orchestration.execute.pool import LocalPoolExecutor as LocalPool
    from backend_core.orchestration.sweep import build_jobs, parse_vary, run_sweep

    out = Path(tempfile.mkdtemp(prefix="cmlens-shots-sweep-")) / "sweep"
    jobs = build_jobs(["ds_cnn", "layernorm_mlp"], parse_vary(["target=m4,m55"]), ("lower", "memory"))
    run_sweep(jobs, out, LocalPool(1))
    return out


def fill_accuracy(win) -> None:
    """The Accuracy tab with a real evaluation: digits_cnn calibrated on one random image (so int8 flips
    predictions), evaluated in the job worker on its 450 held-out images, the first traced flip picked
    (the graph coloured by its per-layer error, its input as a thumbnail)."""
    from tests.gui.filled import LOWER_S, spin, wait_for

    win.model_bar.calib.set_value("1")
    status = wait_for(win.session.finished, LOWER_S, lambda: win.open_model("digits_cnn"))[0]
    assert status == "done", win.error_panel.title.text()
    win.show_tab("accuracy")
    status = wait_for(win.accuracy.finished, 600, win.accuracy.run_current)[0]
    assert status == "done", win.accuracy.error
    rows = win.accuracy.flip_rows()
    win.accuracy.select_flip(next((i for i, r in enumerate(rows) if r.get("layer")), 0))
    spin(600)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    ap.add_argument("--size", default="", help="WxH of the window (default: the screen's available geometry)")
    ap.add_argument("--dark", action="store_true", help="a dark palette, as a dark desktop theme gives")
    ap.add_argument("--suffix", default="", help="added to every file name")
    ap.add_argument("--only", default="", help="comma-separated views (default: all)")
    args = ap.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    app.setApplicationName("CortexM Lens")
    if args.dark:
        app.setStyle("Fusion")
        from tests.gui.filled import dark_palette

        app.setPalette(dark_palette())
    from app.cli.gui_script import to_palette
    from app.shell.main_window import MainWindow
    from app.widgets.theme import app_style_sheet
    from tests.gui.filled import fill_window, spin, tab_views
    from tests.gui.overlap import plot_text_problems, widget_overlaps

    app.setStyleSheet(app_style_sheet())
    only = {x for x in args.only.split(",") if x}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problems = 0
    sweep_dir = real_sweep() if not only or "sweep" in only else None
    for model in sorted(set(MODEL_OF.values())):
        wanted = [v for v, m in MODEL_OF.items() if m == model and (not only or v in only)]
        if not wanted:
            continue
        # a first run each time (nothing remembered): the layout a new user gets on this screen
        os.environ["CMLENS_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="cmlens-shots-")) / "s.ini")
        win = MainWindow()
        if args.size:
            win.resize(*(int(x) for x in args.size.split("x")))
        win.show()
        spin(400)
        if model == "digits_cnn":
            fill_accuracy(win)
        else:
            fill_window(win, model)
        if sweep_dir is not None and "sweep" in wanted:
            win.open_sweep(str(sweep_dir))
        if model == "layernorm_mlp":
            win.graph.next_fallback()            # the LayerNorm fallback: its reason in the inspector
            spin(600)
        size = f"{win.width()}x{win.height()}"
        for name, show in tab_views(win):
            if name not in wanted:
                continue
            show()
            spin(250)
            found = widget_overlaps(win) + plot_text_problems(win)
            problems += len(found)
            for p in found:
                print(f"{name}: text over text: {p}", file=sys.stderr)
            img = to_palette(win.grab().toImage())
            path = out / f"window_{name}_{size}{args.suffix}.png"
            img.save(str(path))
            print(f"{path}  {path.stat().st_size // 1024} KB  graph view {win.graph.view.height()} of "
                  f"{win.height()} px ({win.graph.view.height() / win.height():.0%})")
        win.close()
        spin(200)
        win.shutdown()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
