"""QEMU's block log without a write per line: resources/qemu/log_buffer_shim.c, built once per source with
the host's C compiler and put in front of qemu-system-arm with LD_PRELOAD, makes QEMU 7.2's fflush() after
every logged line a no-op for the -D file only. Measured on ds_cnn M4 (bench/cycle_runs.py): QEMU's CPU with
the log 0.68 -> 0.24 s for the same 593,410 exec lines. Without a C compiler (or when the build fails) the
run goes on with QEMU's own flushing, and says so."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from backend_core.common.files import write_atomic

SHIM_SOURCE = Path(__file__).resolve().parents[3] / "resources" / "qemu" / "log_buffer_shim.c"
LOG_ENV = "CMLENS_QEMU_LOG"


def log_buffer_shim(cache: Path) -> tuple[Path | None, str]:
    """(the built shim or None, why not). Built into `cache`/qemu-log-shim/<source sha>.so once."""
    if not SHIM_SOURCE.is_file():
        return None, f"{SHIM_SOURCE} is missing"
    src = SHIM_SOURCE.read_bytes()
    out = Path(cache) / "qemu-log-shim" / f"{hashlib.sha256(src).hexdigest()[:16]}.so"
    if out.is_file():
        return out, ""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return None, "no host C compiler (cc) to build the log shim: QEMU flushes its log after every line"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    res = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(SHIM_SOURCE), "-ldl"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if res.returncode != 0 or not tmp.is_file():
        tmp.unlink(missing_ok=True)
        return None, f"the log shim did not build ({(res.stderr or '').strip()[:200]})"
    write_atomic(out, tmp.read_bytes())
    tmp.unlink(missing_ok=True)
    return out, ""


def shim_env(shim: Path, log: Path, base: dict[str, str]) -> dict[str, str]:
    """QEMU's environment with the shim preloaded for `log` (an LD_PRELOAD already set is kept, after it)."""
    pre = base.get("LD_PRELOAD", "")
    return {**base, "LD_PRELOAD": f"{shim}{':' + pre if pre else ''}", LOG_ENV: str(log)}
