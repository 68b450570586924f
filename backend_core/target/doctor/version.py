"""The versions a bug report carries: `cmlens --version` prints them, `cmlens doctor` starts with them."""
from __future__ import annotations

import os
import platform
from pathlib import Path

from backend_core.target.toolchain.checkout import git_head
from backend_core.common.versions import VERSION_PACKAGES, stack_versions


def version_lines(et_root: str | None = None) -> list[str]:
    """One line per package, Python, and the ExecuTorch checkout's commit when one is named (argument or
    EXECUTORCH_ROOT). Reads metadata and .git only: no torch import, well under a second."""
    versions = stack_versions()
    lines = [f"{name.replace('cortexm-lens', 'cmlens'):11s} {versions[name]}" for name in VERSION_PACKAGES]
    lines.insert(1, f"{'python':11s} {platform.python_version()} ({platform.machine()})")
    root = et_root or os.environ.get("EXECUTORCH_ROOT")
    if root:
        head = git_head(Path(root)) if Path(root).is_dir() else None
        lines.append(f"{'checkout':11s} {root} @ {head[:12] if head else 'no git commit found'}")
    return lines
