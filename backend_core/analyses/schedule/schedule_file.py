"""The schedule as a small JSON file: which split, which grid, which input, which planner, for which
program. `program_key` is the sha256 of the unscheduled .pte the lowering made, so a file made for
another model or lowering is refused instead of silently producing another program."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.analyses.schedule.measure import PLANNERS

KIND = "cmlens-schedule"
SCHEMA = 1


def program_key(pte: bytes) -> str:
    return hashlib.sha256(pte).hexdigest()


def schedule_doc(model: str, target: str, pte: bytes, cand: dict[str, Any]) -> dict[str, Any]:
    """The file's content for a candidate (Candidate.to_dict())."""
    return {"kind": KIND, "schema": SCHEMA, "model": model, "target": target, "program_key": program_key(pte),
            "split": cand["split"], "grid": list(cand["grid"]), "input": cand.get("input_quant") or {"dtype": "float32"},
            "planner": cand["planner"], "total_ram_bytes": cand["total_ram_bytes"],
            "extra_macs": round(cand["extra_macs"], 6), "bit_exact_on_host": cand.get("bit_exact")}


def read_schedule(path: str | Path, pte: bytes) -> dict[str, Any]:
    """A schedule file checked against the program it must apply to (exit 2 with the cause otherwise)."""
    doc = load_schedule(path)
    if doc.get("program_key") != program_key(pte):
        raise BadInputError(f"{path} was made for another program ({doc.get('model')} on {doc.get('target')}, "
                            f"key {str(doc.get('program_key'))[:12]}…) than this lowering (key "
                            f"{program_key(pte)[:12]}…).",
                            "Make the schedule for this model and lowering: `cmlens memory MODEL --schedule auto` "
                            "with the same --target/--flow.")
    return doc


def load_schedule(path: str | Path) -> dict[str, Any]:
    """A schedule file's content, checked for shape only (the program key is checked by read_schedule)."""
    p = Path(path)
    if not p.is_file():
        raise BadInputError(f"--schedule {path}: no such file, and not auto or fit:BOARD.",
                            "Give --schedule auto, --schedule fit:BOARD, or a schedule JSON written by "
                            "`cmlens memory MODEL --schedule auto`.")
    try:
        doc = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadInputError(f"{p} is not a schedule: not JSON ({e}).",
                            "Give a schedule JSON written by `cmlens memory MODEL --schedule auto`.") from e
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise BadInputError(f"{p} is not a schedule (no \"kind\": \"{KIND}\").",
                            "Give a schedule JSON written by `cmlens memory MODEL --schedule auto`.")
    grid = doc.get("grid")
    if not (isinstance(grid, list) and len(grid) == 2 and all(isinstance(g, int) and g > 0 for g in grid)) \
            or not isinstance(doc.get("split"), str) or doc.get("planner") not in PLANNERS:
        raise BadInputError(f"{p} is not a complete schedule (split, grid [P, Q], planner).",
                            "Write it again with `cmlens memory MODEL --schedule auto`.")
    return doc
