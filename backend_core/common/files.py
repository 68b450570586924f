"""Writing a user's output files: checked before any work, written whole or not at all, readable as any
file the user makes.

Every face writes results through here, so an output path that cannot be written is refused in a second
(exit 2, naming the path and the reason) instead of after a 40 s lowering, and an interrupted run never
leaves half a JSON or .pte behind: the bytes go to a temporary file beside the target, then a rename.
A missing parent folder is a typo, as for `cp` and `tee`: refused, never created. The file gets the mode a
plain `open()` would give it (0666 less the umask; an existing file keeps its mode), not mkstemp's 0600."""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from backend_core.common.errors import BadInputError


def _named(flag: str) -> str:
    """The option as the user typed it: "-o", "--html" (a bare "html" is a long option)."""
    return flag if flag.startswith("-") else f"--{flag}"


def _probe(folder: Path, opt: str, path: str, fix: str) -> None:
    """Prove a file can be created in `folder` (permissions, a read-only mount, /proc)."""
    try:
        fd, probe = _create_temp(folder, ".cmlens-probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise BadInputError(f"{opt} {path}: no file can be written in {folder} ({e.strerror or e}).",
                            fix) from None


def _existing_parent(p: Path, opt: str, path: str | os.PathLike[str], fix: str) -> Path:
    """The folder `p` goes into; BadInputError when it is missing or not a folder (never made)."""
    parent = p.parent
    if not parent.exists():
        raise BadInputError(f"{opt} {path}: the folder {parent} does not exist.",
                            f"Check the path for a typo, or create the folder first (mkdir -p {parent}).")
    if not parent.is_dir():
        raise BadInputError(f"{opt} {path}: {parent} is a file, not a folder.", fix)
    return parent


def check_writable(path: str | os.PathLike[str], flag: str) -> Path:
    """Prove a file can be written at `path` now, without creating any folder; BadInputError otherwise."""
    opt = _named(flag)
    p = Path(path).expanduser()
    fix = f"Pass a {opt} path in a folder you can write to."
    if p.is_dir():
        raise BadInputError(f"{opt} {path}: that is a folder, not a file.",
                            f"Pass a file name for {opt}, for example {p / ('out.' + opt.lstrip('-'))}.")
    _probe(_existing_parent(p, opt, path, fix), opt, str(path), fix)
    if p.exists() and not os.access(p, os.W_OK):
        raise BadInputError(f"{opt} {path}: the file exists and cannot be overwritten (no write permission).", fix)
    return p


def check_writable_folder(path: str | os.PathLike[str], flag: str) -> Path:
    """An output FOLDER (a bundle, a sweep): it may be missing (the command makes it), its parent may not;
    an existing one must be a folder a file can be written in."""
    opt = _named(flag)
    p = Path(path).expanduser()
    fix = f"Pass a {opt} folder in a place you can write to."
    if p.exists():
        if not p.is_dir():
            raise BadInputError(f"{opt} {path}: that is a file, not a folder.", fix)
        _probe(p, opt, str(path), fix)
    else:
        _probe(_existing_parent(p, opt, path, fix), opt, str(path), fix)
    return p


def _create_temp(folder: Path, stem: str) -> tuple[int, str]:
    """A new file beside the target, made with mode 0666 so the kernel applies the umask (mkstemp: 0600)."""
    for _ in range(100):
        name = os.path.join(folder, f"{stem}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {folder}")


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> str:
    """Write `data` to `path` through a temporary file and a rename; returns the path written. The folder
    must exist (OSError otherwise). A new file gets 0666 less the umask, a replaced one keeps its mode."""
    p = Path(path).expanduser()
    fd, tmp = _create_temp(p.parent, f".{p.name}")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(p).st_mode))      # an existing file keeps its mode, as with cp
        except FileNotFoundError:
            pass
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return str(p)
