"""Which final-graph node each executed instruction is.

The ETDump names an instruction by (chain, instruction id) and, through the codegen wrapper's event,
by its operator ("native_call_quantized_conv2d.out"); it carries no debug handle for a non-delegated
op. ExecuTorch's emitter writes one KernelCall per call_function node of the final program, in graph
order, so instruction i is the i-th op node of the final snapshot, except for nodes `to_executorch()`
turns into no instruction at all: `memory.alloc` (memory-planned scratch), `getitem`, and
`view_copy` (replaced by a memory-planned view). So: walk both sequences in order and match by
operator name; a final node passed over ran no instruction (listed, with 0 cost); an instruction whose
name matches no later node stays unmapped (and is said so), which only happens when the ETDump is not
from this graph. No ETRecord is needed, so a ready-made .bpte with a lowering of the same model works."""
from __future__ import annotations

from dataclasses import dataclass, field

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.target.profile.events import CONTROL_CALLS, InstructionEvent, op_base

NO_INSTRUCTION = frozenset({"memory.alloc", "getitem", "operator.getitem"})


def op_nodes(final: GraphSnapshot) -> list[NodeSnapshot]:
    """The final graph's call_function nodes that may become instructions, in graph order."""
    return [n for n in final.nodes if n.fx_op == "call_function" and n.target not in NO_INSTRUCTION]


@dataclass
class Alignment:
    node_of: list[str | None]                            # per instruction: final node id or None
    skipped: list[str] = field(default_factory=list)     # op nodes that ran no instruction
    unmapped: list[int] = field(default_factory=list)    # instruction positions without a node

    @property
    def complete(self) -> bool:
        return not self.unmapped


def align(instructions: list[InstructionEvent], final: GraphSnapshot) -> Alignment:
    """Match instructions to op nodes in order, by operator name (see the module docstring)."""
    nodes = op_nodes(final)
    bases = [op_base(n.target) for n in nodes]
    out = Alignment([])
    j = 0
    for pos, ev in enumerate(instructions):
        if ev.kind in CONTROL_CALLS:           # the runtime's move/free/jump: no graph node, not a mismatch
            out.node_of.append(None)
            continue
        want = ev.op_base
        k = j
        if want:
            while k < len(nodes) and bases[k] != want:
                k += 1
        if k >= len(nodes) or not want:
            # unnamed instruction (no native_call event) takes the next node only if nothing is skipped
            if not want and j < len(nodes):
                out.node_of.append(nodes[j].id)
                j += 1
                continue
            out.node_of.append(None)
            out.unmapped.append(pos)
            continue
        out.skipped.extend(n.id for n in nodes[j:k])
        out.node_of.append(nodes[k].id)
        j = k + 1
    out.skipped.extend(n.id for n in nodes[j:])
    return out
