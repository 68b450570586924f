#!/usr/bin/env bash
# Install the Debian packages CortexM Lens needs. As root: installs them (idempotent, fast when present).
# Otherwise: prints the exact apt-get line to run.
set -euo pipefail
PKGS=(graphviz gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm cmake ninja-build
      # compiler cache for the ExecuTorch library and runner builds (backend_core/build/libraries.py)
      ccache
      # the GUI on a real display: what PySide6's xcb platform plugin loads (app/shell/display_check.py), and Xvfb for its test
      libxcb-cursor0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
      libxcb-xinerama0 libxcb-randr0 libxcb-shape0 libegl1 libgl1 libfontconfig1 libdbus-1-3 xvfb xauth x11-utils
      # the interactive HTML report's browser tests (tests/report/): headless Chromium
      chromium
      # cmlens history's PostgreSQL test (tests/history/): a real server started in a temp folder
      postgresql)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "CortexM Lens needs these Debian packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
fi
