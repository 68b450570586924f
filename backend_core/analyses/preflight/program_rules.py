"""Rules on the serialised program: operators the runner's kernel registry lacks (the checkout's
YAMLs, via target/et_ops.py) and a bundled program whose expected outputs the runner cannot compare
(bundled_program.cpp insists on equal strides)."""
from __future__ import annotations

import struct
from pathlib import Path

from backend_core.common.snapshot.model import GraphSnapshot
from backend_core.target.build.ops import OP_YAMLS, _Table, check_ops, read_program_ops
from backend_core.analyses.preflight.dim_order import describe, strides
from backend_core.common.finding import WILL_FAIL, Finding

BUNDLE_SOURCE = "devtools/bundled_program/bundled_program.cpp:188"
_TENSOR_TYPE = {"bundle": 1, "program": 5}     # ValueUnion.Tensor / KernelTypes.Tensor


def _nodes_for_op(op: str, final: GraphSnapshot | None) -> list[str]:
    """Final-graph nodes running `ns::name.overload` (the .pte names the out variant)."""
    if final is None:
        return []
    ns, _, rest = op.partition("::")
    base = rest.split(".")[0]
    return [n.id for n in final.nodes if n.fx_op == "call_function"
            and n.target.split(".")[:2] == [ns, base]]


def registry_findings(program: bytes, et_root: str | Path, final: GraphSnapshot | None = None) -> list[Finding]:
    """One finding per operator the checkout registers no kernel for, on the nodes that use it."""
    root = Path(et_root)
    check = check_ops(read_program_ops(program), {lib: root / rel for lib, rel in OP_YAMLS.items()})
    out = []
    hint = check.hint()
    for op in check.missing:
        msg = (f"The runner built from {root} registers no kernel for {op}: loading the method fails with "
               f"\"Missing operator: {op}\" before anything runs.")
        ev = (f"operator {op} of the program", "kernel YAMLs read: " + ", ".join(check.yamls.values()))
        for node in _nodes_for_op(op, final) or [""]:
            out.append(Finding(node=node, rule="missing-kernel", message=msg, fix=hint, certainty=WILL_FAIL,
                               evidence=ev, op=op, source="backends/cortex_m/ops/operators.yaml, "
                               "kernels/portable/functions.yaml, kernels/quantized/quantized.yaml"))
    out.extend(_not_selected(check.model_ops, check.available, final))
    return out


def _installed_executorch() -> Path | None:
    """The installed executorch package's folder, found without importing it (no torch import here)."""
    import importlib.util

    spec = importlib.util.find_spec("executorch")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def portable_gap_findings(program: bytes, final: GraphSnapshot | None = None) -> list[Finding]:
    """Without a checkout: one finding per aten operator of the program that ExecuTorch's own kernel
    libraries have no kernel for (the installed package's YAMLs, the same lists a checkout builds its
    runner from). The float `aten::linear.out` of a decomposed nn.LSTM / nn.GRU is the case: the portable
    library has addmm and mm but no linear, so no checkout's runner registers it."""
    pkg = _installed_executorch()
    if pkg is None or not (pkg / OP_YAMLS["portable"]).is_file():
        return []
    check = check_ops(read_program_ops(program), {lib: pkg / rel for lib, rel in OP_YAMLS.items()})
    out = []
    for op in check.missing:
        if not op.startswith("aten::"):
            continue
        msg = (f"ExecuTorch's kernel libraries have no kernel for {op} (the portable library's "
               f"functions.yaml does not list it): no runner registers it, and loading the method fails with "
               f"\"Missing operator: {op}\" before anything runs.")
        fix = ("--keep-going writes it with ops the portable library has (linear as permute_copy + addmm/mm, "
               "same values)" if op.startswith("aten::linear.") else check.hint())
        for node in _nodes_for_op(op, final) or [""]:
            out.append(Finding(node=node, rule="missing-kernel", message=msg, fix=fix, certainty=WILL_FAIL,
                               evidence=(f"operator {op} of the program",
                                         "kernel YAMLs read: " + ", ".join(check.yamls.values())),
                               op=op, source="kernels/portable/functions.yaml of the installed executorch"))
    return out


def _not_selected(ops: list[str], available: dict[str, str], final: GraphSnapshot | None) -> list[Finding]:
    """Ops the checkout has a portable/quantized kernel for but that cmlens' runner build does not
    select (kernels/runner registers all cortex_m ops and only `portable_ops(ops)` of the others)."""
    from backend_core.target.build.runner import portable_ops

    selected = set(portable_ops(ops))
    out = []
    for op in ops:
        if available.get(op) in ("portable", "quantized") and op not in selected:
            msg = (f"The checkout has a kernel for {op}, but cmlens' runner build does not register it (its "
                   f"portable op selection takes only aten:: and quantized_decomposed:: ops): loading the method "
                   f"fails with \"kernel '{op}' not found\" (OperatorMissing, 0x14).")
            for node in _nodes_for_op(op, final) or [""]:
                out.append(Finding(node=node, rule="kernel-not-selected", message=msg,
                                   fix="A bug of cmlens' runner build (backend_core/target/build/runner.py "
                                       "portable_ops); until it is fixed, remove the op from the model (for a "
                                       "dim-order copy: the .contiguous() / .to(memory_format=...) that makes it).",
                                   certainty=WILL_FAIL, evidence=(f"operator {op}: {available[op]} kernel in the "
                                                                  "checkout", f"runner selects: {sorted(selected)}"),
                                   op=op, source="backend_core/target/build/runner.py portable_ops"))
    return out


def _scalar(t: _Table, index: int, fmt: str, default: int = 0) -> int:
    at = t._field(index)
    return default if at is None else struct.unpack_from(fmt, t.buf, at)[0]


def _vector(t: _Table, index: int, fmt: str) -> list[int]:
    at = t._indirect(index)
    if at is None:
        return []
    n = struct.unpack_from("<I", t.buf, at)[0]
    size = struct.calcsize(fmt)
    return [struct.unpack_from(fmt, t.buf, at + 4 + size * i)[0] for i in range(n)]


def _tensor(value: _Table, kind: str) -> _Table | None:
    """The Tensor of a Value/EValue union (type at field 0, table at field 1), else None."""
    if _scalar(value, 0, "<B") != _TENSOR_TYPE[kind]:
        return None
    at = value._indirect(1)
    return None if at is None else _Table(value.buf, at)


def _root(buf: bytes) -> _Table:
    return _Table(buf, struct.unpack_from("<I", buf, 0)[0])


def bundle_output_layouts(bpte: bytes) -> list[tuple[int, list[int], list[int], list[int]]]:
    """(output index, sizes, bundled dim order, program dim order) of every tensor output of the
    first test case of each suite, read from the flatbuffers (schema bundled_program_schema.fbs and
    program.fbs) without ExecuTorch."""
    bundle = _root(bpte)
    program = _root(bundle.bytes_(2))
    plans = program.tables(1)
    out = []
    for suite in bundle.tables(1):
        name = suite.string(0)
        plan = next((p for p in plans if p.string(0) == name), plans[0] if plans else None)
        if plan is None:
            continue
        values = plan.tables(2)
        outputs = _vector(plan, 4, "<i")
        for case in suite.tables(1)[:1]:
            for i, value in enumerate(case.tables(1)):
                bt = _tensor(value, "bundle")
                if bt is None or i >= len(outputs):
                    continue
                pt = _tensor(values[outputs[i]], "program")
                if pt is None:
                    continue
                out.append((i, _vector(bt, 1, "<i"), list(bt.bytes_(3)), list(pt.bytes_(3))))
    return out


def bundle_findings(bpte: bytes, final: GraphSnapshot | None = None) -> list[Finding]:
    """The runner compares each expected output with the method's output only when their strides
    (from sizes + dim order) are equal; otherwise ET_CHECK aborts (issue 9, crash 1)."""
    if len(bpte) < 8 or not bpte[4:8].startswith(b"BP"):
        return []
    out_nodes = _output_sources(final)
    findings = []
    for i, sizes, bundled, method in bundle_output_layouts(bpte):
        if strides(sizes, bundled) == strides(sizes, method):
            continue
        findings.append(Finding(
            node=out_nodes[i] if i < len(out_nodes) else "", rule="bundle-output-dim-order",
            message=(f"Output {i} of the method is {describe(method)} but the bundled expected output is "
                     f"stored {describe(bundled)}: the runner's BundleIO check aborts (\"The two inputs of "
                     f"tensors_are_close function shall have same strides\") and the board faults."),
            fix=("Rebuild the .bpte with this version of cmlens (it stores expected outputs in the method's "
                 "dim order, as ExecuTorch's BundledProgram does), or run the plain .pte."),
            certainty=WILL_FAIL, evidence=(f"output {i} sizes {sizes}", f"program dim order {method}",
                                           f"bundled dim order {bundled}"),
            op="output", source=BUNDLE_SOURCE))
    return findings


def _output_sources(final: GraphSnapshot | None) -> list[str]:
    if final is None:
        return []
    outs = [n for n in final.nodes if n.fx_op == "output"]
    if not outs:
        return []
    edges = sorted((e for e in final.edges if e.dst == outs[0].id), key=lambda e: e.arg_index)
    return [e.src for e in edges]
