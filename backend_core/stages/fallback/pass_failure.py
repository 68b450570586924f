"""A failing Cortex-M pass, in the user's terms: the op the user wrote (node at quantisation time,
innermost frame of the model's code, nn.Module path), its operands (shape, dtype, dim order,
qparams), ExecuTorch's failed check quoted, and the root cause where the graph establishes it.

The failing node is found through its debug_handle in the last good stage, then traced back with
the same UserOpResolver the fallback reasons use. A cause is stated only when a rule re-evaluates
ExecuTorch's own predicate on the operands; otherwise the record says what was checked."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from backend_core.common.provenance import Provenance
from backend_core.common.snapshot.classify import op_base_name
from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot, QParam
from backend_core.stages.fallback.activation_failure import ACTIVATION_MARK, activation_cause
from backend_core.stages.fallback.dtype_failure import DTYPE_MARK, QPARAMS_MARK, dtype_cause, missing_qparams_cause
from backend_core.stages.fallback.failure_walks import user_op_dict as _user_op_dict, where_text
from backend_core.stages.fallback.repeated_blocks import block_twins
from backend_core.stages.fallback.user_op import UserOpResolver

BROADCAST_MARK = "broadcasting is not yet supported except for channel dim"
CL_ORDER = [0, 2, 3, 1]


@dataclass
class PassFailure:
    """The JSON-able diagnosis attached to a failed lowering's error record (`error["failure"]`)."""

    stage: str
    error: str                                   # ExecuTorch's message, first line
    error_type: str = ""                         # the root exception's class name
    check: str = ""                              # the statement that raised, quoted
    check_at: str = ""                           # its file:line in ExecuTorch
    node: str | None = None                      # failing node (live name inside the pass)
    last_good_stage: str = ""
    last_good_node: str | None = None            # the same op in the last good stage (select it)
    op: str = ""                                 # op at quantisation time, e.g. aten.mul.Tensor
    op_node: str | None = None                   # its node name at quantisation time (quarantine key)
    source: str | None = None                    # file:line of its innermost frame in model code
    code: str = ""                               # that line's source text
    function: str = ""
    chain: list[str] = field(default_factory=list)   # the calls to that line, from the user's own line on
    module: str = ""                             # nn.Module path
    module_type: str = ""
    operands: list[dict[str, Any]] = field(default_factory=list)
    cause: str = ""                              # established root cause, "" when not established
    checked: list[str] = field(default_factory=list)   # what was checked (always)
    producer: dict[str, Any] | None = None       # the op whose output layout/shape matters
    # other ops of the last good stage that fail the same ExecuTorch check (re-evaluated on their
    # shapes and dim orders): names at quantisation time, so --keep-going quarantines them at once
    same_failure: list[str] = field(default_factory=list)
    # what --keep-going should take out of quantisation ({node at quantisation time: why}); empty = the op
    quarantine: dict[str, str] = field(default_factory=dict)
    # a change of the user's code that avoids the failure and that the tool can make on a copy of the
    # float export (backend_core.stages.fallback.rewrites name; --keep-going applies it and so verifies it)
    workaround: str = ""
    workaround_text: str = ""
    # the node `cmlens repro` grows its subgraph from when it is not op_node (a quantizer failure: the batch
    # norm torchao fuses, whose producers include the conv and the computed weight)
    repro_node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def failure_lines(d: dict[str, Any]) -> list[str]:
    """A PassFailure record (its dict) as text, for the CLI and the HTML error section."""
    out = []
    if d.get("op"):
        at_q = f" (`{d['op_node']}` at quantisation time)" if d.get("op_node") else ""
        out.append(f"op you wrote: {d['op']}{at_q}")
    if d.get("source"):
        out.append(f"  at {d['source']}" + (f" in {d['function']}()" if d.get("function") else ""))
        if d.get("code"):
            out.append(f"      {d['code']}")
        for i, call in enumerate(d.get("chain") or []):     # user line -> ... -> the line above
            out.append(f"  {'called from' if i == 0 else '        via'} {call}")
    if d.get("module"):
        out.append(f"  module: {d['module']}" + (f" ({d['module_type']})" if d.get("module_type") else ""))
    for o in d.get("operands") or []:
        qp = f", {o['qparams']}" if o.get("qparams") else ""
        out.append(f"  input {o['index']}: {o.get('shape')} {o.get('dtype')} dim_order={o.get('dim_order')}"
                   f"{qp} (from {o.get('producer_op') or o.get('target')})")
    if d.get("check"):
        out.append(f"failed check ({d.get('check_at')}): {d['check']}")
    if d.get("error"):
        out.append(f"  failed with: {d['error']}")
    if d.get("cause"):
        out.append(f"cause: {d['cause']}")
    if d.get("checked"):
        out.append(("checked: " if d.get("cause") else "cause: not established from the graph. Checked: ")
                   + "; ".join(d["checked"]))
    if d.get("workaround_text"):
        out.append(f"workaround: {d['workaround_text']}")
    return out


def _qp_text(q: QParam | None) -> str:
    return q.summary() if q is not None else ""


def _last_good_node(last: GraphSnapshot, failure: Any) -> NodeSnapshot | None:
    """The failing op's node in the last good stage: same debug_handle, preferring the same op."""
    if failure.debug_handle is None:
        return last.node(failure.node) if failure.node else None
    same = [n for n in last.nodes if n.debug_handle == failure.debug_handle and n.fx_op == "call_function"]
    want = op_base_name(failure.target).replace("quantized_", "")
    return next((n for n in same if op_base_name(n.target) == want), same[0] if same else None)


def _snapshot_operand(last: GraphSnapshot, node: NodeSnapshot | None, index: int, op: Any) -> NodeSnapshot | None:
    if node is not None and index < len(node.inputs):
        cand = last.node(node.inputs[index])
        if cand is not None:
            return cand
    return last.node(op.name)


def _is_channels_last_et(shape: list[int], stride: list[int]) -> tuple[bool, str]:
    """ExecuTorch's own `is_channels_last` (cortex_m/passes/passes_utils.py), run on an empty
    tensor with the operand's shape and strides, and why it answered so."""
    import torch
    from executorch.backends.cortex_m.passes.passes_utils import is_channels_last

    t = torch.empty_strided(shape, stride)
    ok = bool(is_channels_last(t))
    if len(shape) != 4:
        return ok, f"{len(shape)}-D, not 4-D"
    if shape[1] == 1 or shape[2] == shape[3] == 1:
        return ok, "C == 1 or H == W == 1 (counts as channels-last)"
    return ok, f"dim_order {list(t.dim_order())} {'starts' if ok else 'does not start'} with [0, 2]"


def _empty_with(shape: list[int] | tuple[int, ...], dim_order: list[int] | tuple[int, ...] | None) -> Any:
    """An empty tensor with `shape` laid out in `dim_order` (what the failing check looks at)."""
    import torch

    order = list(dim_order) if dim_order is not None else list(range(len(shape)))
    t = torch.empty([shape[d] for d in order])
    return t.permute([order.index(i) for i in range(len(shape))])


def _same_broadcast_failures(resolver: UserOpResolver, last: GraphSnapshot, skip: str | None) -> list[str]:
    """Quantized binary mul/add nodes whose operands fail `shape == shape or is_channel_broadcast`,
    ExecuTorch's own predicate run on their recorded shapes and dim orders."""
    from executorch.backends.cortex_m.passes.passes_utils import is_channel_broadcast

    out = []
    for n in last.nodes:
        if n.fx_op != "call_function" or op_base_name(n.target) not in ("mul", "add") or not n.input_qparams:
            continue
        ins = [last.node(i) for i in n.inputs]
        if len(ins) != 2:
            continue
        a, b = ins
        if a is None or b is None or not a.shape or not b.shape:
            continue
        if tuple(a.shape) == tuple(b.shape) or len(a.shape) != len(b.shape):
            continue
        if is_channel_broadcast(_empty_with(a.shape, a.dim_order), _empty_with(b.shape, b.dim_order)):
            continue
        q = resolver.quantized_node(n)
        if q is not None and q.name != skip and q.name not in out:
            out.append(q.name)
    return out


def _layout_producer(resolver: UserOpResolver, last: GraphSnapshot, start: NodeSnapshot) -> NodeSnapshot | None:
    """Walk up the data input of a non-channels-last tensor until the op whose input was
    channels-last (or a graph input): the op that made it contiguous."""
    cur, seen = start, 0
    while cur is not None and seen < 32:
        seen += 1
        src = next((x for x in (last.node(i) for i in cur.inputs) if x is not None
                    and x.fx_op in ("call_function", "placeholder") and x.shape and len(x.shape) == 4), None)
        if src is None or src.fx_op == "placeholder":
            return cur
        if src.dim_order is not None and list(src.dim_order) == CL_ORDER:
            return cur
        cur = src
    return None


def _broadcast_cause(pf: PassFailure, resolver: UserOpResolver, last: GraphSnapshot,
                     snap_ops: list[NodeSnapshot | None]) -> None:
    """quantized_mul / quantized_add: `self.shape == other.shape or is_channel_broadcast(self,
    other)`, and is_channel_broadcast needs both operands channels-last by `is_channels_last`."""
    ops = pf.operands
    if len(ops) < 2 or not all(o.get("shape") and o.get("stride") for o in ops[:2]):
        pf.checked.append("the operands' shapes/strides were not recorded on the failing node")
        return
    a, b = ops[0], ops[1]
    pf.checked.append(f"shapes equal: {a['shape'] == b['shape']} ({a['shape']} vs {b['shape']})")
    verdicts = []
    for o in (a, b):
        ok, why = _is_channels_last_et(o["shape"], o["stride"])
        o["channels_last_for_executorch"] = ok
        verdicts.append((o, ok, why))
        pf.checked.append(f"is_channels_last(input {o['index']}) = {ok}: {why}")
    chan = a["shape"][1] == b["shape"][1] if len(a["shape"]) > 1 and len(b["shape"]) > 1 else False
    pf.checked.append(f"same channel count: {chan}")
    bad = [(o, why) for o, ok, why in verdicts if not ok]
    if not bad or not chan:
        return
    o, why = bad[0]
    sn = snap_ops[o["index"]] if o["index"] < len(snap_ops) else None
    made = _layout_producer(resolver, last, sn) if sn is not None else None
    other = b if o is a else a
    text = (f"input {o['index']} {o['shape']} is not channels-last ({why}) while input {other['index']} "
            f"{other['shape']} is broadcast over the channel dim; ExecuTorch's quantized kernel only accepts a "
            f"channel broadcast when both operands are channels-last (is_channel_broadcast in "
            f"cortex_m/passes/passes_utils.py).")
    if made is not None:
        pf.producer = _user_op_dict(resolver, made)
        pr = pf.producer
        where = f" ({where_text(pr)})" if where_text(pr) else ""
        text += (f" Its layout comes from {made.target} `{made.id}`{where}, whose output has dim_order "
                 f"{pf.producer['dim_order']} although its input was channels-last; the ops from there to this one "
                 f"keep that layout.")
        q = resolver.quantized_node(made)
        if q is not None and q.dim_order is not None and list(q.dim_order) == CL_ORDER:
            text += (f" At quantisation time `{q.name}` ({q.target}) still returned a channels-last tensor: "
                     f"to_edge's {made.target} returns a contiguous one.")
        if "alias_copy" in str(made.target):
            _noop_view_workaround(pf)
    pf.cause = text
    pf.same_failure = _same_broadcast_failures(resolver, last, pf.op_node)
    if pf.same_failure:
        pf.checked.append(f"{len(pf.same_failure)} more quantized mul/add fail the same check: "
                          + ", ".join(pf.same_failure))


def _noop_view_workaround(pf: PassFailure) -> None:
    """An alias_copy is a view that selects the whole tensor (export records it as aten.alias): skipping
    it changes no value and keeps channels-last (backend_core.stages.fallback.rewrites.drop_noop_alias)."""
    from backend_core.stages.fallback.rewrites import NOOP_ALIAS

    pr = pf.producer or {}
    at = f" at {pr['source']} (`{pr['code']}`)" if pr.get("source") and pr.get("code") else ""
    pf.workaround = NOOP_ALIAS
    pf.workaround_text = (f"the view{at} keeps the whole tensor, so it changes no value: skip it when it selects "
                          "everything (e.g. `out if n == out.shape[1] else out[:, :n]`). --keep-going makes that "
                          "change on a copy of the export and lowers again, which verifies it.")


def diagnose(failure: Any, snapshots: list[GraphSnapshot]) -> PassFailure:
    """`failure`: backend_core.stages.pipeline.failure.LiveFailure; `snapshots`: every stage before the failing one."""
    pf = PassFailure(stage=failure.stage, error=failure.error, error_type=failure.error_type,
                     check=failure.check_code,
                     check_at=failure.check_file, node=failure.node)
    if not snapshots:
        pf.checked.append("no earlier stage to trace the node in")
        return pf
    last = snapshots[-1]
    pf.last_good_stage = last.stage
    resolver = UserOpResolver(snapshots, Provenance(snapshots))
    ln = _last_good_node(last, failure)
    pf.last_good_node = ln.id if ln is not None else None
    if ln is not None:
        q = resolver.quantized_node(ln)
        src = (q.source if q is not None else None) or ln.source
        pf.op, pf.op_node = (q.target, q.name) if q is not None else (ln.target, None)
        pf.source = src.full if src else None
        pf.code, pf.function = (src.code, src.function) if src else ("", "")
        pf.chain = list(src.chain) if src else []
        pf.module = q.module_path if q is not None else ln.module_path
        pf.module_type = q.module_type if q is not None else ln.module_type
    else:
        pf.checked.append(f"no node with debug_handle {failure.debug_handle} in stage '{last.stage}'")
    in_qp = dict(ln.input_qparams) if ln is not None else {}
    snap_ops: list[NodeSnapshot | None] = []
    for op in failure.operands:
        sn = _snapshot_operand(last, ln, op.index, op)
        snap_ops.append(sn)
        d = asdict(op)
        qp = in_qp.get(op.index) or (sn.output_qparams if sn is not None else None)
        d["qparams"] = _qp_text(qp)
        d["producer_op"] = sn.target if sn is not None else op.target
        qsrc = resolver.quantized_node(sn) if sn is not None else None
        d["name_at_quantisation"] = qsrc.name if qsrc is not None else None
        pf.operands.append(d)
    if BROADCAST_MARK in failure.error:
        _broadcast_cause(pf, resolver, last, snap_ops)
    elif DTYPE_MARK in failure.error:
        dtype_cause(pf, resolver, last, ln, snap_ops)
    elif ACTIVATION_MARK in failure.error:
        activation_cause(pf, resolver, last, ln, snap_ops)
    elif (mark := QPARAMS_MARK.search(pf.check or "")) and ln is not None:
        missing_qparams_cause(pf, resolver, last, ln, int(mark.group(1)))
    else:
        pf.checked.append("no rule of the tool matches this ExecuTorch check; the operands above are what it saw")
    _add_block_twins(pf, resolver)
    return pf


def _add_block_twins(pf: PassFailure, resolver: UserOpResolver) -> None:
    """The failing op's twins in the other instances of its repeated block fail the same check in the next
    rounds: name them with it, so --keep-going takes them out in this one (repeated_blocks.py)."""
    if not pf.op_node or pf.quarantine:
        return
    seen = {pf.op_node, *pf.same_failure}
    twins = [t for name in [pf.op_node, *pf.same_failure] for t in block_twins(resolver.quantized, name)]
    twins = [t for t in dict.fromkeys(twins) if t not in seen]
    if twins:
        pf.same_failure = [*pf.same_failure, *twins]
        pf.checked.append(f"{len(twins)} more at the same place in the other instances of "
                          f"`{pf.module_type or pf.module}`: " + ", ".join(twins))
