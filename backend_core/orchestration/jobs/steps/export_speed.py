"""The bundle's speed section: the cycle estimate of the exported program on the bundle's board, from the
profile cache (target/profile/store.py: a QEMU `run --profile` of the same program and CPU made before),
or, when none is cached, the command that makes one. Read before the bundle is written; never runs QEMU."""
from __future__ import annotations

from typing import Any

TOP = 10


def bundle_speed(pte: bytes, target: str, board: str | None, model: str) -> dict[str, Any]:
    """bundle.json's "speed": {"estimate", "instructions", "profile_from", "top_ops"} with a cached profile,
    else {"estimate": None, "how": the command that makes one}."""
    from backend_core.common.boards.sized import QEMU_STAND_IN
    from backend_core.orchestration.jobs.steps.classes import attach_estimate
    from backend_core.target.profile.milliseconds import estimate_summary, op_ms
    from backend_core.target.profile.store import ProfileStore, program_key

    stream = QEMU_STAND_IN.get(target, target)     # an M85 runs as the M55 on QEMU
    store = ProfileStore()
    stored = store.get(program_key(pte), stream)
    on = f" --board {board}" if board else f" --target {stream}"
    if stored is None:
        return {"estimate": None, "cpu": stream, "how": (
            f"No profile of this program on {stream} is cached ({store.folder}), so the bundle has no time "
            f"estimate. Run `cmlens run {model}{on} --profile` (QEMU; needs the ExecuTorch checkout; the "
            f"profile is cached) and export again, or `cmlens profile {model}{on}` to see it.")}
    prof = stored.profile
    attach_estimate(prof, stream, board, None, None)
    ms = op_ms(prof)
    rows = sorted(range(len(prof.ops)), key=lambda i: prof.ops[i].count, reverse=True)[:TOP]
    return {"estimate": estimate_summary(prof.estimate), "cpu": stream, "instructions": prof.ops_total,
            "instructions_unit": prof.unit.label, "profile_from": stored.describe(), "made": stored.made,
            "notes": [n for n in prof.notes if n.startswith("no cycle estimate")],
            "top_ops": [{"node": prof.ops[i].node, "op": prof.ops[i].op, "instructions": prof.ops[i].count,
                         "ms": ms[i] if ms else None} for i in rows]}
