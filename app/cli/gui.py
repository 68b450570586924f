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
    from app.cli.gui_script import ScriptedWindow

    app = _application()
    from app.shell.main_window import MainWindow

    win = MainWindow()
    if args.screenshot and args.size:
        win.resize(*args.size)
    win.show()
    _apply_flags(win, args)
    script = ScriptedWindow(app, win, args)
    kw: dict[str, Any] = {"target": args.target, "flow": args.flow}
    companions = tuple((k, str(Path(v).resolve())) for k, v in (
        ("etdump", args.etdump), ("etrecord", args.etrecord), ("program", args.program),
        ("debug_buffer", args.debug_buffer)) if v)
    if companions:
        kw["companions"] = companions
    if args.model:
        win.start(args.model, no_cache=args.no_cache, **kw)
    else:
        win.start()
    app.exec()
    win.shutdown()
    return script.code


def _application() -> Any:
    """The QApplication with the product's name, icon and style sheet."""
    from PySide6.QtWidgets import QApplication

    from app.widgets.theme import app_style_sheet, icon

    app = cast(QApplication, QApplication.instance() or QApplication(sys.argv[:1]))
    app.setApplicationName("CortexM Lens")
    app.setOrganizationName("CortexM Lens")
    app.setWindowIcon(icon("app"))
    app.setStyleSheet(app_style_sheet())
    return app


def _apply_flags(win: Any, args: argparse.Namespace) -> None:
    """The command line's choices set on the window's own controls, as a user would set them."""
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="cmlens")
    add_gui_command(ap.add_subparsers(dest="command"))
    args = ap.parse_args(["gui", *(argv if argv is not None else sys.argv[1:])])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
