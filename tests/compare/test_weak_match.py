"""A .pte made by ExecuTorch's own API (no provenance: no module path, no source line) against cmlens'
lowering of the same model file: matched by operator order, op and shape, and the output says so."""
from __future__ import annotations

from backend_core.orchestration.compare import compare_facts
from backend_core.orchestration.compare.text import comparison_text

from .conftest import V1, V2


def test_bare_pte_matches_the_same_model_by_order_and_says_it_is_weaker(side, plain_v1) -> None:
    pte, ours = side(str(plain_v1)), side(str(V1))
    assert pte.facts.provenance == "weak" and ours.facts.provenance == "full"
    cmp = compare_facts([pte.facts, ours.facts])
    assert cmp.reference == 1 and cmp.weak
    assert any("matched to side 2 by operator order, op and output shape" in n and "weaker" in n for n in cmp.notes)
    d = cmp.deltas[0]
    # every kernel of cmlens' lowering found its counterpart in the program; nothing added or removed
    assert not d["ops_added"] and not d["ops_removed"]
    assert not d["fallbacks_added"] and not d["fallbacks_removed"]
    kernels = [r for r in cmp.rows if r.cells[1] is not None and r.cells[1].status == "lowered"]
    assert kernels and all(r.cells[0] is not None and r.match[0] == "weak" for r in kernels)
    # the relus fused into the convs cannot be seen in a program: said, not reported as removed
    fused = [r for r in cmp.rows if r.cells[1] is not None and r.cells[1].status == "fused"]
    assert len(fused) == 2 and all(r.match[0] == "n/a" and r.change == "same" for r in fused)
    # same model, same calibration data: the same requantisation and the same memory plan
    assert not d["qparams_changed"]
    assert d["memory"]["pte_bytes"]["delta"] == 0 and d["memory"]["arena_bytes"]["delta"] == 0
    text = comparison_text(cmp, all_rows=True)
    assert "NO PROVENANCE: weak match" in text and "(weak match)" in text


def test_bare_pte_of_the_old_model_against_the_edited_source(side, plain_v1) -> None:
    cmp = compare_facts([side(str(plain_v1)).facts, side(str(V2)).facts])
    d = cmp.deltas[0]
    added = d["fallbacks_added"]
    assert [f["op"] for f in added] == ["aten.layer_norm.default"]
    assert added[0]["source"].endswith("v2/tiny_net.py:22")          # the line comes from the side that has it
    assert any(r["label"].startswith("aten.layer_norm") for r in d["ops_added"])
