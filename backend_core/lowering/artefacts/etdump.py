"""An ETDump from a run the user made (their board, the FVP, `examples/arm/run.sh --etdump`) laid
over the graph: per-op times or instruction counts from its profiling events (backend_core.target.profile,
the same rows the Run-on-target panel plots) and, with the ETRecord and the debug buffer, per-layer
numeric gaps from ExecuTorch's Inspector (backend_core.target.judge.gaps_inspector)."""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError, CmlensError
from backend_core.common.snapshot.model import GraphSnapshot

UNKNOWN_UNIT_WHY = ("an ETDump from a run this tool did not make: the scale of its et_pal_current_ticks() "
                    "timestamps is unknown")


def find_debug_buffer(etdump: Path) -> Path | None:
    """`debug_buffer.bin` (what the Arm runner's UART block writes) or `<stem>.debug_buffer.bin`."""
    for cand in (etdump.with_name("debug_buffer.bin"), etdump.with_suffix(".debug_buffer.bin"),
                 etdump.with_suffix(".bin.debug")):
        if cand.is_file():
            return cand
    return None


def profile_overlay(etdump: Path, final: GraphSnapshot, unit: Any = None) -> dict[str, Any]:
    """The per-op profile on `final`'s nodes, as `cmlens run --json F` carries it (Profile.to_dict:
    `unit` is the unit's name, `unit_info` the whole unit), so the Profile view reads it as it is."""
    from backend_core.target.profile import build_profile, raw_ticks, read_etdump

    events = read_etdump(etdump)
    try:
        prof = build_profile(events, final, unit or raw_ticks(UNKNOWN_UNIT_WHY), model=etdump.name,
                             target="a CPU the file does not record")
    except ValueError as e:
        raise BadInputError(f"{etdump.name}: {e}.", "Use the ETDump of a run that finished an inference.") from e
    return prof.to_dict()


def gaps_overlay(etdump: Path, debug_buffer: Path, etrecord: Path, final: GraphSnapshot,
                 metric: str = "MSE") -> dict[str, Any]:
    """Per-layer gaps keyed by `final`'s node ids (through debug handles)."""
    from backend_core.target.judge.gaps_inspector import compute_gaps

    try:
        return compute_gaps(etdump, debug_buffer, etrecord, final, metric).to_dict()
    except CmlensError:
        raise
    except Exception as e:  # the Inspector's errors are about the inputs here
        raise BadInputError(
            f"ExecuTorch's Inspector could not compare the ETDump with the ETRecord: {type(e).__name__}: "
            f"{str(e)[:300]}",
            "The ETDump, debug buffer and ETRecord must come from the same program (the ETRecord of the "
            ".pte/.bpte that ran), and the ETRecord needs representative inputs (generate it from the "
            "BundledProgram).", detail=traceback.format_exc()) from e


def overlay(etdump: Path, final: GraphSnapshot, *, etrecord: Path | None, debug_buffer: Path | None,
            notes: list[str]) -> dict[str, Any]:
    """Everything the ETDump says about `final`: profile rows, gaps when possible, and notes."""
    out: dict[str, Any] = {"etdump": str(etdump), "profile": None, "gaps": None,
                           "debug_buffer": str(debug_buffer) if debug_buffer else None}
    out["profile"] = profile_overlay(etdump, final)
    if out["profile"].get("notes"):
        notes.extend(out["profile"]["notes"])
    if debug_buffer is None:
        notes.append("no debug buffer next to the ETDump (debug_buffer.bin): per-layer gaps need the "
                     "intermediate outputs the runner dumps with --etdump")
    elif etrecord is None:
        notes.append("per-layer gaps need the ETRecord of the program that ran: pass it with the ETDump")
    else:
        try:
            out["gaps"] = gaps_overlay(etdump, debug_buffer, etrecord, final)
        except BadInputError as e:      # the per-op rows still stand: say why there are no gaps
            notes.append(f"per-layer gaps unavailable: {e.message} {e.hint}".strip())
    return out
