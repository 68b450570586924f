#!/usr/bin/env bash
# Install the Debian packages CortexM Lens needs. As root: installs them (idempotent, fast when present).
# Otherwise: prints the exact apt-get line to run.
set -euo pipefail
PKGS=(graphviz gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm cmake ninja-build)
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
