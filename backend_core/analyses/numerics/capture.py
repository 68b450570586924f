"""Run one stage's program on one sample and keep the outputs of selected nodes.

Uses torch.fx.Interpreter over the program's own graph (for an ExportedProgram: over
`ep.graph_module` with parameters, buffers and constants fed in `graph_signature.input_specs`
order), so node names are those of the snapshot and no `ep.module()` copy (with its guard
function) is made per run. ExecuTorch's IntermediateOutputCapturer keys values by debug_handle
only, which the float export and the PT2E module do not have; one mechanism serves every stage.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class StageProgram:
    """A runnable stage kept for the numerics run (a private copy where later passes mutate)."""

    name: str
    index: int
    kind: str                 # export | quantize | edge | pass | final
    program: Any              # ExportedProgram or GraphModule
    passes: tuple[str, ...] = ()     # stage names since the previous runnable stage, this one last

    @property
    def graph_module(self) -> Any:
        return getattr(self.program, "graph_module", self.program)


class StageKeeper:
    """Watches `LoweringPipeline.run()` and keeps every stage that can run on the host.

    A pass may edit its input in place, so a program is deep-copied when it is yielded unless
    nothing later touches it (the float export is copied too: PT2E may fold batch norms into
    weights it shares). Unchanged passes (the pass returned its input) are not kept: they are
    numerically neutral by construction.
    """

    def __init__(self) -> None:
        self.stages: list[StageProgram] = []
        self._pending: list[str] = []

    def observe(self, stage: Any, pipeline: Any) -> None:
        snap = stage.snapshot
        self._pending.append(stage.name)
        if not snap.runnable_on_host or (snap.kind == "pass" and not snap.changed):
            return
        program = stage.program
        if snap.kind == "edge" and getattr(pipeline, "edge_program", None) is not None:
            program = pipeline.edge_program            # the runner's private copy
        elif snap.kind in ("export", "pass"):
            program = copy.deepcopy(program)
        self.stages.append(StageProgram(stage.name, snap.index, snap.kind, program,
                                        tuple(self._pending)))
        self._pending = []


def program_args(program: Any, user_inputs: tuple) -> list[Any]:
    """Positional arguments for the program's graph: lifted state and user inputs, in order."""
    sig = getattr(program, "graph_signature", None)
    if sig is None:
        return list(user_inputs)
    from torch.export.graph_signature import InputKind

    args: list[Any] = []
    it = iter(user_inputs)
    state, consts = program.state_dict, program.constants
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(next(it))
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            args.append(state[spec.target] if spec.target in state else consts[spec.target])
        elif spec.kind in (InputKind.CONSTANT_TENSOR, InputKind.CUSTOM_OBJ):
            args.append(consts[spec.target])
        else:  # TOKEN
            args.append(None)
    return args


def user_output_positions(program: Any, n_outputs: int) -> list[int]:
    """Indices of the user outputs among the graph's outputs (buffer mutations come first)."""
    sig = getattr(program, "graph_signature", None)
    if sig is None:
        return list(range(n_outputs))
    from torch.export.graph_signature import OutputKind

    return [i for i, s in enumerate(sig.output_specs) if s.kind == OutputKind.USER_OUTPUT]


NodeHook = Callable[[Any, Any, dict], Any]   # (node, value, env) -> replacement value or None


class Reuse:
    """Skip re-running a node whose op and argument values equal its namesake's in the previous
    runnable stage, run on the same sample: the kernels are deterministic, so the output is the
    same. A pass that changes nothing numerically (e.g. lifting constants into buffers) then
    costs almost nothing to check, and a changed node is still executed for real, together with
    everything downstream of it.

    `const_equal` persists over samples: whether a weight/constant placeholder equals the
    previous stage's is checked once."""

    def __init__(self, prev_program: Any) -> None:
        gm = getattr(prev_program, "graph_module", prev_program)
        self.prev_nodes = {n.name: n for n in gm.graph.nodes}
        self.prev_env: dict[str, Any] = {}
        self.const_equal: dict[str, bool] = {}
        self.reused = 0
        self.executed = 0

    def lookup(self, n: Any, env: dict) -> tuple[bool, Any]:
        p = self.prev_nodes.get(n.name)
        if p is None or p.op != "call_function" or p.target != n.target or n.name not in self.prev_env:
            return False, None
        if len(p.args) != len(n.args) or p.kwargs.keys() != n.kwargs.keys():
            return False, None
        ok = all(self._same(a, b, env) for a, b in zip(n.args, p.args)) and all(
            self._same(n.kwargs[k], p.kwargs[k], env) for k in n.kwargs)
        return (True, self.prev_env[n.name]) if ok else (False, None)

    def _same(self, a: Any, b: Any, env: dict) -> bool:
        a_node = hasattr(a, "op") and hasattr(a, "name")
        b_node = hasattr(b, "op") and hasattr(b, "name")
        if a_node != b_node:
            return False
        if a_node:
            if a.name != b.name or b.name not in self.prev_env:
                return False
            va, vb = env.get(a), self.prev_env[b.name]
            if va is vb:
                return True
            if a.op in ("placeholder", "get_attr") and b.op in ("placeholder", "get_attr"):
                if a.name not in self.const_equal:
                    self.const_equal[a.name] = _equal_values(va, vb)
                return self.const_equal[a.name]
            return False
        if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            return len(a) == len(b) and all(self._same(x, y, env) for x, y in zip(a, b))
        if hasattr(a, "dtype") or hasattr(b, "dtype"):
            return a is b
        try:
            return type(a) is type(b) and bool(a == b)
        except Exception:  # noqa: BLE001
            return False


def _equal_values(a: Any, b: Any) -> bool:
    import torch

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    return a is b


@dataclass
class RunRecord:
    values: dict[str, Any] = field(default_factory=dict)   # node name -> captured value
    outputs: list[Any] = field(default_factory=list)
    env: dict[str, Any] = field(default_factory=dict)      # all values, only when keep_env


def run_capture(program: Any, sample: tuple, capture: set[str], *, keep_env: bool = False,
                after_node: NodeHook | None = None, reuse: Reuse | None = None) -> RunRecord:
    """Interpret `program` on `sample`, cloning the values of nodes named in `capture`
    (a later in-place op such as relu_ would otherwise change them). `after_node` runs after
    each node with the live environment (used for the per-layer isolated runs)."""
    import torch
    import torch.fx

    gm = getattr(program, "graph_module", program)
    rec = RunRecord()

    class _Capturer(torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            hit = False
            if reuse is not None and n.op == "call_function":
                hit, value = reuse.lookup(n, self.env)
                reuse.reused += hit
                reuse.executed += not hit
            if not hit:
                value = super().run_node(n)
            if n.name in capture:
                rec.values[n.name] = _clone(value)
            if after_node is not None and n.op == "call_function":
                after_node(n, value, self.env)
            return value

    interp = _Capturer(gm, garbage_collect_values=not keep_env)
    with torch.no_grad():
        out = interp.run(*program_args(program, sample), enable_io_processing=False)
    flat = list(out) if isinstance(out, (list, tuple)) else [out]
    rec.outputs = [flat[i] for i in user_output_positions(program, len(flat))]
    if keep_env:
        rec.env = {n.name: v for n, v in interp.env.items()}
    return rec


def _clone(v: Any) -> Any:
    if hasattr(v, "clone") and hasattr(v, "dtype"):
        return v.detach().clone()
    if isinstance(v, (list, tuple)):
        return type(v)(_clone(x) for x in v)
    return v
