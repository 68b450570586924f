"""Artefacts made with plain ExecuTorch APIs only (not this project's pipeline), the way ExecuTorch's
own Cortex-M tests and `aot_arm_compiler` make them: export -> CortexMQuantizer PT2E -> to_edge ->
CortexMPassManager.transform() -> to_executorch -> .pte / .bpte / ETRecord.

Only the model definitions come from the project's zoo (plain nn.Modules and inputs)."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path


@dataclass
class PlainArtefacts:
    pte: Path
    bpte: Path
    etrecord: Path
    ops: list[str]                 # kernel names in execution order, as ExecuTorch printed them


def make_artefacts(zoo_name: str, out: Path, *, bundle_in_record: bool = False) -> PlainArtefacts:
    import torch

    from backend_core.stages.models.zoo import ZOO

    model, inputs, _notes = ZOO[zoo_name].build()
    if any(isinstance(x, torch.Tensor) and x.dim() == 4 for x in inputs):
        model = model.to(memory_format=torch.channels_last)
    return _flow(model, inputs, [inputs], zoo_name, out, bundle_in_record=bundle_in_record)


def make_from_file(path: Path, out: Path) -> PlainArtefacts:
    """A model file (get_model, get_example_inputs, get_calibration_inputs), fed channels-last like
    ExecuTorch's Cortex-M tests feed convs; the ETRecord gets a bundle, so it has representative inputs."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cl = torch.channels_last

    def fed(xs: tuple) -> tuple:
        return tuple(x.to(memory_format=cl) if x.dim() == 4 else x for x in xs)
    model = mod.get_model().to(memory_format=cl)
    inputs = fed(mod.get_example_inputs())
    return _flow(model, inputs, [inputs] + [fed(c) for c in mod.get_calibration_inputs()], path.stem, out,
                 bundle_in_record=True)


def _flow(model, inputs: tuple, calibration: list[tuple], name: str, out: Path, *,
          bundle_in_record: bool = False) -> PlainArtefacts:
    import torch
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.devtools import generate_etrecord
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.core import BundledProgram
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeProgramManager, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    exported = torch.export.export(model, inputs)
    prepared = prepare_pt2e(exported.module(check_guards=False), CortexMQuantizer())
    for sample in calibration:
        prepared(*sample)
    converted = convert_pt2e(prepared)
    edge = to_edge(torch.export.export(converted, inputs), compile_config=cortex_m_edge_compile_config())
    final = CortexMPassManager(edge.exported_program()).transform()
    manager = EdgeProgramManager({"forward": final}, compile_config=cortex_m_edge_compile_config())
    for_record = copy.deepcopy(manager)
    et = manager.to_executorch()
    out.mkdir(parents=True, exist_ok=True)
    pte = out / f"{name}.pte"
    pte.write_bytes(et.buffer)
    with torch.no_grad():
        expected = converted(*inputs)
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    bundled = BundledProgram(et, [MethodTestSuite("forward", [MethodTestCase(inputs=list(inputs),
                                                                             expected_outputs=expected)])])
    bpte = out / f"{name}.bpte"
    bpte.write_bytes(serialize_from_bundled_program_to_flatbuffer(bundled))
    etrecord = out / f"{name}.etrecord"
    generate_etrecord(str(etrecord), edge_dialect_program=for_record,
                      executorch_program=bundled if bundle_in_record else et,
                      exported_program=exported,
                      extra_recorded_export_modules={"quantized": torch.export.export(converted, inputs)})
    plan = et.executorch_program.execution_plan[0]
    ops = [f"{plan.operators[i.instr_args.op_index].name}.{plan.operators[i.instr_args.op_index].overload}"
           for i in plan.chains[0].instructions if hasattr(i.instr_args, "op_index")]
    return PlainArtefacts(pte, bpte, etrecord, ops)


if __name__ == "__main__":
    import sys

    for name in sys.argv[2:]:
        a = make_artefacts(name, Path(sys.argv[1]))
        print(name, a.pte.stat().st_size, a.etrecord.stat().st_size, a.ops)
