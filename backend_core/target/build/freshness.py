"""Is a finished CMake/Ninja build still up to date with its sources? Ask ninja, never a stamp.

A stamp says what was built, not whether the sources changed since: an ExecuTorch developer edits a
kernel (uncommitted, or in a checkout without git) or CMSIS-NN's tree, and a stamp keyed by the commit
links the old libraries without a word. `ninja -n` walks the build graph (every source and header the
last build read, from its deps log: the checkout, CMSIS-NN, the generated files) and lists what it would
rebuild, without running anything and without writing to the build tree; on ExecuTorch's 441-step build
this takes about a second (bench/noop_build_check.py). Then the installed files are checked against the
install manifest, so a deleted library is reinstalled too."""
from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

_STEP = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)$")


@dataclass
class Freshness:
    """The answer: `up_to_date`, else how many ninja steps would run and the first few of them
    (or `missing`: installed files that are gone), and how long the check took."""

    up_to_date: bool
    steps: int = 0
    first_steps: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0
    problem: str = ""          # ninja could not check (no build.ninja, an error): rebuild

    def describe(self) -> str:
        if self.up_to_date:
            return f"up to date (ninja: no work to do; checked in {self.seconds:.2f} s)"
        if self.problem:
            return f"cannot be checked ({self.problem})"
        if self.steps:
            shown = "; ".join(self.first_steps[:3])
            return f"{self.steps} build step(s) out of date, the sources changed since the build ({shown})"
        return f"{len(self.missing)} installed file(s) missing ({', '.join(self.missing[:3])})"


def ninja_dry_run(build_dir: Path, ninja: str = "ninja", env: Mapping[str, str] | None = None,
                  target: str | None = None, timeout: float = 300.0) -> Freshness:
    """`ninja -C build_dir -n [target]`: what would rebuild, without building."""
    start = time.monotonic()
    if not (Path(build_dir) / "build.ninja").is_file():
        return Freshness(False, problem=f"{build_dir} has no build.ninja", seconds=time.monotonic() - start)
    argv = [ninja, "-C", str(build_dir), "-n"] + ([target] if target else [])
    try:
        res = subprocess.run(argv, capture_output=True, text=True, env=dict(env) if env is not None else None,
                             timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Freshness(False, problem=f"{' '.join(argv)}: {e}", seconds=time.monotonic() - start)
    seconds = time.monotonic() - start
    out = res.stdout.splitlines()
    if res.returncode != 0:
        tail = " ".join((res.stderr or res.stdout).strip().splitlines()[-2:])
        return Freshness(False, problem=f"ninja -n exited {res.returncode}: {tail}", seconds=seconds)
    if any(line.strip() == "ninja: no work to do." for line in out):
        return Freshness(True, seconds=seconds)
    steps = [m for m in (_STEP.match(line) for line in out) if m]
    total = int(steps[-1].group(2)) if steps else 0
    return Freshness(total == 0, total, [m.group(3) for m in steps[:5]], seconds=seconds)


def missing_installed_files(build_dir: Path) -> list[str]:
    """Files CMake's last install wrote (install_manifest.txt) that are not there any more."""
    manifest = Path(build_dir) / "install_manifest.txt"
    try:
        files = manifest.read_text().splitlines()
    except OSError:
        return [str(manifest)]
    return [f for f in files if f and not Path(f).exists()]


def check_build(build_dir: Path, ninja: str = "ninja", env: Mapping[str, str] | None = None) -> Freshness:
    """Up to date when ninja has no work and every installed file is still there."""
    fresh = ninja_dry_run(build_dir, ninja, env)
    if fresh.up_to_date:
        missing = missing_installed_files(build_dir)
        if missing:
            return Freshness(False, missing=missing, seconds=fresh.seconds)
    return fresh
