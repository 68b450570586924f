"""Opt-in (needs the checkout: CMLENS_TEST_ET_ROOT, CMLENS_TEST_CMSIS_NN). Issue 44, item 9: Ctrl-C during
`cmlens export --check` left a complete-looking bundle whose bundle.json said `check: null` while the
terminal said "No result.". The bundle is whole (it is written all or nothing before the check), so it
is kept, and the terminal, the JSON, bundle.json and README.md all say exactly "bundle written, not
checked: rerun with --check". A real SIGINT to a real `cmlens export` process, sent once the check began."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ET_ROOT = os.environ.get("CMLENS_TEST_ET_ROOT")
CMSIS_NN = os.environ.get("CMLENS_TEST_CMSIS_NN")
pytestmark = pytest.mark.skipif(not (ET_ROOT and CMSIS_NN), reason="needs an ExecuTorch checkout and CMSIS-NN: set "
                                "CMLENS_TEST_ET_ROOT and CMLENS_TEST_CMSIS_NN")
NOT_CHECKED = "bundle written, not checked: rerun with --check"


def test_ctrl_c_during_the_check_keeps_the_bundle_and_says_it_is_not_checked(tmp_path: Path) -> None:
    bundle, report = tmp_path / "bundle", tmp_path / "export.json"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "export", "ds_cnn", "--target", "cortex-m55", "-o",
                             str(bundle), "--check", "--et-root", ET_ROOT, "--cmsis-nn", CMSIS_NN, "--json", str(report)],
                            cwd=REPO, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:                         # the bundle is written, the proof has begun
        seen.append(line)
        if "--check: building" in line:
            break
    assert (bundle / "bundle.json").is_file(), "".join(seen)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130, "".join(seen) + err
    assert f"cancelled (Ctrl-C): {NOT_CHECKED}" in err and "No result" not in err and "Traceback" not in err
    assert f"bundle: {bundle}" in out and "check: PASS" not in out
    info = json.loads((bundle / "bundle.json").read_text())
    assert info["check"] == {"verdict": "NOT CHECKED", "summary": NOT_CHECKED}
    assert NOT_CHECKED in (bundle / "README.md").read_text()
    assert (bundle / "model_pte.h").is_file() and (bundle / "cmlens_model.cmake").is_file()
    data = json.loads(report.read_text())
    assert data["status"] == "cancelled" and data["message"] == NOT_CHECKED and data["exit_code"] == 130
