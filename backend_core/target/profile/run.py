"""The profile of a finished target run: its ETDump + the final graph of the same lowering -> Profile,
and the instruction budget check. backend_core.orchestration.jobs.steps.profile attaches it to a run."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.target.profile.build import build_profile
from backend_core.target.profile.events import read_etdump
from backend_core.target.profile.model import Profile
from backend_core.target.profile.units import Unit, unit_for

EMPTY_GRAPH = GraphSnapshot("none", 0, "final", (), ())


def run_unit(board: Any, icount: bool) -> Unit:
    """The unit of a run on `board` (a backend_core.common.boards.table.Board)."""
    return unit_for(board.simulator, getattr(board, "icount_shift", None), icount,
                    getattr(board, "cpu_clock_hz", None) or None)


def profile_run(etdump: Path | None, final: GraphSnapshot | None, unit: Unit, *, model: str,
                target: str) -> tuple[Profile | None, str]:
    """(profile, "") or (None, why there is none)."""
    if etdump is None or not Path(etdump).is_file():
        return None, "the runner printed no ETDump (did it stop before the inference?)"
    events = read_etdump(etdump)
    if not events.inferences:
        return None, "the ETDump holds no inference (no 'Execute' block)"
    prof = build_profile(events, final or EMPTY_GRAPH, unit, model=model, target=target)
    if final is None:
        prof.notes.append("no final graph for a ready-made .pte/.bpte: rows carry operator names only "
                          "(pass the model source to get node ids, MACs and islands)")
    return prof, ""


def over_budget(profile: Profile | None, budget: int | None) -> str:
    """"" when within `budget` (or no budget), else the sentence saying by how much it is exceeded."""
    if budget is None:
        return ""
    if profile is None or profile.total is None:
        return "no profile to check the instruction budget against"
    if profile.unit.name != "instructions":
        return (f"the budget is in instructions, but this run counted {profile.unit.name} "
                f"({profile.unit.label}): run on QEMU with -icount")
    if profile.total > budget:
        return (f"the inference took {profile.total:,} {profile.unit.name}, over the budget of {budget:,} "
                f"by {profile.total - budget:,} ({profile.total / budget - 1:.1%}; {profile.unit.label})")
    return ""
