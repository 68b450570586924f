"""The one library every CPU's build writes into the checkout itself: flatcc's runtime.

flatcc's CMakeLists puts its archives in its SOURCE tree (`third-party/flatcc/lib`, dist_dir =
PROJECT_SOURCE_DIR), so the M4, M7, M33 and M55 builds of one checkout all archive libflatccrt.a to the
same file, and `--target install` copies whatever is there. Seen (issue 16): an incremental M4 rebuild
(a cortex_m kernel had changed) installed the M55's libflatccrt.a, and the M4 runner took a UsageFault
(undefined instruction) while setting up the ETDump; the M33 install held the M7's. So before a build
the shared archive is deleted (ninja then re-archives it from THIS build directory's objects), and a
cached install whose libflatccrt.a is not made of this build's objects counts as out of date."""
from __future__ import annotations

from pathlib import Path

SHARED_ARCHIVE = Path("third-party/flatcc/lib/libflatccrt.a")          # in the checkout
OBJECTS = Path("third-party/flatcc/src/runtime/CMakeFiles/flatccrt.dir")  # in a build directory


def archive_members(path: Path) -> dict[str, bytes]:
    """Members of a GNU/System V `ar` archive (name -> bytes); {} when it is not one."""
    data = Path(path).read_bytes()
    if not data.startswith(b"!<arch>\n"):
        return {}
    pos, longnames, out = 8, b"", {}
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode("ascii", "replace").strip()
        size = int(header[48:58].decode("ascii").strip() or 0)
        body = data[pos + 60:pos + 60 + size]
        if name == "//":
            longnames = body
        elif name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            end = longnames.find(b"/\n", start)
            out[longnames[start:end].decode("ascii", "replace")] = body
        elif name not in ("/", "/SYM64/"):
            out[name.rstrip("/")] = body
        pos += 60 + size + (size & 1)
    return out


def installed_runtime_is_this_builds(build_dir: Path, install_dir: Path) -> bool:
    """True unless the installed libflatccrt.a holds objects other than this build directory's."""
    objs = {p.name: p for p in (Path(build_dir) / OBJECTS).rglob("*.obj")}
    lib = Path(install_dir) / "lib" / "libflatccrt.a"
    if not objs or not lib.is_file():
        return True            # nothing to compare with (not built with ETDump, or not installed yet)
    members = archive_members(lib)
    return all(members.get(name) == path.read_bytes() for name, path in objs.items())


def forget_shared_archive(et_root: Path) -> None:
    """Delete the checkout's libflatccrt.a before a build (under the checkout lock): ninja re-archives it
    from this build's objects, so the install copies this CPU's runtime, not the last one built."""
    (Path(et_root) / SHARED_ARCHIVE).unlink(missing_ok=True)
