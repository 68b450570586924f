"""`Record`: one lowering of one model, in one configuration, at one commit — its figures and where they
came from. Plain data (JSON lines in `history export`), so a record made on a CI runner merges anywhere."""
from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, fields
from typing import Any

OK, FAILED = "ok", "failed"


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Record:
    model: str                                   # repo-relative path of the model file (plus :NAME)
    name: str                                    # the model's short name, as reports print it
    config: str                                  # configuration key (config.config_key)
    commit: str
    status: str = OK                             # ok | failed
    metrics: dict[str, Any] = field(default_factory=dict)
    dirty: bool = False
    commit_date: str | None = None
    subject: str | None = None
    branch: str | None = None
    repo: str | None = None
    error: dict[str, Any] | None = None          # a failure's cause: step, type, message, stage
    facts: dict[str, Any] | None = None          # compare.SideFacts as a dict (gate, bisect's "what changed")
    versions: dict[str, str] = field(default_factory=dict)
    machine: str | None = None
    source: str | None = None                    # lower / evaluate / run / profile / sweep / backfill / add
    recorded_at: str = field(default_factory=now_iso)
    lowering_s: float | None = None
    extra: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def short(self) -> str:
        return self.commit[:8]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Record":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})
