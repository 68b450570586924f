"""`cmlens --version`: the versions a bug report needs, from package metadata (works from the wheel)."""
from __future__ import annotations

import sys
from typing import TextIO


def print_version(out: TextIO | None = None) -> int:
    from backend_core.target.doctor.version import version_lines

    print("\n".join(version_lines()), file=out or sys.stdout)
    return 0
