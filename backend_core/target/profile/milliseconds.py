"""A profile's cycle estimate in milliseconds per op and per fallback island, and its headline: the one
reading of `profile.estimate` (backend_core.target.timing.estimate.Estimate.to_dict()) that the text,
the JSON, the HTML report, the window's Profile tab, the gate and history all show, so they agree.
`p` is a backend_core.target.profile.model.Profile (not imported: its to_dict writes what this reads)."""
from __future__ import annotations

from typing import Any

def op_ms(p: Any) -> list[float]:
    """Estimated milliseconds per profile row, in row order ([] without an estimate that covers the rows)."""
    e = p.estimate
    if not e or len(e.get("per_op") or []) != len(p.ops) or not e.get("clock_mhz"):
        return []
    return [c / (e["clock_mhz"] * 1e3) for c in e["per_op"]]


def island_ms(p: Any, island: Any, per_op: list[float] | None = None) -> float | None:
    """The island's estimated milliseconds: the sum of its nodes' rows (None without an estimate)."""
    ms = op_ms(p) if per_op is None else per_op
    if not ms:
        return None
    nodes = set(island.nodes)
    return sum(m for o, m in zip(p.ops, ms) if o.node in nodes)


def error_text(e: dict[str, Any], basis: bool = True) -> str:
    """"±16 % on published measurements (basis)" or why there is no figure; `basis=False`: without the
    parenthesis (the window's one line, which has the basis in its tooltip)."""
    if e.get("error_pct") is not None:
        return f"±{e['error_pct']:.0f} % on published measurements" + (f" ({e.get('error_basis', '')})" if basis else "")
    return e.get("error_basis") or "not validated on published measurements"


def confidence_text(e: dict[str, Any]) -> str:
    """"LOW CONFIDENCE: unmodelled (7.1%)", "unmodelled (0.3%)" or "" (every instruction modelled)."""
    share = e.get("unmodelled_share") or 0.0
    if e.get("low_confidence"):
        return f"LOW CONFIDENCE: unmodelled ({share:.1%})"
    return f"unmodelled ({share:.1%})" if e.get("unmodelled") else ""


def estimate_headline(e: dict[str, Any], basis: bool = True) -> str:
    """"≈ 2.9 M cycles ≈ 7.3 ms @ 400 MHz on alif-e7, estimate: ±E % on published measurements"."""
    low = confidence_text(e)
    return (f"≈ {e['cycles'] / 1e6:.3g} M cycles ≈ {e['ms']:.3g} ms @ {e['clock_mhz']:g} MHz on "
            f"{e.get('board') or e['core']}, estimate: {error_text(e, basis)}{'; ' + low if low else ''}")


def used_text(e: dict[str, Any]) -> str:
    """The values the estimate used and where each came from (the report names them)."""
    ws = e.get("flash_wait_states")
    return (f"{e['core']} timing table (resources/timing/{e['core']}.json) on the {e['stream_core']} instruction "
            f"stream, clock {e['clock_mhz']:g} MHz ({e['clock_source']}), flash wait states "
            f"{'unknown' if ws is None else ws} ({e['wait_states_source']}), stall per load "
            f"{e['stall_per_load']:.2f} cycles (fitted by bench/cycle_estimate.py)")


def sources_of_error(e: dict[str, Any]) -> list[str]:
    """What the figure leaves out (timing.estimate.SOURCES_OF_ERROR, carried in the estimate itself)."""
    return list(e.get("sources_of_error") or [])


def estimate_summary(e: dict[str, Any] | None) -> dict[str, Any] | None:
    """The estimate as a report carries it: the raw figures plus the headline, the values used, the
    confidence and the known sources of error in words (the ms per op and island are on the rows)."""
    if not e:
        return None
    if any(e.get(k) is None for k in ("cycles", "ms", "clock_mhz", "core")):
        return dict(e)                      # not an Estimate.to_dict(): carried as given, no words made up
    return {**e, "headline": estimate_headline(e), "used": used_text(e), "sources_of_error": sources_of_error(e),
            "confidence": confidence_text(e), "error_text": error_text(e)}

