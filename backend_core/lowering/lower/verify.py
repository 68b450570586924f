"""Try the suggestions the tool can make itself, by re-lowering a modified copy, and say whether
each removes its fallback ("verified: this removes the fallback") or not ("not verified").

Fixes tried: the channels-last conversion for `layout` fallbacks (the --channels-last option), an
nn.LSTM / nn.GRU written as its cells (the --rewrite rnn-cells option),
relu6 → hardtanh, and a softmax dim moved last (backend_core.stages.fallback.rewrites). One re-lowering
per kind of fix, applied to every op it concerns; a group counts as fixed when the re-lowered
program finishes, has no fallback from that user op, and has fewer fallbacks in all.
Runs where the lowering runs (CLI process, lowering worker), never in the GUI process.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from backend_core.stages.fallback.fixes import CHANNELS_LAST, NOT_VERIFIED, RNN_CELLS, VERIFIED, describe, fix_for
from backend_core.common.snapshot.model import KIND_FALLBACK, GraphSnapshot

@dataclass
class Relowered:
    status: str
    groups: set[str]          # fallback groups, in the original lowering's names
    count: int
    error: str = ""


def relower(model: Any, options: Any, fix: str, supported: frozenset[str]) -> Relowered:
    """Lower a modified copy: the same LoadedModel (never changed) with the fix applied."""
    from backend_core.common.errors import StageFailedError
    from backend_core.stages.pipeline.stepped import LoweringPipeline
    from backend_core.stages.fallback.reasons import FallbackContext, explain_fallbacks
    from backend_core.stages.fallback.rewrites import REWRITES

    opts = (replace(options, channels_last=True) if fix == CHANNELS_LAST
            else replace(options, rewrites=(*options.rewrites, RNN_CELLS)) if fix == RNN_CELLS else options)
    rewrite = None if fix in (CHANNELS_LAST, RNN_CELLS) else REWRITES[fix][0]
    pipe = LoweringPipeline(model, opts, keep_edge_program=False, float_rewrite=rewrite)
    try:
        for _stage in pipe.run():
            pass
    except StageFailedError as e:
        return Relowered("failed", set(), 0, e.message)
    ctx = FallbackContext(list(pipe.snapshots), pipe.verdicts.to_dict(), opts.target, opts.flow, supported)
    final = explain_fallbacks(ctx)
    fbs = [n.fallback for n in final.nodes if n.kind == KIND_FALLBACK and n.fallback is not None]
    groups = {pipe.renames.get(f.group, f.group) for f in fbs}
    return Relowered("done", groups, len(fbs))


def verify_suggestions(final: GraphSnapshot, model: Any, options: Any, supported: frozenset[str],
                       on_status: Callable[[str], None] | None = None) -> GraphSnapshot:
    """The final snapshot with `verified` / `verification` set on every fallback a fix exists for."""
    say = on_status or (lambda _t: None)
    fbs = {n.id: n.fallback for n in final.nodes if n.kind == KIND_FALLBACK and n.fallback is not None}
    wanted: dict[str, set[str]] = {}
    for fb in fbs.values():
        fix = fix_for(fb, options.flow, options.channels_last)
        if fix:
            wanted.setdefault(fix, set()).add(fb.group)
    if CHANNELS_LAST in wanted:
        # An activation that follows an NCHW conv could not fuse because the conv stayed in
        # float: the same re-lowering shows whether it fuses once the conv is channels-last.
        for fb in fbs.values():
            if fb.category == "activation_not_fused" and "already follows" in fb.suggestion:
                wanted[CHANNELS_LAST].add(fb.group)
    if not wanted:
        return final
    outcome: dict[str, tuple[str, str]] = {}           # group -> (verified, text)
    for fix, groups in wanted.items():
        say(f"verifying a suggestion: re-lowering with {describe(fix)}")
        r = relower(model, options, fix, supported)
        for g in groups:
            if r.status != "done":
                outcome[g] = (NOT_VERIFIED, f"re-lowered a copy with {describe(fix)}: the lowering failed "
                                            f"({r.error.splitlines()[0] if r.error else 'no detail'})")
                continue
            ok = g not in r.groups and r.count < len(fbs)
            word = "verified: this removes the fallback" if ok else "not verified"
            outcome[g] = (VERIFIED if ok else NOT_VERIFIED,
                          f"{word} — re-lowered a copy with {describe(fix)}: {len(fbs)} → {r.count} "
                          f"fallback(s); this op {'no longer falls back' if g not in r.groups else 'still falls back'}")
    nodes = []
    for n in final.nodes:
        nfb = n.fallback
        if n.kind == KIND_FALLBACK and nfb is not None and nfb.group in outcome:
            verdict, text = outcome[nfb.group]
            nfb = replace(nfb, verified=verdict, verification=text,
                          suggestion=f"{nfb.suggestion} [{text.split(' — ')[0]}]")
            n = replace(n, fallback=nfb)
        nodes.append(n)
    return replace(final, nodes=tuple(nodes))
