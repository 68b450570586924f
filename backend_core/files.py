"""Writing a user's output files: checked before any work, written whole or not at all.

Every face writes results through here, so an output path that cannot be written is refused in a second
(exit 2, naming the path and the reason) instead of after a 40 s lowering, and an interrupted run never
leaves half a JSON or .pte behind: the bytes go to a temporary file beside the target, then a rename."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import BadInputError


def check_writable(path: str | os.PathLike[str], flag: str) -> Path:
    """Make the folder of `path` and prove a file can be created there; BadInputError otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        raise BadInputError(f"--{flag} {path}: that is a folder, not a file.",
                            f"Pass a file name for --{flag}, for example {p / ('out.' + flag)}.")
    fix = f"Pass a --{flag} path in a folder you can write to."
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadInputError(f"--{flag} {path}: its folder {p.parent} cannot be created ({e.strerror or e}).",
                            fix) from None
    try:
        fd, probe = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise BadInputError(f"--{flag} {path}: no file can be written in {p.parent} ({e.strerror or e}).",
                            fix) from None
    return p


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> str:
    """Write `data` to `path` through a temporary file and a rename; returns the path written."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return str(p)
