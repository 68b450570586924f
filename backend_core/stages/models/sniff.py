"""Tell an ExecuTorch artefact's format from its first bytes, before any heavy import, and turn
every way a file can be wrong (empty, truncated, not ExecuTorch, another schema version) into a
BadInputError that names the cause and the fix.

Magic numbers come from the installed schemas: program.fbs `file_identifier "ET12"`,
bundled_program_schema.fbs `"BP08"`, etdump_schema_flatcc.fbs `"ED00"` (size-prefixed, so at
bytes 8..12), and an ETRecord is a zip holding an `ETRECORD_V0` entry.
"""
from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from backend_core.common.errors import BadInputError

PTE, BPTE, ETRECORD, ETDUMP = "pte", "bpte", "etrecord", "etdump"
SUFFIXES = {".pte": PTE, ".bpte": BPTE, ".etrecord": ETRECORD, ".etdump": ETDUMP}
"""The one registry of ExecuTorch file formats: suffix -> kind. The readers (backend_core.lowering.artefacts),
the job's input resolution (`is_program_path`) and the window's file dialogs (`open_filter`) read it."""
PROGRAMS = (PTE, BPTE)                       # ready programs: checked, sized and run as they are
DESCRIPTIONS = {PTE: "ExecuTorch program", BPTE: "bundled program (with reference outputs)",
                ETRECORD: "ETRecord (graphs + debug handles)", ETDUMP: "ETDump (a run's profile and outputs)"}
PROGRAM_ID = b"ET12"          # the schema the installed ExecuTorch reads
BUNDLE_ID = b"BP08"
ETDUMP_ID = b"ED00"
EXTENDED_HEADER = b"eh00"
_KNOWN = ", ".join(SUFFIXES)


def is_program_path(source: str | Path) -> bool:
    """True for a .pte/.bpte path: a ready program, never lowered."""
    return SUFFIXES.get(Path(str(source).strip()).suffix.lower()) in PROGRAMS


def open_filter(models: bool = True) -> str:
    """A file dialog's filter (Qt syntax) of what can be opened, from the registry."""
    stars = " ".join(f"*{s}" for s in SUFFIXES)
    programs = " ".join(f"*{s}" for s, k in SUFFIXES.items() if k in PROGRAMS)
    others = " ".join(f"*{s}" for s, k in SUFFIXES.items() if k not in PROGRAMS)
    first = f"Models and ExecuTorch files (*.py *.pt2 {stars})" if models else f"ExecuTorch files ({stars})"
    parts = [first] + (["Python (*.py)", "Saved programs (*.pt2)"] if models else [])
    parts += [f"ExecuTorch programs ({programs})", f"ETRecord / ETDump ({others} *.bin)", "All files (*)"]
    return ";;".join(parts)


def is_artefact_path(source: str) -> bool:
    """True for a path with an artefact suffix (whether or not it exists): routes it to the readers."""
    return Path(source.strip()).suffix.lower() in SUFFIXES


def _installed_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("executorch")
    except metadata.PackageNotFoundError:
        return "not installed"


def sniff_bytes(data: bytes, name: str) -> str:
    """The format of `data` (PTE, BPTE, ETRECORD, ETDUMP) or a BadInputError naming what is wrong."""
    if not data:
        raise BadInputError(f"{name} is empty (0 bytes).",
                            "The file was not written completely: export it again (e.g. "
                            "`open('model.pte', 'wb').write(program.buffer)`).")
    if data[:4] == b"PK\x03\x04" or data[:4] == b"PK\x05\x06":
        return ETRECORD
    if len(data) >= 8 and data[4:8] == BUNDLE_ID:
        return BPTE
    if len(data) >= 12 and data[8:12] == ETDUMP_ID:
        return ETDUMP
    if len(data) >= 8 and data[4:6] == b"ET" and data[6:8].isdigit():
        if data[4:8] != PROGRAM_ID:
            raise BadInputError(
                f"{name} is an ExecuTorch program of schema version {data[4:8].decode()}, but the "
                f"installed ExecuTorch {_installed_version()} reads {PROGRAM_ID.decode()}.",
                "Re-export the model with this ExecuTorch version, or open the file with the "
                "ExecuTorch release that wrote it.")
        return PTE
    if len(data) >= 8 and data[4:6] == b"BP" and data[6:8].isdigit():
        raise BadInputError(
            f"{name} is a bundled program of schema version {data[4:8].decode()}, but the installed "
            f"ExecuTorch {_installed_version()} reads {BUNDLE_ID.decode()}.",
            "Re-bundle the program with this ExecuTorch version.")
    head = data[:16]
    what = "text" if all(32 <= b < 127 or b in (9, 10, 13) for b in head) else "binary data"
    raise BadInputError(
        f"{name} is not an ExecuTorch file: it starts with {what} {head[:8]!r}, not a program "
        f"('{PROGRAM_ID.decode()}'), bundled program ('{BUNDLE_ID.decode()}'), ETDump "
        f"('{ETDUMP_ID.decode()}') or ETRecord (a zip).",
        f"Open a file written by ExecuTorch ({_KNOWN}); a model source is a zoo name, .py or .pt2.")


def check_program_complete(data: bytes, name: str) -> None:
    """A .pte whose extended header promises more bytes than the file holds was cut off."""
    if len(data) < 8:
        raise BadInputError(f"{name} is truncated ({len(data)} bytes).", "Copy or export the file again.")
    root = struct.unpack_from("<I", data, 0)[0]
    if len(data) >= 32 and data[8:12] == EXTENDED_HEADER:
        _length, program_size, segment_base, segment_size = struct.unpack_from("<IQQQ", data, 12)
        need = max(program_size, segment_base + segment_size if segment_base else 0)
        if len(data) < need:
            raise BadInputError(
                f"{name} is truncated: its header promises {need:,} bytes, the file has {len(data):,}.",
                "The copy or download was cut off: copy or export the file again.")
    elif root >= len(data):
        raise BadInputError(f"{name} is truncated or corrupt (root table at {root} in {len(data)} bytes).",
                            "Copy or export the file again.")


def read_artefact(path: str | Path) -> tuple[str, bytes]:
    """(format, bytes) of the file at `path`, with every bad-input case as a BadInputError."""
    p = Path(path).expanduser()
    if not p.exists():
        raise BadInputError(f"File not found: {p}", "Check the path; relative paths are taken from the "
                                                    "current folder.")
    if not p.is_file():
        raise BadInputError(f"{p} is not a file.", f"Open an ExecuTorch artefact ({_KNOWN}).")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise BadInputError(f"Cannot read {p}: {e.strerror or e}.", "Check the file's permissions.") from e
    kind = sniff_bytes(data, p.name)
    if kind == PTE:
        check_program_complete(data, p.name)
    if kind == ETRECORD:
        check_etrecord_zip(p)
    return kind, data


def _first_entry(path: Path) -> str:
    """Name in the first local file header: generate_etrecord writes ETRECORD_V0 first."""
    with open(path, "rb") as fh:
        head = fh.read(30 + 64)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        return ""
    n = struct.unpack_from("<H", head, 26)[0]
    return head[30:30 + n].decode("utf-8", "replace")


def check_etrecord_zip(path: Path) -> None:
    starts_as_record = _first_entry(path) == "ETRECORD_V0"
    damaged = ("The file was cut off: generate the ETRecord again "
               "(executorch.devtools.generate_etrecord).")
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except zipfile.BadZipFile as e:
        raise BadInputError(f"{path.name} is a damaged zip file ({e}); an ETRecord is a zip archive.",
                            damaged) from e
    if "ETRECORD_V0" not in names and starts_as_record:
        # the record's graphs are zips themselves: a cut-off record ends in one of theirs
        raise BadInputError(f"{path.name} is a damaged zip file: it starts as an ETRecord but its index "
                            "is missing (truncated).", damaged)
    if "ETRECORD_V0" not in names:
        raise BadInputError(
            f"{path.name} is a zip file but not an ETRecord (no ETRECORD_V0 entry; it holds "
            f"{', '.join(sorted(names)[:4]) or 'nothing'}).",
            "Open a file written by executorch.devtools.generate_etrecord.")
