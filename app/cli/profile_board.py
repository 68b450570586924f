"""`cmlens profile MODEL --board B`: the board's core, its cycle estimate in milliseconds. A profile of the
same program and CPU run before (by `cmlens run --profile` or `cmlens profile`, on any board) is kept in
the profile cache (backend_core.target.profile.store); with it no checkout and no build is needed: only
the lowering (cached too) is made, to know the program. Nothing cached and no checkout: exit 2 naming
the fix. With a checkout whose commit is not the cached profile's, the model is run again."""
from __future__ import annotations

import argparse
import os
from typing import Any, TextIO


def board_cpu(args: argparse.Namespace) -> str:
    """The CPU the board's program is lowered for and run on (an M85 MCU: the M55 on QEMU); exit 2 for an
    unknown board, --board with --cpus, or an estimate flag the core cannot take."""
    from backend_core.common.errors import BadInputError
    from backend_core.target.timing.estimate import check_request

    from .run import board_target

    if args.cpus is not None:
        raise BadInputError("--board and --cpus both given.",
                            "Use one: --board B profiles the board's core, --cpus LIST compares cores.")
    cpu = board_target(argparse.Namespace(board=args.board, target=None, sim="qemu"))
    check_request(cpu, args.board, args.clock_mhz, args.flash_wait_states)
    return cpu


def program_of(args: argparse.Namespace, cpu: str) -> bytes:
    """The Program flatbuffer a run of MODEL on `cpu` takes to the board: a .pte/.bpte's own, else the lower
    step's .bpte (cached)."""
    from pathlib import Path

    from backend_core.common.errors import BadInputError, CmlensError
    from backend_core.orchestration.jobs import Job, LowerRequest
    from backend_core.stages.models.sniff import is_program_path
    from backend_core.target.build.ops import program_bytes

    from .common import submit

    if is_program_path(Path(args.model)):
        if not Path(args.model).is_file():
            raise BadInputError(f"Model file {args.model} does not exist.")
        return program_bytes(Path(args.model).read_bytes())

    done = submit(Job(args.model, LowerRequest(target=cpu, flow=args.flow), steps=("lower",), keep=("bpte",)))
    done.raise_error()
    low = done.lowering
    if done.error or low is None or "model.bpte" not in low.blobs:
        msg = (done.error or {}).get("message", "the lowering gave no program")
        raise CmlensError(f"Could not lower {args.model} for {cpu}: {msg}", (done.error or {}).get("hint", ""))
    return program_bytes(low.blobs["model.bpte"])


def cached_profile(args: argparse.Namespace, cpu: str, et_root: str | None) -> tuple[Any, str]:
    """(the stored profile to use or None, its key). A checkout at another commit than the stored
    profile's runs again; no checkout and nothing stored is exit 2."""
    from backend_core.common.errors import BadInputError
    from backend_core.target.profile.store import ProfileStore, program_key

    key = program_key(program_of(args, cpu))
    store = ProfileStore()
    stored = store.get(key, cpu)
    if et_root and stored is not None:
        from backend_core.target.toolchain.checkout import inspect_checkout

        if inspect_checkout(et_root).commit != stored.made.get("commit"):
            return None, key
    if stored is None and not et_root:
        raise BadInputError(
            f"No cached profile of {args.model} on {cpu} (program sha256 {key[:12]}, {store.folder}) and no "
            "ExecuTorch checkout to run it.",
            f"Run it once with a checkout: `cmlens profile {args.model} --board {args.board} --et-root PATH` (or "
            f"`cmlens run {args.model} --board {args.board} --profile`); the profile is then cached and later "
            "calls need no checkout.")
    return stored, key


def print_cached(args: argparse.Namespace, stored: Any, cpu: str, out: TextIO) -> dict[str, Any]:
    """The stored profile with the estimate on args.board, printed as `cmlens profile` prints a run's;
    returns the --json data."""
    from backend_core.orchestration.jobs.steps.classes import attach_estimate
    from backend_core.target.profile import profile_table

    prof = stored.profile
    attach_estimate(prof, cpu, args.board, args.clock_mhz, args.flash_wait_states)
    print(f"cmlens: {stored.describe()}", file=out)
    print(profile_table(prof, args.top), file=out)
    return {"profiles": [prof.to_dict()], "runs": {cpu: {"outcome": "CACHED", "problem": None}},
            "cached": {"path": str(stored.path), "made": stored.made}, "exit_code": 0}


def checkout_of(args: argparse.Namespace) -> str | None:
    return args.et_root or os.environ.get("EXECUTORCH_ROOT") or None
