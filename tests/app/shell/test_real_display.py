"""`make run` on a real desktop: the app starts on Qt's xcb platform under Xvfb (not offscreen) and its
window appears on the X server; when it cannot start, `cmlens gui` says what is missing and how to
install it instead of Qt's abort."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.shell import display_check
from app.shell.display_check import gui_problem, missing_libraries

ROOT = Path(__file__).resolve().parents[3]
needs_xvfb = pytest.mark.skipif(not shutil.which("Xvfb") or not shutil.which("xwininfo"),
                                reason="Xvfb / xwininfo not installed (make setup installs xvfb x11-utils)")


def _free_display() -> int:
    for n in range(91, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


@pytest.fixture
def xvfb():
    n = _free_display()
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.1)
    yield f":{n}"
    proc.terminate()
    proc.wait(10)


def _env(display: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", CMLENS_SETTINGS=str(tmp_path / "s.ini"),
               PYTHONPATH=str(ROOT))
    return env


@needs_xvfb
def test_window_appears_on_a_real_x_server(xvfb: str, tmp_path: Path) -> None:
    assert gui_problem({"DISPLAY": xvfb}) is None, gui_problem({"DISPLAY": xvfb})
    env = _env(xvfb, tmp_path)
    app = subprocess.Popen([sys.executable, "-m", "app.cli", "gui", "layernorm_mlp"], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        found, tree = False, ""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and app.poll() is None:
            tree = subprocess.run(["xwininfo", "-root", "-tree"], env=env, capture_output=True, text=True).stdout
            if '"CortexM Lens' in tree:
                found = True
                break
            time.sleep(0.5)
        assert app.poll() is None, f"the GUI exited with {app.returncode}: {app.stdout.read()[-2000:]}"
        assert found, "no 'CortexM Lens' window on the X server:\n" + tree[-2000:]
    finally:
        app.terminate()
        try:
            app.wait(20)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait(10)


@needs_xvfb
def test_screenshot_of_the_xcb_window(xvfb: str, tmp_path: Path) -> None:
    """The same picture path as offscreen, but through the xcb plugin (fonts, icons, style sheet)."""
    out = tmp_path / "xcb.png"
    proc = subprocess.run([sys.executable, "-m", "app.cli", "gui", "layernorm_mlp", "--screenshot", str(out)],
                          cwd=ROOT, env=_env(xvfb, tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert out.stat().st_size > 20_000


def test_no_display_is_explained_not_aborted(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["CMLENS_SETTINGS"] = str(tmp_path / "s.ini")
    proc = subprocess.run([sys.executable, "-m", "app.cli", "gui", "ds_cnn"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "No display" in proc.stderr and "xvfb-run" in proc.stderr and "offscreen" in proc.stderr


@pytest.mark.skipif(not shutil.which("gcc") or not shutil.which("ldd"), reason="needs gcc and ldd")
def test_missing_xcb_library_names_the_debian_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real shared object that needs a library the loader cannot find (built here, then its
    dependency removed), checked the way the xcb plugin is. The library's name is made up so that
    no installed package provides it; its Debian package comes from the same table as the real ones."""
    lib = "libxcb-cmlens-test.so.0"
    monkeypatch.setitem(display_check.DEBIAN_PACKAGES, lib, "libxcb-cmlens-test0")
    fake = tmp_path / lib
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(fake), "-x", "c", "-", f"-Wl,-soname,{lib}"],
                   input="int cursor(void){return 0;}", text=True, check=True)
    plugin = tmp_path / "libqxcb.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(plugin), "-x", "c", "-", f"-L{tmp_path}",
                    "-Wl,--no-as-needed", f"-l:{lib}"], input="int cursor(void); int f(void){return cursor();}",
                   text=True, check=True)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    assert missing_libraries(plugin) == []                 # present: nothing to say
    fake.unlink()
    assert missing_libraries(plugin) == [lib]
    text = gui_problem({"DISPLAY": ":0"}, plugin) or ""
    assert f"missing {lib}" in text and "sudo apt-get install -y libxcb-cmlens-test0" in text
