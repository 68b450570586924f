"""The README's Profile-tab screenshot with a cycle estimate: the real window at 1366x768, layernorm_mlp
lowered for the M4 by the real worker, and the recorded real `cmlens run layernorm_mlp --board stm32l4r5
--profile` on QEMU (tests/timing/fixtures/run_profile_layernorm_mlp_stm32l4r5.json) shown as a finished run.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/profile_estimate_screenshot.py \\
        docs/screenshots/window_target_profile_estimate_1366x768.png
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUN = ROOT / "tests" / "timing" / "fixtures" / "run_profile_layernorm_mlp_stm32l4r5.json"


def main(out: str) -> int:
    os.environ["CMLENS_SETTINGS"] = str(Path(tempfile.mkdtemp(prefix="cmlens-shots-")) / "s.ini")   # a first run
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    from app.cli.gui import to_palette
    from app.shell.main_window import MainWindow
    from app.widgets.theme import app_style_sheet
    from tests.gui.filled import LOWER_S, spin, tab_views, wait_for

    app.setStyleSheet(app_style_sheet())
    rec = json.loads(RUN.read_text())
    win = MainWindow()
    win.resize(1366, 768)
    win.show()
    spin(400)
    status = wait_for(win.session.finished, LOWER_S, lambda: win.open_model("layernorm_mlp", target=rec["target"]))[0]
    assert status == "done", win.error_panel.title.text()
    result = {"model": "layernorm_mlp", "target": rec["target"], "board": rec["board"], "simulator": "qemu",
              "outcome": rec["outcome"], "exit_code": 0, "tests": [{"suite": 0, "index": 0, "passed": True}],
              "profile": rec["profile"]}
    win.target_panel.result_view.show_result(result, 0)
    win.target_panel.runFinished.emit(result)
    spin(300)
    dict(tab_views(win))["target_profile"]()
    spin(400)
    to_palette(win.grab().toImage()).save(out)
    print(f"{out}  {win.width()}x{win.height()}")
    win.close()
    spin(200)
    win.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "screenshots" /
                                                          "window_target_profile_estimate_1366x768.png")))
