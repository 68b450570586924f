"""Profile core on real data: the ETDump a real QEMU run printed (tests/fixtures/target, the stock
ExecuTorch runner on mps3-an547) and real lowerings' final snapshots. The recorded run predates the
board layer's tick source, so its timestamps are all 0: these tests check the structure (events,
instruction -> node alignment, islands, MACs); counts come from tests with real ticks."""
from __future__ import annotations

import json

import pytest

from backend_core.target.profile import Profile, build_profile, find_islands, profile_table, qemu_icount
from backend_core.target.profile.costs import macs
from backend_core.target.profile.events import EtdumpProfile, Inference, InstructionEvent, op_base, parse_etdump
from backend_core.target.profile.mapping import align
from backend_core.target.profile.run import over_budget
from backend_core.target.simulate.uart import parse_uart

from profile_support import FIXTURES, TARGET_FIXTURES, final_of  # noqa: F401  fixtures

UART = TARGET_FIXTURES / "uart_etdump_tiny_conv_pass_mps3-an547.txt"


@pytest.fixture(scope="module")
def recorded_events() -> EtdumpProfile:
    pytest.importorskip("executorch")
    block = parse_uart(UART.read_text()).etdumps[0]
    return parse_etdump(block.files["etdump.bin"])


def test_recorded_etdump_events(recorded_events: EtdumpProfile) -> None:
    assert len(recorded_events.inferences) == 1
    inf = recorded_events.inferences[0]
    assert [e.op_name for e in inf.instructions] == [
        "quantize_per_tensor.out", "quantized_conv2d.out", "quantized_depthwise_conv2d.out",
        "quantized_avg_pool2d.out", "quantized_linear.out", "dequantize_per_tensor.out"]
    assert [e.instruction_id for e in inf.instructions] == list(range(6))
    assert all(e.kernel_ticks is not None for e in inf.instructions)    # native_call_* inside OPERATOR_CALL
    assert recorded_events.all_zero                                      # no tick source in that firmware


def _tiny_final():
    """The final graph of the lowering that ran (channels-last input, as the recorded run had it),
    saved as a snapshot so the test does not depend on today's default layout."""
    from backend_core.common.snapshot.model import snapshot_from_dict

    return snapshot_from_dict(json.loads((FIXTURES / "tiny_conv_m55_channels_last.final.json").read_text()))


def test_recorded_etdump_maps_onto_the_final_graph(recorded_events: EtdumpProfile) -> None:
    final = _tiny_final()
    prof = build_profile(recorded_events, final, qemu_icount(5), model="tiny", target="cortex-m55")
    ids = {n.id for n in final.nodes}
    assert not prof.unmapped and all(o.node in ids for o in prof.ops)
    assert [final.node(o.node).target for o in prof.ops] == [
        "cortex_m.quantize_per_tensor.default", "cortex_m.quantized_conv2d.default",
        "cortex_m.quantized_depthwise_conv2d.default", "cortex_m.quantized_avg_pool2d.default",
        "cortex_m.quantized_linear.default", "cortex_m.dequantize_per_tensor.default"]
    # flatten is a view_copy in the final graph; to_executorch() makes it a memory-planned view
    assert [final.node(n).target for n in prof.no_instruction] == ["aten.view_copy.default"]
    assert any("every timestamp in the ETDump is 0" in n for n in prof.notes)
    conv = prof.ops[1]
    assert conv.macs == 6 * 6 * 4 * (2 * 3 * 3)          # 6x6 output, 4 filters of 2x3x3
    assert prof.ops[2].macs == 6 * 6 * 4 * 9             # depthwise 3x3
    assert prof.ops[4].macs == 4 * 3                     # linear 4 -> 3
    assert prof.ops[0].macs is None and prof.ops[0].bytes_moved == 72 * 4 + 72   # float in, int8 out


def test_corrupt_etdump_is_a_clear_error() -> None:
    pytest.importorskip("executorch")
    from backend_core.common.errors import BadInputError

    with pytest.raises(BadInputError, match="Not a readable ETDump"):
        parse_etdump(b"\x00garbage" * 10)
    with pytest.raises(BadInputError, match="empty"):
        parse_etdump(b"")


def test_layernorm_island_on_a_real_lowering(final_of) -> None:  # noqa: F811 - the imported fixture
    final = final_of("layernorm_mlp")
    islands = find_islands(final)
    assert len(islands) == 2
    ln, clamp = islands
    assert [final.node(n).target for n in ln.nodes] == [
        "cortex_m.dequantize_per_tensor.default", "aten.native_layer_norm.default", "getitem",
        "cortex_m.quantize_per_tensor.default"]
    assert ln.fallbacks == ["aten_native_layer_norm_default"]
    assert [final.node(n).module_path for n in ln.neighbours] == ["fc1", "fc2"]
    assert clamp.nodes == clamp.fallbacks == ["aten_clamp_default"]     # int8 fallback: an island of one
    # the model's own input quantize and output dequantize are no island
    assert not any("cortex_m_quantize_per_tensor_default" == n for i in islands for n in i.nodes)


def test_no_island_without_fallbacks(final_of) -> None:  # noqa: F811 - the imported fixture
    assert find_islands(final_of("ds_cnn")) == []


def _events(final, counts: dict[str, int], overhead: int = 0) -> EtdumpProfile:
    """Events for every op node of `final` with the given per-op-name instruction counts."""
    from backend_core.target.profile.mapping import op_nodes

    t, evs = 0, []
    for k, n in enumerate(op_nodes(final)):
        if n.target == "aten.view_copy.default":
            continue
        c = counts[n.id] if n.id in counts else counts.get(op_base(n.target), 10)
        evs.append(InstructionEvent(0, k, op_base(n.target) + ".out", t, t + c, c - 3))
        t += c + 7
    return EtdumpProfile([Inference(0, 0, t + overhead, evs), Inference(1, 0, t + overhead, list(evs))])


def test_profile_rows_groups_islands_and_json(final_of) -> None:  # noqa: F811 - the imported fixture
    final = final_of("layernorm_mlp")
    ev = _events(final, {"quantized_linear": 1003, "native_layer_norm": 3003, "quantize_per_tensor": 203,
                         "dequantize_per_tensor": 153, "clamp": 403}, overhead=100)
    p = build_profile(ev, final, qemu_icount(5, 32e6), model="layernorm_mlp", target="cortex-m55")
    assert len(p.ops) == 8 and not p.unmapped and p.deterministic is True
    # per-op counts are the kernel wrappers' spans (3 less than OPERATOR_CALL here); shares are of their sum
    assert p.ops_total == sum(o.call_count - 3 for o in p.ops) and p.recording_per_event == 3
    assert p.total == p.ops_total + 3 * 8 + 7 * 8 + 100 and p.overhead == 3 * 8 + 7 * 8 + 100
    ln = next(i for i in p.islands if "layer_norm" in i.name)
    assert ln.count == 150 + 3000 + 200 and ln.neighbours_count == 2000
    assert ln.ratio == pytest.approx(3350 / 2000) and ln.share == pytest.approx(3350 / p.ops_total)
    kinds = {g.name: g.count for g in p.by_kind}
    assert kinds == {"CMSIS-NN": 2000, "portable compute": 3400, "quantize boundary": 700}
    mods = {g.name: g.count for g in p.by_module}
    assert mods["fc1"] == 1000 + 150           # the linear's dequantize (same debug handle) joins its module
    assert mods["(graph boundary)"] == 200     # the input quantize belongs to no module
    fc1 = next(o for o in p.ops if o.module_path == "fc1" and "linear" in o.op)
    assert fc1.macs == 16 * 32 and fc1.per_mac == pytest.approx(1000 / 512)
    d = json.loads(json.dumps(p.to_dict(), allow_nan=False))
    assert d["unit"] == "instructions" and d["total"] == p.total
    assert {"node", "op", "count", "macs"} <= set(d["ops"][0]) and {"nodes", "count", "share"} <= set(d["islands"][0])
    back = Profile.from_dict(d)
    assert back.total == p.total and back.islands[0].ratio == ln.ratio and back.unit.label == p.unit.label
    text = profile_table(p)
    assert "instructions executed (QEMU -icount), not cycles" in text
    assert "aten.native_layer_norm island" in text and f"{ln.share:.1%} of the inference's kernels" in text


def test_alignment_survives_a_foreign_instruction(final_of) -> None:  # noqa: F811 - the imported fixture
    """An instruction the graph does not have is reported unmapped, the rest still align."""
    final = final_of("layernorm_mlp")
    ev = _events(final, {})
    inf = ev.inferences[0]
    inf.instructions.insert(3, InstructionEvent(0, 99, "softmax.out", 0, 5, 4))
    al = align(inf.instructions, final)
    assert al.unmapped == [3] and al.node_of.count(None) == 1
    assert al.node_of[4] == "aten_native_layer_norm_default"


def test_ds_cnn_macs(final_of) -> None:  # noqa: F811 - the imported fixture
    final = final_of("ds_cnn")
    total = sum(m for n in final.nodes if (m := macs(n, final)))
    # 10x4 conv 1->64 over 25x5, 4 x (depthwise 3x3 + pointwise 64->64), fc 64->12
    assert total == 125 * 64 * 40 + 4 * (125 * 64 * 9 + 125 * 64 * 64) + 64 * 12


def test_budget_messages(final_of) -> None:  # noqa: F811 - the imported fixture
    final = final_of("layernorm_mlp")
    p = build_profile(_events(final, {}), final, qemu_icount(5), model="m", target="cortex-m55")
    assert over_budget(p, None) == "" and over_budget(p, p.total) == ""
    assert "over the budget of" in over_budget(p, p.total - 1)
    from backend_core.target.profile.units import raw_ticks
    p.unit = raw_ticks()
    assert "run on QEMU with -icount" in over_budget(p, 10 ** 9)


def test_across_cpus_matches_layers_by_debug_handle(final_of) -> None:  # noqa: F811 - the imported fixture
    """M4 and M55 lower layernorm_mlp to different graphs (MVE linears carry kernel_sum); rows still pair up."""
    from backend_core.target.profile import compare_cpus

    m55, m4 = final_of("layernorm_mlp", "cortex-m55"), final_of("layernorm_mlp", "cortex-m4")
    p55 = build_profile(_events(m55, {"quantized_linear": 503}), m55, qemu_icount(5), model="layernorm_mlp",
                        target="cortex-m55")
    p4 = build_profile(_events(m4, {"quantized_linear": 1503}), m4, qemu_icount(5), model="layernorm_mlp",
                       target="cortex-m4")
    cmp = compare_cpus([p55, p4])
    assert cmp.cpus == ["cortex-m55", "cortex-m4"] and cmp.unit == "instructions"
    linears = [r for r in cmp.rows if "quantized_linear" in r.op]
    assert len(linears) == 2 and all(r.ratio("cortex-m4", "cortex-m55") == pytest.approx(3.0) for r in linears)
    assert all(r.counts["cortex-m4"] is not None for r in cmp.rows)
    text = cmp.table()
    assert "ratio to m55" in text and "3.00" in text and "whole inference" in text
    json.dumps(cmp.to_dict(), allow_nan=False)


def test_units_are_named_for_what_they_count() -> None:
    """QEMU -icount: instructions; QEMU without it: not a cost; the FVP (no FVP here, only its board
    row): its cycles, not trusted for absolute timing."""
    from backend_core.target.profile.run import run_unit
    from backend_core.common.boards.table import board_for

    q = run_unit(board_for("cortex-m55", "qemu"), icount=True)
    assert (q.name, q.label, q.deterministic) == ("instructions", "instructions executed (QEMU -icount), not cycles",
                                                  True)
    assert "shift=5" in q.source
    assert run_unit(board_for("cortex-m4", "qemu"), icount=False).name == "ticks"
    f = run_unit(board_for("cortex-m55", "fvp"), icount=True)
    assert f.name == "cycles" and "not trusted for absolute timing" in f.label and not f.deterministic


def test_cmlens_profile_cpu_list_and_bad_input(capsys, monkeypatch) -> None:
    from app.cli import main
    from app.cli.profile import parse_cpus

    assert parse_cpus("m4, M55,cortex-m33,m4") == ["cortex-m4", "cortex-m55", "cortex-m33"]
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    assert main(["profile", "ds_cnn", "--cpus", "m4,m99"]) == 2
    assert "cortex-m99" in capsys.readouterr().err
    assert main(["profile", "ds_cnn", "--cpus", "m85"]) == 2          # no QEMU board: named, before any build
    assert "QEMU has no board with a cortex-m85" in capsys.readouterr().err
    assert main(["profile", "ds_cnn", "--cpus", "m4"]) == 2           # no checkout
    assert "--et-root" in capsys.readouterr().err
