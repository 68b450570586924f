"""The baseline file: one side's facts, versioned, for `cmlens gate` in CI (docs/json-format.md).

It holds what a gate compares (per-op status, fallback reasons, qparams, bytes, instructions, SQNR,
memory totals) and nothing machine-specific it does not need (no graphs, no timeline). A baseline
of another format version, another model, CPU or option set is refused (exit 2) with what differs:
gating one configuration against another would report changes that are not regressions."""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.orchestration.compare.facts import SideFacts

BASELINE_FORMAT = "cmlens-baseline"
BASELINE_VERSION = 1


class BadBaselineError(BadInputError):
    """The baseline cannot be used for this result (exit code 2)."""


def baseline_dict(facts: SideFacts) -> dict[str, Any]:
    return {"format": BASELINE_FORMAT, "version": BASELINE_VERSION,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "model": facts.model, "target": facts.target, "flow": facts.flow,
            "options": {k: facts.options.get(k) for k in ("activations", "channels_last", "calib")},
            "versions": facts.versions, "side": facts.to_dict()}


def write_baseline(facts: SideFacts, path: str | Path) -> str:
    from backend_core.common.files import write_atomic

    return write_atomic(Path(path), json.dumps(baseline_dict(facts), indent=1, allow_nan=False))


def read_baseline(path: str | Path) -> SideFacts:
    """BadBaselineError when the file is not a baseline this version reads."""
    p = Path(path)
    fix = "Write one with `cmlens gate RESULT --write-baseline BASE.json` (or `cmlens compare ... --baseline-out`)."
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise BadBaselineError(f"Baseline {p} does not exist.", fix) from None
    except (OSError, ValueError) as e:
        raise BadBaselineError(f"Baseline {p} is not readable JSON ({e}).", fix) from None
    if not isinstance(data, dict) or data.get("format") != BASELINE_FORMAT:
        what = "a `cmlens lower --json` report" if isinstance(data, dict) and "stages" in data else "not a baseline"
        raise BadBaselineError(f"{p} is {what} (no \"format\": \"{BASELINE_FORMAT}\").", fix)
    v = data.get("version")
    if v != BASELINE_VERSION:
        raise BadBaselineError(f"Baseline {p} has format version {v}; this cmlens reads version {BASELINE_VERSION}.",
                               "Re-write the baseline with this cmlens: " + fix[0].lower() + fix[1:])
    try:
        return SideFacts.from_dict(data["side"])
    except (KeyError, TypeError) as e:
        raise BadBaselineError(f"Baseline {p} is damaged: {e}", fix) from None


def _opt(f: SideFacts, key: str, default: Any) -> Any:
    v = f.options.get(key)
    return default if v is None else v


def check_configuration(base: SideFacts, *, model: str, target: str, flow: str, activations: str,
                        channels_last: bool, artefact: bool = False) -> list[str]:
    """BadBaselineError when `base` is of another model / CPU / option set; returns notes otherwise.
    Also called before a result is lowered, so a wrong baseline costs no lowering."""
    notes = []
    problems = []
    if base.model != model:
        problems.append(f"model: baseline {base.model!r}, result {model!r}")
    if target.startswith("unknown") or base.target.startswith("unknown"):
        notes.append(f"the CPU is not recorded in a program read back ({target}); not checked")
    elif base.target != target:
        problems.append(f"target: baseline {base.target}, result {target}")
    if base.flow != flow and base.kind != "artefact" and not artefact:
        problems.append(f"flow: baseline {base.flow}, result {flow}")
    for key, value, default in (("activations", activations, "int8"), ("channels_last", channels_last, False)):
        a = _opt(base, key, default)
        b = default if value is None else value
        if a != b:
            problems.append(f"{key}: baseline {a}, result {b}")
    if problems:
        raise BadBaselineError("The baseline is of another configuration: " + "; ".join(problems) + ".",
                               "Gate each configuration against a baseline written from the same model, CPU and "
                               "options (one baseline file per configuration).")
    return notes


def check_identity(base: SideFacts, result: SideFacts) -> list[str]:
    """check_configuration for a loaded result."""
    return check_configuration(base, model=result.model, target=result.target, flow=result.flow,
                               activations=_opt(result, "activations", "int8"),
                               channels_last=_opt(result, "channels_last", False),
                               artefact=result.kind == "artefact")
