"""Can the GUI start here? Checked before Qt is asked to, because Qt's answer to a missing xcb
library is `qt.qpa.plugin: ... Aborted` (exit 134) with no word on what to install.

Plain Python (no Qt import): `ldd` on PySide6's xcb platform plugin lists the shared libraries the
loader cannot find; each maps to the Debian package that ships it.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

# Debian package of each library the xcb plugin (and Qt's GUI module) loads.
DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0", "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0", "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-randr.so.0": "libxcb-randr0", "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1", "libxcb-shm.so.0": "libxcb-shm0", "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0", "libxcb-render.so.0": "libxcb-render0",
    "libxcb-util.so.1": "libxcb-util1", "libX11-xcb.so.1": "libx11-xcb1", "libxcb.so.1": "libxcb1",
    "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1", "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1", "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3", "libglib-2.0.so.0": "libglib2.0-0", "libSM.so.6": "libsm6",
    "libICE.so.6": "libice6", "libX11.so.6": "libx11-6",
}
# What `make setup` installs as root (the list the issue measured, plus their own dependencies).
GUI_PACKAGES = ("libxcb-cursor0", "libxkbcommon-x11-0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0",
                "libxcb-render-util0", "libxcb-xinerama0", "libxcb-randr0", "libxcb-shape0", "libegl1", "libgl1",
                "libfontconfig1", "libdbus-1-3")

_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.M)


def xcb_plugin() -> Path | None:
    """PySide6's xcb platform plugin, found without importing Qt."""
    import importlib.util

    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.origin:
        return None
    p = Path(spec.origin).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return p if p.is_file() else None


def missing_libraries(plugin: Path | None = None) -> list[str]:
    """Shared libraries the loader cannot find for the xcb plugin (empty when it would load)."""
    plugin = plugin or xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return []
    out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, check=False).stdout
    return sorted(set(_NOT_FOUND.findall(out)))


def gui_problem(environ: dict[str, str] | None = None, plugin: Path | None = None) -> str | None:
    """None when the GUI can start; else what is wrong and the command that fixes it."""
    env = os.environ if environ is None else environ
    platform = env.get("QT_QPA_PLATFORM", "")
    if platform and not platform.startswith("xcb"):
        return None                              # offscreen, wayland, vnc...: Qt reports its own problems
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return ("No display: DISPLAY is not set, so the window has nowhere to appear.\n"
                "Run it on a desktop, under `xvfb-run cmlens gui`, or headless with "
                "QT_QPA_PLATFORM=offscreen cmlens gui MODEL --screenshot out.png.")
    missing = missing_libraries(plugin)
    if not missing:
        return None
    pkgs = sorted({DEBIAN_PACKAGES.get(lib, lib) for lib in missing})
    return ("The Qt xcb platform plugin cannot load: missing " + ", ".join(missing) + ".\n"
            "Install them with:\n  sudo apt-get install -y " + " ".join(pkgs) +
            "\n(or run `make setup` as root, which installs every library the GUI needs).")
