"""What `cmlens gui --stage/--select/--screenshot/--numerics` does once the window is up: wait for the lowering
(and the numerics or the evaluation asked for), go to the stage and node, draw, save the PNG and quit. The
window's own signals drive it; it adds no state to the window."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

SCREENSHOT_TIMEOUT_S = 600


class ScriptedWindow:
    """The choreography of one scripted `cmlens gui` run; `code` is its exit code."""

    def __init__(self, app: Any, win: Any, args: argparse.Namespace) -> None:
        from PySide6.QtCore import QTimer

        self.app, self.win, self.args = app, win, args
        self.code = 0
        self.shot_taken = False
        self.want_numerics = bool(args.numerics or args.heat or args.tab == "numerics")
        if args.stage or args.select or args.screenshot or self.want_numerics:
            win.session.finished.connect(self.on_finished)
        if args.screenshot:
            QTimer.singleShot(SCREENSHOT_TIMEOUT_S * 1000, self.timed_out)

    def timed_out(self) -> None:
        print("cmlens gui: timed out", file=sys.stderr)
        self.code = 1
        self.shoot()

    def apply_requested(self) -> bool:
        """Go to --stage / --select once lowering has finished. False: nothing to wait for."""
        s, args = self.win.session, self.args
        if not s.snapshots:
            return False
        stage = len(s.snapshots) - 1
        if args.stage:
            found = s.stage_index(args.stage)
            if found is None:
                print(f"cmlens gui: no stage matches {args.stage!r}; stages: "
                      + ", ".join(x.stage for x in s.snapshots), file=sys.stderr)
                self.code = 2
            else:
                stage = found
        self.win.state.set_stage(stage)
        if args.select:
            node = pick_node(s.snapshots[stage], args.select)
            if node is None:
                print(f"cmlens gui: no node {args.select!r} in stage {s.snapshots[stage].stage}", file=sys.stderr)
                self.code = 2
            else:
                self.win.state.focus(stage, node)
        return True

    def on_finished(self, status: str) -> None:
        from PySide6.QtCore import QTimer

        win, args = self.win, self.args
        if not self.apply_requested():
            if args.screenshot:
                QTimer.singleShot(300, self.shoot)        # nothing to draw: shoot the error state
            return
        if self.want_numerics and status == "done":
            win.numerics.finished.connect(self.on_numerics)
            win.run_numerics(args.numerics or None)
            return
        if args.tab == "accuracy" and status == "done" and args.screenshot:
            win.accuracy.finished.connect(self.on_accuracy)        # evaluate, pick the first flip, then shoot
            win.accuracy.run_current()
            return
        self.wait_and_shoot()

    def on_numerics(self, status: str) -> None:
        if status != "done":
            print(f"cmlens gui: numerics {status}: {(self.win.numerics.error or {}).get('message', '')}",
                  file=sys.stderr)
            self.code = 1
        elif self.args.heat:
            self.win.numerics.act_heat.setChecked(True)
        self.wait_and_shoot()

    def on_accuracy(self, status: str) -> None:
        if status != "done":
            print(f"cmlens gui: evaluation {status}: {(self.win.accuracy.error or {}).get('message', '')}",
                  file=sys.stderr)
            self.code = 1
        elif self.win.accuracy.flip_rows():
            self.win.accuracy.select_flip(0)
        self.wait_and_shoot()

    def wait_and_shoot(self) -> None:
        """Shoot once the graph of the current stage is drawn."""
        from PySide6.QtCore import QTimer

        win = self.win
        if not self.args.screenshot:
            return
        if win.graph.is_showing(win.state.stage):
            QTimer.singleShot(300, self.shoot)
        else:
            win.graph.sceneShown.connect(
                lambda i: QTimer.singleShot(300, self.shoot) if win.graph.is_showing(win.state.stage) else None)

    def shoot(self) -> None:
        if self.shot_taken:
            return
        self.shot_taken = True
        path = Path(self.args.screenshot)
        img = self.win.grab().toImage()
        if self.args.palette:
            img = to_palette(img)
        if not img.save(str(path)):
            print(f"cmlens gui: could not write {path}", file=sys.stderr)
            self.code = 1
        else:
            s = self.win.session
            print(f"{path}: {img.width()}x{img.height()}, {s.status}, stage {self.win.state.stage} "
                  f"{s.snapshots[self.win.state.stage].stage if s.snapshots else '-'}")
        self.win.close()
        self.app.quit()


def pick_node(snap: Any, name: str) -> str | None:
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


def to_palette(img: Any) -> Any:
    """The 256 most frequent colours as the palette: UI screenshots stay faithful."""
    import numpy as np
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage

    img = img.convertToFormat(QImage.Format.Format_RGB32)
    arr = np.frombuffer(img.constBits(), dtype=np.uint32, count=img.bytesPerLine() * img.height() // 4)
    values, counts = np.unique(arr, return_counts=True)
    table = [int(v) | 0xFF000000 for v in values[np.argsort(counts)[::-1][:256]]]
    return img.convertToFormat(QImage.Format.Format_Indexed8, table, Qt.ImageConversionFlag.ThresholdDither)
