"""Profiles kept for later: every QEMU profile with instruction classes is stored under the program it ran
(the sha256 of the Program flatbuffer, a .bpte's inner one) and the CPU whose stream it is, so
`cmlens profile MODEL --board B` and the bundle's report can give the cycle estimate on any board without a
checkout's build. The estimate is not stored: it is made again from the classes for the board asked.

What else made the counts (the checkout's kernels, CMSIS-NN, the compiler) cannot be known without that
checkout; it is recorded with the entry and printed on every hit, and the newest run of a program on a
CPU replaces the entry."""
from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend_core.common.files import write_atomic
from backend_core.stages.cache import cache_root
from backend_core.target.profile.model import Profile

STORE_FORMAT = 1
FOLDER = "profile"


def program_key(flatbuffer: bytes) -> str:
    """The key of a program: sha256 of its Program flatbuffer (target.build.ops.program_bytes: a .bpte's
    inner one, so a .bpte and its .pte give the same key)."""
    return hashlib.sha256(flatbuffer).hexdigest()


@dataclass
class StoredProfile:
    """A profile as it was stored, and what made it."""

    profile: Profile
    made: dict[str, Any]             # model, checkout, commit, CMSIS-NN, QEMU board, date (UTC)
    path: Path

    def describe(self) -> str:
        """One line on where the counts came from (printed on every hit)."""
        m = self.made
        return (f"cached profile of {m.get('model', '?')} on {m.get('qemu_board', '?')} ({self.profile.target}), "
                f"made {m.get('date', '?')} with ExecuTorch {m.get('checkout', '?')} (commit "
                f"{m.get('commit') or 'unknown'}), CMSIS-NN {m.get('cmsis_nn') or 'downloaded'}; {self.path}")


class ProfileStore:
    """`$CMLENS_CACHE/profile/<program key>-<cpu>.json`: data only (JSON), checked on load."""

    def __init__(self, root: Path | None = None) -> None:
        self.folder = Path(root if root is not None else cache_root()) / FOLDER

    def path(self, key: str, cpu: str) -> Path:
        return self.folder / f"{key}-{cpu}.json"

    def put(self, key: str, profile: Profile, made: dict[str, Any]) -> Path | None:
        """Store a profile whose rows carry classes (None when it has none: nothing to estimate from)."""
        if not any(o.classes for o in profile.ops):
            return None
        d = profile.to_dict()
        d["estimate"] = None
        for row in d["ops"]:
            row["ms"] = None
        for row in d["islands"]:
            row["ms"] = None
        d["notes"] = [n for n in d.get("notes", []) if not n.startswith("no cycle estimate")]
        entry = {"format": STORE_FORMAT, "key": key, "cpu": profile.target, "profile": d,
                 "made": {**made, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}}
        self.folder.mkdir(parents=True, exist_ok=True)
        return Path(write_atomic(self.path(key, profile.target), json.dumps(entry)))

    def get(self, key: str, cpu: str) -> StoredProfile | None:
        """The stored profile of this program on this CPU, or None (missing, another format, unreadable)."""
        p = self.path(key, cpu)
        try:
            entry = json.loads(p.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != STORE_FORMAT or entry.get("key") != key \
                or entry.get("cpu") != cpu or not isinstance(entry.get("profile"), dict):
            return None
        try:
            prof = Profile.from_dict(entry["profile"])
        except (TypeError, KeyError, ValueError):
            return None
        if not any(o.classes for o in prof.ops):
            return None
        return StoredProfile(prof, dict(entry.get("made") or {}), p)
