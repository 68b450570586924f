"""Ctrl-C tells the truth on `cmlens run` too (issue 37): stopped mid-build or mid-simulation, the run exits
130, its --json F says cancelled, nothing claims a PASS or FAIL, and the build or QEMU is gone with it.
The checkout is the stand-in the target panel's tests use (a `cmake` on PATH that builds forever, or a
real kernels/ firmware that hangs on real QEMU), so this runs without an ExecuTorch checkout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.firmware_gui.stand_in import descendants, stand_in_run

REPO = Path(__file__).resolve().parents[3]


class _Field:
    """What stand_in_run sets on the panel's form: here, the values the command line takes."""

    value: object = None

    def setText(self, v: object) -> None:  # noqa: N802 - the panel's widget API
        self.value = v

    setChecked = setValue = setText


class _Form:
    def __init__(self) -> None:
        self.et_root, self.cmsis, self.etdump, self.profile, self.timeout = (_Field() for _ in range(5))


@pytest.mark.parametrize("where", ["build", "simulation"])
def test_a_stopped_run_exits_130_and_leaves_nothing_running(tmp_path: Path, monkeypatch, where: str) -> None:
    form = _Form()
    model = stand_in_run(tmp_path, monkeypatch, form, "cmlens_hang", hang_build=where == "build")
    out = tmp_path / "run.json"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "run", str(model), "--sim", "qemu", "--target",
                             "cortex-m55", "--et-root", str(form.et_root.value), "--cmsis-nn", str(form.cmsis.value),
                             "--timeout", "600", "--json", str(out)],
                            cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    wanted = "sleep 900" if where == "build" else "qemu-system-arm"
    deadline = time.monotonic() + 300
    while not any(wanted in c for c in descendants(proc.pid).values()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0][-3000:]
        time.sleep(0.2)
    time.sleep(0.5)
    children = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, text[-3000:]
    assert "cancelled (Ctrl-C): stopped during the run step" in text and "Traceback" not in text
    assert "PASS" not in text.split("cancelled")[-1] and "FAIL" not in text.split("cancelled")[-1]
    report = json.loads(out.read_text())
    assert report["status"] == "cancelled" and report["exit_code"] == 130
    alive = {p: c for p, c in children.items() if Path(f"/proc/{p}").exists()
             and "zombie" not in Path(f"/proc/{p}/status").read_text().lower()}
    assert not alive, f"left running after Ctrl-C: {alive}"
