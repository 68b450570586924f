#!/usr/bin/env bash
# A second Python environment with another ExecuTorch release from PyPI, for
# `cmlens history backfill MODEL --python DIR/bin/python` (one series per ExecuTorch version).
#
#   scripts/make_second_env.sh DIR VERSION        e.g. scripts/make_second_env.sh ~/venv-et150 1.5.0
#
# Only the executorch wheel is installed into DIR (pip --no-deps: pip never pulls another torch); torch,
# torchao and cmlens come from this repository's .venv through a .pth file that appends its
# site-packages after DIR's own, so DIR's executorch shadows the main one. That works for a release
# that runs on the main venv's torch and torchao: check its requirements first
# (`pip download executorch==VERSION --no-deps` and read its METADATA), or give it a venv of its own.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR EXECUTORCH_VERSION   (e.g. $0 ~/venv-et150 1.5.0)" >&2; exit 2; }
dir=$1 version=$2
here=$(cd "$(dirname "$0")/.." && pwd)
main_py="$here/.venv/bin/python"
[ -x "$main_py" ] || { echo "no $main_py: make the main venv first" >&2; exit 2; }
[ -e "$dir" ] && { echo "$dir exists: give a new folder" >&2; exit 2; }
base=$("$main_py" -c 'import sys; print(sys._base_executable)')     # the same interpreter as the main venv
"$base" -m venv "$dir"
"$dir/bin/python" -m pip install -q --no-deps "executorch==$version"
main_site=$("$main_py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
site=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# addsitedir (not a bare path) so the main venv's own .pth files (cmlens installed editable) run too
echo "import site; site.addsitedir('$main_site')" > "$site/zz_cmlens_main_venv.pth"
"$dir/bin/python" - "$version" <<'PY'
import importlib.metadata as m
import sys

got = m.version("executorch")
assert got == sys.argv[1], f"executorch {got} is first on the path, not {sys.argv[1]}"
from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager  # noqa: F401
from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer  # noqa: F401
import torch
print(f"ok: executorch {got} (torch {torch.__version__}, torchao {m.version('torchao')}) at {sys.executable}")
PY
