"""A .bpte and its ETRecord from ONE lowering, for per-layer gaps on the target.

Why one lowering for both: the ETDump names instructions by the debug handles of the program that ran,
so the ETRecord must come from the very ExecutorchProgramManager the .bpte was serialised from (the
cached .bpte of `lower()` has no live programs behind it). Kept apart from gaps_inspector.py, which
the artefact readers use: reading an ETDump must not import the lowering pipeline. A job step
(it lowers), so it lives in backend_core.orchestration.jobs."""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from backend_core.target.judge.gaps_inspector import record_bundle
from backend_core.orchestration.jobs.steps.failed_lowering import lowering_failed
from backend_core.common.snapshot.model import GraphSnapshot


@dataclass
class LoweredWithRecord:
    bpte: Path
    etrecord: Path
    final: GraphSnapshot
    seconds: float
    pipeline: Any = None             # the live LoweringPipeline (bench/planted_fault.py plants a weight fault)
    result: Any = None               # the LoweringResult (a job's lower step: its report, memory, pre-flight)


def record_of(res: Any, workdir: Path, on_status: Callable[[str], None] | None = None,
              start: float | None = None) -> LoweredWithRecord:
    """The .bpte and ETRecord of a live lowering (a LoweringResult lowered with keep_programs=True, as
    a job's lower step does for a run with --etdump): no second lowering."""
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.devtools import generate_etrecord
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeProgramManager

    from backend_core.lowering.lower.references import references_for_outputs, target_expected
    from backend_core.stages.pipeline.program_files import bundled_program, expected_outputs_from_lowered
    from backend_core.target.judge.references import beside

    say = on_status or (lambda _s: None)
    start = time.monotonic() - res.seconds if start is None else start
    source = res.source
    if res.status != "done" or res.pipeline is None or res.final is None:
        raise lowering_failed(source, res)
    pipe = res.pipeline
    say("serialising the .bpte and its ETRecord")
    inputs = pipe.example_inputs
    # expected outputs: the lowered program on the host (what a correct target computes bit for bit)
    t0 = time.monotonic()
    expected = expected_outputs_from_lowered(pipe.final_program, inputs)
    host_s = time.monotonic() - t0
    expected, known, note = target_expected(pipe, expected, host_s, say)   # the known kernel differences
    references = references_for_outputs(pipe, expected, say, host_s, known=known, note=note)
    # to_executorch() mutates its input: one copy runs, another stays for the ETRecord's edge graph.
    edge = EdgeProgramManager({"forward": copy.deepcopy(pipe.final_program)},
                              compile_config=cortex_m_edge_compile_config())
    edge_for_record = copy.deepcopy(edge)
    et_program = edge.to_executorch()
    bundled = bundled_program(et_program, list(inputs), list(expected))
    workdir.mkdir(parents=True, exist_ok=True)
    bpte = workdir / f"{res.model}.bpte"
    bpte.write_bytes(serialize_from_bundled_program_to_flatbuffer(bundled))
    beside(bpte).write_bytes(references.to_json())
    res.blobs["model.bpte"], res.blobs["references.json"] = bpte.read_bytes(), references.to_json()
    etrecord = workdir / "etrecord.bin"
    # The ETRecord takes its representative inputs (what the Inspector runs the host graph on) from the
    # bundle it is given. The .bpte's tensors are laid out in the program's dim orders (right for the
    # target); the ETRecord gets a twin bundle of the same program holding the tensors as given.
    generate_etrecord(str(etrecord), edge_dialect_program=edge_for_record,
                      executorch_program=record_bundle(et_program, inputs, expected))
    return LoweredWithRecord(bpte, etrecord, res.final, time.monotonic() - start, pipe, res)
