"""open_artefact(): one entry for every ExecuTorch artefact, used by the CLI (`cmlens lower|gui|check|
memory model.pte`), the lowering worker (which streams the stages to the GUI) and the tests.

Results are cached by the files' contents + versions + this code, and the cache is looked up before
ExecuTorch is imported (~8 s): opening the same file again costs well under a second."""
from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError
from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.lowering.artefacts.result import ArtefactResult
from backend_core.stages.models.sniff import BPTE, ETDUMP, ETRECORD, PTE, read_artefact

StageCallback = Callable[[GraphSnapshot], None]
CACHE_VERSION = "artefact-1"


def _code_hash() -> str:
    from backend_core.stages.cache import code_fingerprint

    h = hashlib.sha1(code_fingerprint().encode())
    for f in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()


def _key(files: list[Path | None]) -> str:
    from backend_core.lowering.artefacts.schemas import installed_stamp

    h = hashlib.sha256(CACHE_VERSION.encode())
    for f in files:
        h.update(b"|")
        if f is not None:
            h.update(str(f.resolve()).encode() + b"\0" + f.read_bytes())
    h.update(repr(installed_stamp()).encode() + _code_hash().encode())
    return "artefact-" + h.hexdigest()[:32]


def open_artefact(path: str | Path, *, etrecord: str | Path | None = None, etdump: str | Path | None = None,
                  debug_buffer: str | Path | None = None, program: str | Path | None = None,
                  use_cache: bool = True, on_stage: StageCallback | None = None,
                  on_status: Callable[[str], None] | None = None,
                  on_planned: Callable[[list[str]], None] | None = None) -> ArtefactResult:
    """Read `path` (.pte, .bpte, .etrecord or .etdump) and its companions into snapshots.

    `etrecord` / `etdump` / `debug_buffer` / `program` name companion files; when not given they
    are looked for next to `path` (`<stem>.pte`, `debug_buffer.bin`). BadInputError for any bad file."""
    t0 = time.perf_counter()
    say = on_status or (lambda _t: None)
    main = Path(path).expanduser()
    kind, data = read_artefact(main)
    comp = _companions(main, kind, etrecord, etdump, debug_buffer, program)
    key = _key([main, *comp.values()])
    from backend_core.stages.cache import ResultCache

    cache = ResultCache()
    if use_cache:
        hit = cache.load(key)
        if hit is not None:
            res = ArtefactResult.from_cached(hit[0], hit[1].get("program.pte"))
            if on_planned:
                on_planned([s.stage for s in res.snapshots])
            for s in res.snapshots:
                if on_stage:
                    on_stage(s)
            res.seconds = time.perf_counter() - t0
            return res
    say("importing ExecuTorch's deserialisers")
    if kind in (PTE, BPTE):
        res = _open_program(main, kind, data, say)
    elif kind == ETRECORD:
        res = _open_record(main, comp, say)
    else:
        if comp["etrecord"] is None and comp["program"] is None:
            raise BadInputError(
                f"{main.name} is an ETDump: it holds timings and intermediate outputs, but no graph.",
                "Open it with the ETRecord (and/or the .pte/.bpte) of the program that ran: "
                "cmlens gui run.etrecord --etdump run.etdump")
        program = comp["program"]
        if comp["etrecord"] is not None:
            res = _open_record(comp["etrecord"], comp, say)
        else:
            assert program is not None          # one of the two: checked above
            res = _open_program(program, read_artefact(program)[0], read_artefact(program)[1], say)
        res.path, res.kind = str(main), ETDUMP
    if comp.get("etdump") is not None or kind == ETDUMP:
        from backend_core.lowering.artefacts.etdump import overlay

        say("reading the ETDump")
        dump = main if kind == ETDUMP else comp["etdump"]
        assert dump is not None
        record = main if kind == ETRECORD else comp["etrecord"]
        res.overlay = overlay(dump, res.snapshots[-1], etrecord=record,
                              debug_buffer=comp["debug_buffer"], notes=res.notes)
    if on_planned:
        on_planned([s.stage for s in res.snapshots])
    for s in res.snapshots:          # streamed before the cache is written: the viewer waits for nothing
        if on_stage:
            on_stage(s)
    res.seconds = time.perf_counter() - t0
    blobs = {"program.pte": res.program} if res.program else {}
    cache.store(key, res.to_cache(), blobs)
    return res


def _companions(main: Path, kind: str, etrecord: Any, etdump: Any, debug_buffer: Any, program: Any
                ) -> dict[str, Path | None]:
    """Companion files, given or found next to `main`, each checked to be what it claims."""
    from backend_core.lowering.artefacts.etdump import find_debug_buffer

    def given(p: Any, want: str, what: str) -> Path | None:
        if p in (None, ""):
            return None
        q = Path(p).expanduser()
        got, _ = read_artefact(q)
        if want == PTE and got in (PTE, BPTE):
            return q
        if got != want:
            raise BadInputError(f"{q.name} was given as the {what} but is a {got} file.",
                                f"Pass the {what} there.")
        return q

    out = {"etrecord": given(etrecord, ETRECORD, "ETRecord"), "etdump": given(etdump, ETDUMP, "ETDump"),
           "program": given(program, PTE, "program (.pte/.bpte)"),
           "debug_buffer": Path(debug_buffer).expanduser() if debug_buffer else None}
    if out["debug_buffer"] is not None and not out["debug_buffer"].is_file():
        raise BadInputError(f"No debug buffer at {out['debug_buffer']}.", "Pass the debug_buffer.bin the runner wrote.")
    if kind == ETRECORD and out["program"] is None:
        out["program"] = find_program(main)
    if kind == ETDUMP:
        if out["etrecord"] is None:
            found = sorted(main.parent.glob("*.etrecord")) or sorted(main.parent.glob("etrecord*.bin"))
            out["etrecord"] = found[0] if len(found) == 1 else None
        if out["program"] is None:
            found = sorted(main.parent.glob("*.bpte")) + sorted(main.parent.glob("*.pte"))
            out["program"] = found[0] if len(found) == 1 else None
    dump = main if kind == ETDUMP else out["etdump"]
    if dump is not None and out["debug_buffer"] is None:
        out["debug_buffer"] = find_debug_buffer(dump)
    return out


def find_program(record_path: Path) -> Path | None:
    """`<stem>.pte` / `<stem>.bpte` next to a record (what aot_arm_compiler writes side by side)."""
    for suffix in (".pte", ".bpte"):
        cand = record_path.with_suffix(suffix)
        if cand.is_file():
            return cand
    return None


def _open_program(path: Path, kind: str, data: bytes, say: Callable[[str], None]) -> ArtefactResult:
    from backend_core.lowering.artefacts.pte import deserialize, plan_snapshot
    from backend_core.lowering.artefacts.reasons import explain_program, substitution_bases

    bundled: list[dict[str, Any]] = []
    if kind == BPTE:
        from backend_core.lowering.artefacts.bpte import unbundle

        say("reading the bundled program")
        data, bundled = unbundle(data, path.name)
    say("reading the program")
    pte = deserialize(data, path.name)
    if not pte.program.execution_plan:
        raise BadInputError(f"{path.name} holds no method (empty execution plan).", "Export the model again.")
    snap, _ = plan_snapshot(pte, 0)
    snap = explain_program(snap, substitution_bases())
    notes = list(snap.log)
    if snap.extra.get("delegates"):
        notes.append("delegated to another backend: " + ", ".join(snap.extra["delegates"]) +
                     " (its segments are shown as delegate nodes; their insides are that backend's)")
    if len(pte.program.execution_plan) > 1:
        notes.append(f"{len(pte.program.execution_plan)} methods; showing '{pte.program.execution_plan[0].name}'")
    if bundled:
        from backend_core.lowering.artefacts.bpte import case_text

        snap.extra["bundled_cases"] = len(bundled)
        notes += [case_text(c) for c in bundled[:4]]
    return ArtefactResult(str(path), kind, [snap], data, str(path), snap.extra["memory_plan"], bundled,
                          notes=notes)


def _open_record(path: Path, comp: dict[str, Path | None], say: Callable[[str], None]) -> ArtefactResult:
    from backend_core.lowering.artefacts.etrecord import debug_handles, explain_record, link_program, parse, record_stages

    say("loading the ETRecord (torch.export programs)")
    record = parse(path)
    snaps, notes = record_stages(record)
    snaps = explain_record(snaps)
    res = ArtefactResult(str(path), ETRECORD, snaps, notes=notes)
    prog_path = comp.get("program")
    if prog_path is None:
        notes.append("the ETRecord does not embed the .pte: put <name>.pte or <name>.bpte next to it (or pass "
                     "it) to see the program stage")
        return res
    kind, data = read_artefact(prog_path)
    prog = _open_program(prog_path, kind, data, say)
    program = prog.snapshots[0]
    final = snaps[-1] if snaps and snaps[-1].kind == "final" else None
    handles = debug_handles(record)
    program = link_program(program, program.extra.get("instruction_nodes", []), handles, final)
    if handles and len(handles) != len(program.extra.get("instruction_nodes", [])):
        notes.append(f"the ETRecord maps {len(handles)} instructions, {prog_path.name} has "
                     f"{len(program.extra.get('instruction_nodes', []))}: is it the program this record was made with?")
    from dataclasses import replace

    if final is not None:
        snaps[-1] = replace(final, kind="edge")
    res.snapshots = snaps + [replace(program, index=len(snaps))]
    res.program, res.program_path = prog.program, prog.program_path
    res.memory_plan, res.bundled = prog.memory_plan, prog.bundled
    res.notes += prog.notes
    return res
