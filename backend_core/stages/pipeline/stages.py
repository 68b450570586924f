"""What the pipeline yields per step."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend_core.common.snapshot.model import GraphSnapshot


@dataclass
class Stage:
    name: str
    index: int
    snapshot: GraphSnapshot
    program: Any = None            # the live program; valid only until the next stage runs
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PipelineOptions:
    target: str = "cortex-m55"
    flow: str = "legacy"
    calib: str | int | None = None   # N random samples, or a folder of .pt/.npy
    seed: int = 0
    activations: str = "int8"        # per-tensor activation config: int8, or int16 where supported
    # Convert the model's 4-D weights and 4-D inputs to channels_last before export. Off by
    # default: the tool lowers the model as the user gave it; the report states when it is on.
    channels_last: bool = False
    # --keep-going: when a pass fails on an op, take that op out of quantisation and lower again
    # (bounded); the result is then not what plain ExecuTorch produces, and says so.
    keep_going: bool = False
    # --rewrite NAME: opt-in rewrites of a copy of the user's module before export (backend_core.stages.fallback.
    # rnn_cells: "rnn-cells"); like channels_last, the report states them
    rewrites: tuple[str, ...] = ()

    def key(self) -> str:
        return (f"{self.target}|{self.flow}|{self.calib}|{self.seed}|{self.activations}"
                + ("|channels_last" if self.channels_last else "")
                + "".join(f"|rewrite={r}" for r in self.rewrites)
                + ("|keep_going" if self.keep_going else ""))
