"""Compares of real lowerings: an edit of one model file, two CPUs, channels-last or not, int8 vs int16.
Each checks the fallbacks added / removed on the user's lines and the deltas a user reads."""
from __future__ import annotations

from backend_core.orchestration.compare import compare_facts, compare_to_dict
from backend_core.orchestration.compare.text import comparison_text

from .conftest import NCHW, V1, V2


def _row(cmp, name: str):
    """The row of the user op named `name` (not a q/dq row anchored `before/after `name``)."""
    return next(r for r in cmp.rows if r.label.split(" ")[1:2] == [f"`{name}`"])


def test_edit_adds_a_layernorm_fallback_on_its_line_and_grows_memory(side) -> None:
    a, b = side(str(V1)), side(str(V2))
    cmp = compare_facts([a.facts, b.facts])
    d = cmp.deltas[0]
    assert [f["op"] for f in d["fallbacks_added"]] == ["aten.layer_norm.default"]
    added = d["fallbacks_added"][0]
    assert added["source"].endswith("v2/tiny_net.py:22") and added["category"] == "not_annotated"
    assert added["module"] == "norm" and "layer_norm" in added["reason"]
    assert not d["fallbacks_removed"]
    # the widened conv is the same user op (its forward line moved by one: matched by the line's text)
    conv2 = _row(cmp, "conv2d_1")
    assert conv2.match[1] == "line moved" and conv2.module == "conv2"
    assert conv2.cells[0].shape == [1, 8, 8, 8] and conv2.cells[1].shape == [1, 16, 8, 8]
    assert any("scales: 8 -> 16 values" in c for c in conv2.changes[1])
    # the edit added a line to __init__, so every forward line moved: the untouched conv1 is still
    # matched (by its line's text) and unchanged
    conv1 = _row(cmp, "conv2d")
    assert conv1.match[1] == "line moved" and conv1.change == "same", conv1.changes
    mem = d["memory"]
    assert mem["arena_bytes"]["delta"] > 0 and mem["pte_bytes"]["delta"] > 0
    assert mem["arena_bytes"]["base"] == a.facts.memory["arena_bytes"]
    assert mem["pte_bytes"]["value"] == b.report["memory"]["pte_bytes"]
    text = comparison_text(cmp)
    assert "+ aten.layer_norm `layer_norm` [norm]" in text and "v2/tiny_net.py:22" in text


def test_same_model_twice_changes_nothing(side) -> None:
    a = side(str(V1))
    again = side(f"{V1}@label=again")          # a second load of the same lowering
    cmp = compare_facts([a.facts, again.facts])
    d = cmp.deltas[0]
    assert all(r.change == "same" for r in cmp.rows)
    assert not d["fallbacks_added"] and not d["fallbacks_removed"] and not d["qparams_changed"]
    assert all(m["delta"] in (0, None) for m in d["memory"].values())


def test_two_cpus_same_ops_other_scratch(side) -> None:
    m4, m55 = side(f"{V1}@m4"), side(f"{V1}@m55")
    cmp = compare_facts([m4.facts, m55.facts])
    d = cmp.deltas[0]
    assert (m4.facts.target, m55.facts.target) == ("cortex-m4", "cortex-m55")
    assert not d["fallbacks_added"] and not d["fallbacks_removed"] and not d["qparams_changed"]
    # same file, same lines: every user op matches exactly; q/dq nodes (no line of their own) by the
    # module and the user op they border
    assert all(r.match[1] == "exact" for r in cmp.rows if r.source)
    assert all(r.match[1] == "module+op" for r in cmp.rows if not r.source)
    # CMSIS-NN's DSP and MVE kernels ask for other scratch sizes: the arena follows
    assert d["memory"]["scratch_bytes_max"]["base"] != d["memory"]["scratch_bytes_max"]["value"]
    assert d["memory"]["arena_bytes"]["delta"] == (m55.facts.memory["arena_bytes"] - m4.facts.memory["arena_bytes"])


def test_channels_last_removes_the_layout_fallback_and_fuses_the_relu(side) -> None:
    given, cl = side(f"{NCHW}@as-given"), side(f"{NCHW}@channels-last")
    cmp = compare_facts([given.facts, cl.facts])
    d = cmp.deltas[0]
    removed = {f["op"]: f for f in d["fallbacks_removed"]}
    assert set(removed) == {"aten.conv2d.default", "aten.relu.default"} and not d["fallbacks_added"]
    assert removed["aten.conv2d.default"]["category"] == "layout"
    assert removed["aten.conv2d.default"]["source"].endswith("conv_relu_nchw.py:12")
    relu = _row(cmp, "relu")
    assert relu.cells[0].status == "fallback" and relu.cells[1].status == "fused"
    assert "conv2d" in relu.cells[1].fused_into                 # many-to-one: folded into the conv
    conv = _row(cmp, "conv2d")
    assert conv.cells[0].status == "fallback" and conv.cells[1].status == "lowered"
    assert d["memory"]["arena_bytes"]["delta"] < 0


def test_int16_activations_push_the_linears_to_portable_kernels(side) -> None:
    i8, i16 = side("layernorm_mlp@int8"), side("layernorm_mlp@int16")
    cmp = compare_facts([i8.facts, i16.facts])
    d = cmp.deltas[0]
    added = {f["module"]: f for f in d["fallbacks_added"]}
    assert set(added) == {"fc1", "fc2"} and all(f["category"] == "unsupported_dtype" for f in added.values())
    assert all(f["source"] and f["source"].endswith("teaching.py:25") for f in added.values())
    # the LayerNorm falls back either way; the ReLU stays a fallback for another reason
    assert not d["fallbacks_removed"]
    recat = {f["module"]: f for f in d["fallbacks_recategorised"]}
    assert recat["act"]["base_category"] == "activation_not_fused" and recat["act"]["category"] == "not_annotated"
    assert any("int8 -> int16" in q["differences"] for q in d["qparams_changed"])


def test_compare_json_is_plain_data_with_rows_and_deltas(side) -> None:
    import json

    a, b = side(str(V1)), side(str(V2))
    d = compare_to_dict(compare_facts([a.facts, b.facts]))
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text)["format"] == "cmlens-compare" and d["version"] == 1
    assert len(d["sides"]) == 2 and d["sides"][1]["fallbacks"][0]["op"] == "aten.layer_norm.default"
    row = next(r for r in d["rows"] if r["change"] == "added" and "layer_norm" in r["label"])
    assert row["cells"][0] is None and row["cells"][1]["nodes"] == ["aten_native_layer_norm_default"]
