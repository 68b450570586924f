"""The configuration key of a record: what, besides the commit, changes a lowering's figures (CPU, pass
flow, activation type, layout option, calibration, keep-going, the patch schedule and its input, the
memory board). One readable string,
computed the same way from a job, a report and a compare side, so `--record`, `history add`, backfill and
`gate --history` all find the same series."""
from __future__ import annotations

from typing import Any

from backend_core.common.cpus import normalise_target


def config_key(target: str, flow: str = "legacy", options: dict[str, Any] | None = None,
               board: str | None = None, env: str | None = None) -> str:
    """`env`: another Python environment the jobs ran in (`--python`), e.g. "executorch-1.4.0": its own series."""
    o = options or {}
    try:
        cpu = normalise_target(target or "cortex-m55")
    except Exception:  # noqa: BLE001 - an artefact's "unknown" CPU is kept as written
        cpu = target or "unknown"
    parts = [cpu, flow or "legacy", str(o.get("activations") or "int8")]
    if o.get("channels_last"):
        parts.append("channels-last")
    if o.get("calib") not in (None, ""):
        parts.append(f"calib={o['calib']}")
    if o.get("keep_going"):
        parts.append("keep-going")
    parts.extend(f"rewrite={r}" for r in o.get("rewrites") or ())
    if o.get("schedule"):                   # a scheduled program is another program: its own series
        parts.append(f"schedule={o['schedule']}")
        if o.get("input_dtype") not in (None, "float32"):
            parts.append(f"input={o['input_dtype']}")
    if board:
        parts.append(f"board={board}")
    if env:
        parts.append(f"env={env}")
    return " ".join(parts)


def config_of_request(req: Any, board: str | None = None, env: str | None = None,
                      schedule: dict[str, Any] | None = None) -> str:
    """From a jobs.LowerRequest (and the job's schedule options: jobs.outputs.schedule_options_of)."""
    return config_key(req.target, req.flow, {"activations": req.activations, "channels_last": req.channels_last,
                                             "calib": req.calib, "keep_going": req.keep_going,
                                             "rewrites": getattr(req, "rewrites", ()), **(schedule or {})}, board, env)


def config_of_report(report: dict[str, Any], board: str | None = None) -> str:
    """From a `cmlens lower --json` report (or a job's lower section)."""
    return config_key(report.get("target", ""), report.get("flow", ""), report.get("options") or {}, board)
