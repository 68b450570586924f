"""Serialise a (scheduled) program with one of ExecuTorch's planner settings and count what it needs:
the planned arena (ExecuTorch's own plan read back from the .pte) plus the input and output buffers
the arena does not hold. Allocating a graph input outside the arena moves its buffer to the caller;
it does not remove it, so a program's total RAM always counts it once."""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass
from typing import Any

from backend_core.analyses.schedule.geometry import macs_of

PLANNERS: dict[str, dict[str, Any]] = {
    "greedy": {"algo": "greedy", "alloc_graph_input": True, "alloc_graph_output": True},
    "naive": {"algo": "naive", "alloc_graph_input": True, "alloc_graph_output": True},
    "greedy-io-outside": {"algo": "greedy", "alloc_graph_input": False, "alloc_graph_output": False},
}


@dataclass(frozen=True)
class Measured:
    arena_bytes: int                   # sum of non_const_buffer_sizes[1:]
    io_outside_bytes: int              # input/output tensors the plan leaves to the caller
    pte_bytes: int
    constant_bytes: int
    instructions: int
    method_load_bytes: int = 0         # Method::load's use of the method pool (grows with the patches' ops)

    @property
    def total_ram(self) -> int:
        return self.arena_bytes + self.io_outside_bytes

    @property
    def ram_need(self) -> int:
        """What a choice between schedules must compare: the total RAM plus Method::load's allocations,
        which every patch's kernel calls and tensors add to (mobilenet_v1_025 8×8: 90 KiB less arena cost
        195 KiB more method pool)."""
        return self.total_ram + self.method_load_bytes

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_ram_bytes": self.total_ram, "ram_need_bytes": self.ram_need}


def serialise(program: Any, planner: str = "greedy") -> bytes:
    """The .pte of `program` planned with PLANNERS[planner] (to_executorch mutates: a copy goes in)."""
    return bytes(executorch_program(program, planner).buffer)


def executorch_program(program: Any, planner: str = "greedy") -> Any:
    """ExecutorchProgramManager of a copy of `program`, planned with PLANNERS[planner]."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.exir import EdgeProgramManager, ExecutorchBackendConfig
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy, naive
    from executorch.exir.passes import MemoryPlanningPass

    p = PLANNERS[planner]
    algo = MemoryPlanningAlgorithmSuite([greedy if p["algo"] == "greedy" else naive])
    config = ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(
        memory_planning_algo=algo, alloc_graph_input=p["alloc_graph_input"],
        alloc_graph_output=p["alloc_graph_output"]))
    epm = EdgeProgramManager({"forward": copy.deepcopy(program)}, compile_config=cortex_m_edge_compile_config())
    return epm.to_executorch(config)


def measure_pte(data: bytes) -> Measured:
    from backend_core.target.memory.method_alloc import estimate_method_allocator
    from backend_core.target.memory.plan import read_plan

    plan = read_plan(data)
    outside = sum(plan.tensors[i].nbytes for i in {*plan.inputs, *plan.outputs}
                  if i in plan.tensors and not plan.tensors[i].planned)
    return Measured(sum(plan.planned_bytes), outside, plan.pte_bytes, plan.constant_bytes, len(plan.instructions),
                    estimate_method_allocator(plan).loaded)


def program_macs(program: Any) -> int:
    """Multiply-accumulates of every conv in the program (patches recompute their halos: more)."""
    return sum(macs_of(n) for n in program.graph.nodes if n.op == "call_function")


def copy_bytes(program: Any) -> int:
    """Bytes the schedule's data movement writes: slices, pads, concatenations, cmlens windows and tiles."""
    from backend_core.analyses.schedule.geometry import target_of
    from backend_core.analyses.schedule.prefix import nbytes

    names = ("slice_copy", "cortex_m.pad", "aten.cat", "cmlens.window", "cmlens.tiles")
    return sum(nbytes(n) for n in program.graph.nodes
               if n.op == "call_function" and any(k in target_of(n) for k in names))
