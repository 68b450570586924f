"""Opening a .pte / .bpte made by plain ExecuTorch APIs: the same operators (in execution order) and
the same fallback ops as the final snapshot of this project's lowering of the same model; named
arguments, qparams, requantisation, the memory plan, constants, a bundle's test cases; the JSON/HTML
report of `cmlens lower model.pte`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from backend_core.lowering.artefacts import open_artefact
from backend_core.lowering.lower import lower
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.common.snapshot.classify import namespace, op_base_name
from backend_core.common.snapshot.model import KIND_DATA, KIND_FALLBACK, KIND_PLUMBING

ROOT = Path(__file__).resolve().parents[2]


def _ops(snap, *, program: bool) -> list[tuple[str, str]]:
    if program:
        nodes = [n for n in snap.nodes if dict(n.flags).get("instruction") is not None]
    else:   # what to_executorch() turns into instructions: no alloc/getitem, no view (a memory-planned view)
        nodes = [n for n in snap.nodes if n.fx_op == "call_function" and n.kind not in (KIND_PLUMBING, KIND_DATA)]
    return [(namespace(n.target), op_base_name(n.target)) for n in nodes]


@pytest.mark.parametrize("model", ["ds_cnn", "layernorm_mlp"])
def test_pte_gives_the_lowerings_operators_and_fallbacks(plain, model: str) -> None:
    art = plain(model)
    res = open_artefact(art.pte, use_cache=False)
    (prog,) = res.snapshots
    assert prog.stage == "program" and res.kind == "pte"
    low = lower(model, PipelineOptions(), use_cache=False)
    assert _ops(prog, program=True) == _ops(low.final, program=False)
    assert [op_base_name(n.target) for n in res.fallbacks()] == [op_base_name(n.target) for n in low.fallbacks()]
    # kernel names exactly as ExecuTorch's program lists them
    assert [n.target.replace(".", "::", 1) for n in prog.nodes if dict(n.flags).get("instruction")] == art.ops


def test_program_details_layernorm(plain) -> None:
    res = open_artefact(plain("layernorm_mlp").pte, use_cache=False)
    prog = res.final
    nm = prog.node_map()
    q = nm["cortex_m_quantize_per_tensor_out"]
    assert q.args[:2] == ("input=%input_0", f"scale={q.output_qparams.scale:.6g}")
    assert q.output_qparams.dtype == "int8" and (q.output_qparams.qmin, q.output_qparams.qmax) == (-128, 127)
    lin = nm["cortex_m_quantized_linear_out"]
    assert lin.kind == "cmsis_nn" and lin.requant is not None and lin.requant.effective_scales
    assert lin.requant.input_offset == -q.output_qparams.zero_point        # input_offset = -zp
    assert any(a.startswith("weights=%constant_") for a in lin.args)
    dq = nm["cortex_m_dequantize_per_tensor_out"]
    assert dq.input_qparams[0][1].zero_point == lin.requant.output_offset  # output_offset = zp of the output
    ln = nm["aten_native_layer_norm_out"]
    assert ln.kind == KIND_FALLBACK and ln.dtype == "float32" and ln.fallback.category == "not_annotated"
    assert "between a dequantize and a quantize" in ln.fallback.message and "ETRecord" in ln.fallback.message
    clamp = nm["aten_clamp_out"]
    assert clamp.fallback.category == "activation_not_fused" and clamp.dtype == "int8"
    # values: dtype, shape, dim order, memory placement; constants with sizes
    assert dict(lin.flags)["dim_order"] == "0,1" and "mem_id=1" in dict(lin.flags)["memory"]
    weight = nm[next(a for a in lin.args if a.startswith("weights=")).split("%")[1]]
    assert weight.kind == "weight" and int(dict(weight.flags)["bytes"]) == 32 * 16
    assert res.memory_plan["non_const_buffer_sizes"][1] > 0
    assert prog.extra["constants"]["bytes"] >= 32 * 16 + 4 * 32
    # a float edge carries no qparams; an int8 edge out of a quantize does
    edges = {(e.src, e.dst): e for e in prog.edges}
    assert edges[("cortex_m_dequantize_per_tensor_out", "aten_native_layer_norm_out")].qparams is None
    assert edges[("cortex_m_quantize_per_tensor_out", "cortex_m_quantized_linear_out")].qparams is not None


def test_view_is_a_memory_planned_view(plain) -> None:
    prog = open_artefact(plain("ds_cnn").pte, use_cache=False).final
    (view,) = [n for n in prog.nodes if n.target == "memory.view"]
    assert view.kind == KIND_DATA and view.inputs == ("cortex_m_quantized_avg_pool2d_out",)
    assert "cortex_m_quantized_linear_out" in {e.dst for e in prog.edges if e.src == view.id}


def test_bpte_gives_program_and_test_cases(plain) -> None:
    art = plain("ds_cnn")
    res = open_artefact(art.bpte, use_cache=False)
    assert res.kind == "bpte" and res.program == art.pte.read_bytes()
    (case,) = res.bundled
    (x,), (y,) = case["inputs"], case["expected_outputs"]
    assert (x["dtype"], x["shape"], y["shape"]) == ("float32", [1, 1, 49, 10], [1, 12])
    assert -1.0 <= x["min"] <= x["max"] <= 1.0
    assert _ops(res.final, program=True) == _ops(open_artefact(art.pte).final, program=True)


def test_cli_lower_pte_writes_a_one_stage_report(plain, tmp_path: Path) -> None:
    art = plain("layernorm_mlp")
    out_json, out_html = tmp_path / "r.json", tmp_path / "r.html"
    p = subprocess.run([sys.executable, "-m", "app.cli", "lower", str(art.pte), "--json", str(out_json),
                        "--html", str(out_html)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rep = json.loads(out_json.read_text())
    assert [s["name"] for s in rep["stages"]] == ["program"]
    low_rows = lower("layernorm_mlp").report()["fallbacks"]
    assert [set(r) for r in rep["fallbacks"]] == [set(r) for r in low_rows]
    assert [r["op"] for r in rep["fallbacks"]] == ["aten.native_layer_norm.out", "aten.clamp.out"]
    assert rep["artefact"]["memory_plan"]["non_const_buffer_sizes"]
    assert "aten_native_layer_norm_out" in p.stdout and "not recorded in the file" in p.stdout
    html = out_html.read_text()
    assert "s=" in html and " zp=" in html            # edge labels show the zero point with the scale


FAST_CHILD = """
import json, sys
from backend_core.lowering.artefacts import open_artefact
res = open_artefact(sys.argv[1], use_cache=False)
print(json.dumps({"torch": "torch" in sys.modules, "snapshot": res.final.to_dict()}, default=str))
"""


@pytest.mark.parametrize("model", ["ds_cnn", "layernorm_mlp"])
def test_torch_free_read_gives_the_same_snapshot(plain, model: str) -> None:
    """Once the schema table exists, a .pte is read without importing torch, to the same snapshot."""
    art = plain(model)
    full = open_artefact(art.pte, use_cache=False).final      # this process has torch: full deserialiser
    p = subprocess.run([sys.executable, "-c", FAST_CHILD, str(art.pte)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["torch"] is False
    assert out["snapshot"] == json.loads(json.dumps(full.to_dict(), default=str))
