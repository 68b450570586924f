"""An ETRecord gives its graphs as stages (with the program linked by debug handles), and an ETDump
recorded from a real run (QEMU mps3-an547, the stock Arm runner; tests/fixtures/target) overlays
per-op rows and per-layer gaps on the program's nodes."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend_core.lowering.artefacts import open_artefact
from backend_core.common.snapshot.model import KIND_FALLBACK


def test_etrecord_gives_its_graphs_as_stages(plain, tmp_path: Path) -> None:
    art = plain("layernorm_mlp")
    res = open_artefact(art.etrecord, use_cache=False)      # finds layernorm_mlp.pte next to it
    assert [s.stage for s in res.snapshots] == ["exported program", "quantized", "edge program", "program"]
    export, quantized, edge, program = res.snapshots
    assert any("quantize_per_tensor" in n.target for n in quantized.nodes)
    assert any(n.target.startswith("cortex_m.") for n in edge.nodes)
    # the edge graph's fallbacks carry the reasons the recorded graphs support
    ln = next(n for n in edge.nodes if n.target == "aten.native_layer_norm.default")
    assert ln.kind == KIND_FALLBACK and ln.fallback.category == "not_annotated"
    # the program is linked to the edge graph through the record's debug-handle map
    pln = program.node("aten_native_layer_norm_out")
    assert pln.debug_handle == ln.debug_handle and pln.module_path == "norm" and pln.origin[0] == ln.id
    assert pln.fallback.category == "not_annotated" and pln.source is not None
    assert res.program == art.pte.read_bytes()
    # without its program next to it, the record still opens, and says what is missing
    lone = tmp_path / "lone.etrecord"
    shutil.copy(art.etrecord, lone)
    res = open_artefact(lone, use_cache=False)
    assert [s.stage for s in res.snapshots] == ["exported program", "quantized", "edge program"]
    assert res.final is not None and any("does not embed the .pte" in n for n in res.notes)


def test_etdump_overlays_per_op_rows_and_gaps(recorded_run) -> None:
    work, rec = recorded_run
    res = open_artefact(work / "run.etdump", etrecord=rec.etrecord, program=rec.bpte, use_cache=False)
    assert res.kind == "etdump" and res.snapshots[-1].stage == "program"
    program = res.snapshots[-1]
    prof = res.overlay["profile"]
    ran = [o["node"] for o in prof["ops"]]
    assert ran == [n.id for n in program.nodes if dict(n.flags).get("instruction")]   # every instruction mapped
    assert prof["unit"] == "ticks" and "unknown" in prof["unit_info"]["label"]
    assert any("every timestamp in the ETDump is 0" in n for n in res.notes)          # this run had no ticks
    gaps = res.overlay["gaps"]
    assert gaps["layers"] and all(g["node_id"] in program.node_map() for g in gaps["layers"])
    # the recorded run PASSed bit-exactly: every layer of the target equals the host's (linear and its
    # dequantize share one debug handle: 5 layers for 6 instructions)
    assert gaps["identical_layers"] == len(gaps["layers"]) == 5 and gaps["first_divergence"] is None
    conv = next(g for g in gaps["layers"] if g["node_id"] == "cortex_m_quantized_conv2d_out")
    assert conv["module_path"] == "conv" and conv["numel"] == 4 * 6 * 6


def test_etdump_via_the_record_with_debug_buffer_found_next_to_it(recorded_run) -> None:
    work, rec = recorded_run
    res = open_artefact(rec.etrecord, etdump=work / "run.etdump", program=rec.bpte, use_cache=False)
    assert res.kind == "etrecord" and res.overlay["debug_buffer"].endswith("debug_buffer.bin")
    assert res.overlay["gaps"]["identical_layers"] == len(res.overlay["gaps"]["layers"])
    assert [s.stage for s in res.snapshots][-2:] == ["edge program", "program"]


ICOUNT_DUMP = Path(__file__).parent / "fixtures" / "ds_cnn_plain_m55_qemu_icount.etdump"
# The program that ran, stored beside its ETDump: a re-lowering is not byte-identical across machines
# (calibration's float rounding differs with the CPU's vector unit: AVX-512, AVX2 and
# ATEN_CPU_CAPABILITY=default gave three different .pte files of this same model and code).
ICOUNT_PROGRAM = Path(__file__).parent / "fixtures" / "ds_cnn_plain_m55_qemu_icount.pte"
ICOUNT_PROGRAM_SHA256 = "ad3f6367c82441d35e73370e703d9bf4bade35ab2251823d5074d5b317f4263f"


def test_etdump_of_a_qemu_icount_run_gives_per_op_counts() -> None:
    """Recorded: `cmlens run ds_cnn.bpte --etdump --profile` (the plain-API bundle of the stored program,
    tests/artefacts/plain_flow.py) on QEMU mps3-an547 with -icount shift=5, stock ExecuTorch runner
    (PASS); its etdump.bin is the fixture. -icount makes the counts deterministic, so they are asserted
    exactly."""
    import hashlib

    pytest.importorskip("executorch")
    pte = ICOUNT_PROGRAM
    assert hashlib.sha256(pte.read_bytes()).hexdigest() == ICOUNT_PROGRAM_SHA256   # the stored file is the one that ran
    res = open_artefact(ICOUNT_DUMP, program=pte, use_cache=False)
    prof = res.overlay["profile"]
    program = res.snapshots[-1]
    assert [o["node"] for o in prof["ops"]] == [n.id for n in program.nodes if dict(n.flags).get("instruction")]
    assert prof["total"] == 1_955_803 and prof["unit"] == "ticks"      # the file does not say it is QEMU
    counts = {o["node"]: o["count"] for o in prof["ops"]}
    assert counts["cortex_m_quantized_depthwise_conv2d_out"] == 308_760
    assert counts["cortex_m_quantized_conv2d_out"] == 211_529 and counts["cortex_m_quantized_linear_out"] == 4_541
    assert all(c > 0 for c in counts.values()) and sum(counts.values()) <= prof["total"]
    conv = next(o for o in prof["ops"] if o["node"] == "cortex_m_quantized_conv2d_out")
    assert conv["macs"] == 512_000                       # MACs from the program's shapes (backend_core.target.profile)
