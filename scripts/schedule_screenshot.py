"""The README's Memory-tab screenshot of a schedule: the real window at 1366x768, mv2 lowered for the M55 by
the real worker, then "Fit this board" clicked (the board picked, int8 input) and the real search run in the
job worker; the graph shows the split op with the ops that run per patch marked. Prints how long the
search took in the window and checks the window for text over text (tests/gui/overlap.py).
ra8d1 (1 MiB SRAM in one region): mv2's plan (1,474.4 KiB) does not fit it, a schedule does. nrf5340 and
stm32l4r5 do not fit mv2 even scheduled once the whole firmware is counted (short by 26.0 KiB and 153.5 KiB).

    xvfb-run -s "-screen 0 1366x768x24" env QT_QPA_PLATFORM=xcb .venv/bin/python \\
        scripts/schedule_screenshot.py --board ra8d1 docs/screenshots/window_memory_schedule_mv2_1366x768.png
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIT_S = 3600


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--model", default="mv2")
    ap.add_argument("--target", default="cortex-m55")
    ap.add_argument("--board", default="ra8d1")
    ap.add_argument("--float-input", action="store_true", help="keep the model's float input (default: int8)")
    ap.add_argument("--json", help="also write the schedule section the window got")
    args = ap.parse_args(argv)
    os.environ["CMLENS_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="cmlens-shots-")) / "s.ini")   # a first run
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    app.setApplicationName("CortexM Lens")
    from app.cli.gui_script import to_palette
    from app.shell.main_window import MainWindow
    from app.widgets.theme import app_style_sheet
    from tests.gui.filled import LOWER_S, spin, wait_for
    from tests.gui.overlap import plot_text_problems, widget_overlaps

    app.setStyleSheet(app_style_sheet())
    win = MainWindow()
    win.resize(1366, 768)
    win.show()
    spin(400)
    status = wait_for(win.session.finished, LOWER_S, lambda: win.open_model(args.model, target=args.target))[0]
    assert status == "done", win.error_panel.title.text()
    win.show_tab("memory")
    win.memory.set_board(args.board)
    win.memory.fit_row.int8.setChecked(not args.float_input)
    status = wait_for(win.fit.finished, FIT_S, win.memory.fit_row.fit_btn.click)[0]
    print(f"fit {args.board}: {status} in {win.fit.seconds:.1f} s (in the window, lowering included)")
    s = win.fit.result
    if status != "done" or s is None:
        print(f"no schedule: {win.fit.message}", file=sys.stderr)
        win.close()
        spin(200)
        win.shutdown()
        return 2
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1, default=str))
    final = win.session.final()
    if final is not None and s["patched_nodes"]:
        win.state.focus(final.index, s["patched_nodes"][0])      # the first op run per patch, the input above it
    spin(1500)
    found = widget_overlaps(win) + plot_text_problems(win)
    for p in found:
        print(f"text over text: {p}", file=sys.stderr)
    to_palette(win.grab().toImage()).save(args.out)
    print(f"{args.out}  {win.width()}x{win.height()}  {s['chosen']['total_ram_bytes']:,} B total RAM")
    win.close()
    spin(200)
    win.shutdown()
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
