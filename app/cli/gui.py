"""`cmlens gui [MODEL] [--stage NAME] [--select NODE] [--screenshot out.png]`.

Opens the desktop app. With --screenshot: waits for lowering to finish and the requested stage/selection
to be drawn, saves the window as PNG (QWidget.grab) and exits. On a local X display the window opens there at
the size it gets on that screen; without one it renders offscreen (1500x920); --size WxH sets the size.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, cast

from .outputs import add_output
from .lowering_flags import add_lowering_flags

SCREENSHOT_TIMEOUT_S = 600


def add_gui_command(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("gui", help="open the desktop app (pass by pass, fallbacks and why)",
                              description="Open CortexM Lens. MODEL is a zoo name, a .py file or a "
                              ".pt2 program (default: the last one, else ds_cnn).")
    p.add_argument("model", nargs="?", default=None,
                   help="zoo name, path/to/model.py, saved .pt2, or an ExecuTorch .pte/.bpte/.etrecord/.etdump")
    p.add_argument("--etdump", default=None, metavar="F",
                   help="with a .etrecord/.pte/.bpte: lay this ETDump's per-op rows and gaps over the graph")
    p.add_argument("--etrecord", default=None, metavar="F", help="with an .etdump: the ETRecord of the program that ran")
    p.add_argument("--program", default=None, metavar="F", help="with an .etrecord/.etdump: its .pte or .bpte")
    p.add_argument("--debug-buffer", default=None, metavar="F",
                   help="with --etdump: the debug buffer (default: debug_buffer.bin next to the ETDump)")
    add_lowering_flags(p, "target", "flow", "calib", "no-cache", unset=True, check_target=True)
    p.add_argument("--stage", default=None, help="stage to show: name, part of a name or index")
    p.add_argument("--select", default=None, help="node to select (id or name, in that stage)")
    p.add_argument("--compare", action="store_true", help="open the compare split view")
    p.add_argument("--qparams", action="store_true", help="show quantization parameters on edges")
    p.add_argument("--no-keep-going", action="store_true",
                   help="stop at a failing ExecuTorch pass, as plain ExecuTorch (the window's default is to "
                        "leave the failing op in float and lower the rest)")
    p.add_argument("--watch", action="store_true",
                   help="lower again whenever the model file or a file it imports or reads changes on disk "
                        "(the selected op stays selected)")
    p.add_argument("--tab", default=None,
                   choices=["fallbacks", "quantizer", "log", "numerics", "target", "memory", "accuracy"],
                   help="bottom tab to show (numerics: also runs the numerics after lowering; accuracy with "
                        "--screenshot: also evaluates and picks the first flipped sample)")
    p.add_argument("--numerics", default=None, metavar="N|DIR",
                   help="run the per-layer numerics after lowering on N random inputs or a folder")
    p.add_argument("--heat", action="store_true",
                   help="colour the graph by numerical error (runs the numerics; default 8 inputs)")
    add_output(p, "--screenshot", default=None, metavar="PNG",
                   help="render offscreen after lowering, save the window as PNG, exit")
    p.add_argument("--size", default=None, type=_size, metavar="WxH",
                   help="window size for --screenshot (default: the size the window opens at on this screen, "
                        "inside its available geometry; 1500x920 when there is no screen)")
    p.add_argument("--palette", action="store_true",
                   help="save the screenshot as an 8-bit palette PNG (~3x smaller, for docs)")
    p.set_defaults(func=run_gui)
    return p


def _size(text: str) -> tuple[int, int]:
    """--size WxH: two whole numbers of pixels, each 200 or more."""
    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit() and int(w) >= 200 and int(h) >= 200):
        raise argparse.ArgumentTypeError(f"{text!r}: give the window size as WxH in pixels, e.g. 1366x768.")
    return int(w), int(h)


def _local_display() -> bool:
    """A local X display whose socket exists (`:99`, `:0.0`): a screenshot can be taken on it at its real
    size. A stale or remote DISPLAY, or none, renders offscreen as before."""
    display = os.environ.get("DISPLAY", "")
    if not display.startswith(":"):
        return False
    number = display[1:].split(".")[0]
    return number.isdigit() and Path(f"/tmp/.X11-unix/X{number}").exists()


def screenshot_platform() -> None:
    """--screenshot on a screen renders on it (the window then has the size it gets there: 1366x768 on a
    1366x768 screen, not 1500x920); without a usable display, Qt's offscreen platform. QT_QPA_PLATFORM
    set by the user wins."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return
    from app.shell.display_check import gui_problem

    if not _local_display() or gui_problem() is not None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"


def _pick_node(snap, name: str) -> str | None:
    if snap.node(name) is not None:
        return name
    low = name.lower()
    for n in snap.nodes:
        if n.name == name:
            return n.id
    for n in snap.nodes:
        if low in n.id.lower() or low in n.target.lower():
            return n.id
    return None


def to_palette(img):
    """The 256 most frequent colours as the palette: UI screenshots stay faithful."""
    import numpy as np
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    img = img.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint32, count=img.bytesPerLine() * img.height() // 4)
    values, counts = np.unique(arr, return_counts=True)
    table = [int(v) | 0xFF000000 for v in values[np.argsort(counts)[::-1][:256]]]
    return img.convertToFormat(QImage.Format.Format_Indexed8, table, Qt.ImageConversionFlag.ThresholdDither)


def run_gui(args: argparse.Namespace) -> int:
    if args.screenshot:
        screenshot_platform()
        if "CMLENS_SETTINGS" not in os.environ:       # deterministic: no user layout/options
            import tempfile

            os.environ["CMLENS_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="cmlens-shot-")) / "s.ini")
    from app.shell.display_check import gui_problem

    problem = gui_problem()
    if problem:
        print(f"error: the GUI cannot start. {problem}", file=sys.stderr)
        return 2
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.shell.main_window import MainWindow
    from app.widgets.theme import app_style_sheet, icon

    app = cast(QApplication, QApplication.instance() or QApplication(sys.argv[:1]))
    app.setApplicationName("CortexM Lens")
    app.setOrganizationName("CortexM Lens")
    app.setWindowIcon(icon("app"))
    app.setStyleSheet(app_style_sheet())
    win = MainWindow()
    if args.screenshot and args.size:
        win.resize(*args.size)
    win.show()
    kw: dict[str, Any] = {"target": args.target, "flow": args.flow}
    companions = tuple((k, str(Path(v).resolve())) for k, v in (
        ("etdump", args.etdump), ("etrecord", args.etrecord), ("program", args.program),
        ("debug_buffer", args.debug_buffer)) if v)
    if companions:
        kw["companions"] = companions
    if args.calib:
        win.model_bar.calib.set_value(args.calib if args.calib.isdigit() else str(Path(args.calib).resolve()))
    if args.no_keep_going:
        win.model_bar.keep_going.setChecked(False)
    if args.compare:
        win.state.set_toggle("compare", True)
    if args.qparams:
        win.state.set_toggle("show_qparams", True)
    if args.watch:
        win.model_bar.auto_relower.setChecked(True)
    if args.tab:
        win.show_tab(args.tab)
    want_numerics = bool(args.numerics or args.heat or args.tab == "numerics")
    result = {"code": 0}

    def apply_requested() -> bool:
        """Go to --stage / --select once lowering has finished. False: nothing to wait for."""
        s = win.session
        if not s.snapshots:
            return False
        stage = len(s.snapshots) - 1
        if args.stage:
            found = s.stage_index(args.stage)
            if found is None:
                print(f"cmlens gui: no stage matches {args.stage!r}; stages: "
                      + ", ".join(x.stage for x in s.snapshots), file=sys.stderr)
                result["code"] = 2
            else:
                stage = found
        win.state.set_stage(stage)
        if args.select:
            node = _pick_node(s.snapshots[stage], args.select)
            if node is None:
                print(f"cmlens gui: no node {args.select!r} in stage {s.snapshots[stage].stage}",
                      file=sys.stderr)
                result["code"] = 2
            else:
                win.state.focus(stage, node)
        return True

    def on_finished(status: str) -> None:
        if not apply_requested():
            if args.screenshot:
                QTimer.singleShot(300, shoot)        # nothing to draw: shoot the error state
            return
        if want_numerics and status == "done":
            win.numerics.finished.connect(on_numerics)
            win.run_numerics(args.numerics or None)
            return
        if args.tab == "accuracy" and status == "done" and args.screenshot:
            win.accuracy.finished.connect(on_accuracy)        # evaluate, pick the first flip, then shoot
            win.accuracy.run_current()
            return
        wait_and_shoot()

    def on_numerics(status: str) -> None:
        if status != "done":
            print(f"cmlens gui: numerics {status}: {(win.numerics.error or {}).get('message', '')}",
                  file=sys.stderr)
            result["code"] = 1
        elif args.heat:
            win.numerics.act_heat.setChecked(True)
        wait_and_shoot()

    def on_accuracy(status: str) -> None:
        if status != "done":
            print(f"cmlens gui: evaluation {status}: {(win.accuracy.error or {}).get('message', '')}",
                  file=sys.stderr)
            result["code"] = 1
        elif win.accuracy.flip_rows():
            win.accuracy.select_flip(0)
        wait_and_shoot()

    def wait_and_shoot() -> None:
        if args.screenshot:
            if win.graph.is_showing(win.state.stage):
                QTimer.singleShot(300, shoot)
            else:
                win.graph.sceneShown.connect(
                    lambda i: QTimer.singleShot(300, shoot) if win.graph.is_showing(win.state.stage) else None)

    shot = {"done": False}

    def shoot() -> None:
        if shot["done"]:
            return
        shot["done"] = True
        path = Path(args.screenshot)
        img = win.grab().toImage()
        if args.palette:
            img = to_palette(img)
        if not img.save(str(path)):
            print(f"cmlens gui: could not write {path}", file=sys.stderr)
            result["code"] = 1
        else:
            s = win.session
            print(f"{path}: {img.width()}x{img.height()}, {s.status}, stage {win.state.stage} "
                  f"{s.snapshots[win.state.stage].stage if s.snapshots else '-'}")
        win.close()
        app.quit()

    if args.stage or args.select or args.screenshot or want_numerics:
        win.session.finished.connect(on_finished)
    def timed_out() -> None:
        print("cmlens gui: timed out", file=sys.stderr)
        result.update(code=1)
        shoot()

    if args.screenshot:
        QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, timed_out)
    if args.model:
        win.start(args.model, no_cache=args.no_cache, **kw)
    else:
        win.start()
    app.exec()
    win.shutdown()
    return result["code"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="cmlens")
    add_gui_command(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["gui", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
