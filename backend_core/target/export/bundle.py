"""Write a bundle folder for the user's firmware from one lowered program, all or nothing: every file is
written into a temporary sibling folder that is renamed into place at the end, so a failure leaves
nothing half-written, and an existing folder is replaced only when it is an earlier bundle (it holds a
bundle.json of ours) or the user said --force."""
from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend_core.common.errors import BadInputError
from backend_core.target.build.libraries import codegen_python
from backend_core.target.export.c_sources import MODEL_SECTION, api_header, api_source, model_header
from backend_core.target.export.cmake_files import lists_cmakelists, model_cmake, own_kernel_files, toolchain_cmake
from backend_core.target.export.pools import Pools, size_pools
from backend_core.target.export.program import ProgramFacts, read_facts
from backend_core.target.export.recipe import recipe_facts
from backend_core.target.export.reference import Reference, reference_files, reference_of
from backend_core.target.export.report import BUNDLE_FORMAT, kernel_of, memory_parts, readme

BUNDLE_JSON = "bundle.json"
SCHEDULE_JSON = "schedule.json"      # a scheduled program's schedule (cmlens ... --schedule FILE takes it)
FILES = ("model.pte", "model_pte.h", "cmlens_model.h", "cmlens_model.cpp", "model_ops.txt", "cmlens_model.cmake",
         "CMakeLists.txt", "toolchain.cmake", "README.md", BUNDLE_JSON)
# and, when the program came with its test case (a lowering, or a .bpte): export/reference.py
REFERENCE_FILES = ("cmlens_reference.h", "reference_input_0.bin", "reference_output_0.bin")


@dataclass
class BundleSpec:
    """What a bundle is made for and from (everything but the program)."""
    model: str
    target: str                          # the CPU
    et_root: Path
    et_commit: str | None
    cmsis_nn: Path | None
    cmsis_tag: str | None
    command: str
    board: dict[str, Any] | None = None  # BoardSpec.to_dict()
    board_fit: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None     # memory report's runtime estimate
    speed: dict[str, Any] | None = None       # the cycle estimate from a cached profile (jobs/steps/export_speed.py)
    fallbacks: list[dict[str, str]] = field(default_factory=list)
    fallback_cost: str = ""
    workarounds: str = ""
    findings: list[dict[str, Any]] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    flatc: str | None = None
    # --schedule: the patch schedule the program is (jobs/steps/export.py schedule_facts), None: plain
    schedule: dict[str, Any] | None = None
    # the Python of the exporting environment (ExecuTorch's codegen needs its executorch package)
    python: str | None = field(default_factory=codegen_python)


@dataclass
class Bundle:
    folder: Path
    facts: ProgramFacts
    pools: Pools
    info: dict[str, Any]


def is_bundle(folder: Path) -> bool:
    """True when `folder` holds a bundle this tool wrote (its bundle.json has our format key)."""
    try:
        return "cmlens_bundle_format" in json.loads((Path(folder) / BUNDLE_JSON).read_text())
    except (OSError, ValueError, TypeError):
        return False


def check_destination(folder: Path, force: bool) -> None:
    """BadInputError (exit 2) before any work when `folder` exists, is not an earlier bundle and --force is off."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise BadInputError(f"{folder} exists and is a file, not a bundle folder.", "Pass another -o folder.")
    if folder.is_dir() and any(folder.iterdir()) and not is_bundle(folder) and not force:
        raise BadInputError(f"{folder} exists and is not an earlier bundle (no {BUNDLE_JSON} of cmlens export): "
                            "refusing to replace it.", "Pass an empty or new folder, or --force to replace it.")
    if not folder.parent.exists():
        raise BadInputError(f"The parent folder of {folder} does not exist.", f"Create {folder.parent} first.")


def bundle_info(facts: ProgramFacts, pools: Pools, spec: BundleSpec, files: dict[str, bytes],
                reference: Reference | None = None) -> dict[str, Any]:
    """bundle.json's content (README.md is made from it)."""
    plan = facts.plan
    pools_d = pools.to_dict()
    parts = memory_parts(pools_d, plan.pte_bytes, plan.constant_bytes, spec.runtime)
    info: dict[str, Any] = {
        "cmlens_bundle_format": BUNDLE_FORMAT, "model": spec.model, "target": spec.target, "board": spec.board,
        "command": spec.command, "model_section": MODEL_SECTION,
        "program": {"bytes": plan.pte_bytes, "sha256": hashlib.sha256(facts.pte).hexdigest(),
                    "constant_bytes": plan.constant_bytes, "method": plan.method,
                    "planned_bytes": plan.planned_bytes},
        "pools": pools_d,
        "memory": {"parts": parts, "flash_bytes": sum(r["bytes"] for r in parts if r["kind"] == "flash"),
                   "ram_bytes": sum(r["bytes"] for r in parts if r["kind"] == "ram"),
                   "model_ram_bytes": pools.ram_bytes, "model_flash_bytes": plan.pte_bytes,
                   "runtime_estimate": spec.runtime},
        "board_fit": spec.board_fit,
        "io": {"inputs": [i.to_dict() for i in facts.inputs], "outputs": [o.to_dict() for o in facts.outputs]},
        "ops": [{"op": o, "kernel": kernel_of(o), "selected": o in facts.selected_ops} for o in facts.ops],
        "selective_build": {
            "how": "explicit list read from the program's operator table, in EXECUTORCH_SELECT_OPS_LIST form "
                   "(model_ops.txt), fed to ExecuTorch's gen_selected_ops(ROOT_OPS) per kernel family; not "
                   "EXECUTORCH_SELECT_OPS_MODEL, whose gen_oplist.py needs the selective_build pybind module the "
                   "executorch wheel lacks. A list without one of the program's ops fails at the link (undefined "
                   "reference to cmlens_op_<op>), not on the board",
            "ops": facts.selected_ops, "cortex_m": facts.cortex_m_ops, "portable": facts.portable_ops,
            "runtime_builtin": facts.other_ops},
        "fallbacks": spec.fallbacks,
        "fallback_warning": (f"{len(spec.fallbacks)} op(s) run on portable kernels (float or int8 without "
                             f"CMSIS-NN): {', '.join(f['op'] for f in spec.fallbacks)}. {spec.fallback_cost}".strip()
                             if spec.fallbacks else ""),
        "workarounds": spec.workarounds, "findings": spec.findings,
        "versions": {**spec.versions, "executorch checkout": f"{spec.et_root} (commit {spec.et_commit or 'unknown'})",
                     "CMSIS-NN": f"{spec.cmsis_nn or 'downloaded by ExecuTorch CMake'} (pinned {spec.cmsis_tag or '?'})"},
        "files": {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()},
        "reference": None if reference is None else {
            "inputs": [f"reference_input_{i}.bin" for i in range(len(reference.inputs))],
            "outputs": [f"reference_output_{i}.bin" for i in range(len(reference.outputs))],
            "header": "cmlens_reference.h",
            "from": "the .bpte's test case: expected outputs = the lowered program run on the host"},
        "recipe": recipe_facts(spec, facts, pools),
        "speed": spec.speed,
        "schedule": None if spec.schedule is None else {
            **{k: v for k, v in spec.schedule.items() if k != "document"}, "file": SCHEDULE_JSON,
            "expected_outputs": "the unscheduled lowered program run on the host: --check judges the schedule "
                                "bit for bit against the program it replaces"},
        "check": None,
    }
    return info


def render_files(pte: bytes, spec: BundleSpec, bpte: bytes | None = None
                 ) -> tuple[ProgramFacts, Pools, dict[str, bytes], dict[str, Any]]:
    """Every file of the bundle, in memory: (facts, pools, files by name, bundle.json's dict). `bpte`: the
    program's bundled test case, shipped as the reference input and expected output bytes."""
    from backend_core.common.boards.table import gcc_flags

    facts = read_facts(pte)
    if spec.schedule is not None and spec.schedule.get("input_quant"):
        facts.inputs[0] = int8_input_facts(facts.inputs[0], spec.schedule["input_quant"])
    pools = size_pools(facts.plan)                    # a scheduled program: from ITS plan
    sha = hashlib.sha256(facts.pte).hexdigest()
    files: dict[str, bytes] = {
        "model.pte": facts.pte,
        "model_pte.h": model_header(facts.pte, sha).encode(),
        "cmlens_model.h": api_header(facts, pools, spec.model, spec.target).encode(),
        "cmlens_model.cpp": api_source(facts, pools).encode(),
        "model_ops.txt": (",".join(facts.selected_ops) + "\n").encode(),
        "cmlens_model.cmake": model_cmake(facts, spec.et_root, spec.target, spec.cmsis_tag, spec.flatc,
                                          spec.et_commit, spec.python).encode(),
        "CMakeLists.txt": lists_cmakelists().encode(),
        "toolchain.cmake": toolchain_cmake(spec.target, gcc_flags(spec.target)).encode(),
        **own_kernel_files(facts.ops),
    }
    if spec.schedule is not None:
        files[SCHEDULE_JSON] = (json.dumps(spec.schedule["document"], indent=1) + "\n").encode()
    reference = reference_of(bpte) if bpte else None
    if reference is not None:
        files.update(reference_files(reference, sha))
    info = bundle_info(facts, pools, spec, files, reference)
    files["README.md"] = readme(info).encode()
    files[BUNDLE_JSON] = json.dumps(info, indent=2).encode()
    return facts, pools, files, info


def int8_input_facts(io: Any, quant: dict[str, Any]) -> Any:
    """The int8 input of a scheduled program (--input-dtype int8) with the quantization its leading quantize
    applied before the schedule moved it to the caller: the bundle's helper (cmlens_model_quantize_input)
    does that step for the caller, with the same scale, zero point and clamp."""
    from dataclasses import replace

    from backend_core.target.export.program import Quantization

    return replace(io, quantization=Quantization(float(quant["scale"]), int(quant["zero_point"]), int(quant["qmin"]),
                                                 int(quant["qmax"]), "the caller (cmlens_model_quantize_input, "
                                                 "moved out of the program by --input-dtype int8)"))


def write_bundle(pte: bytes, spec: BundleSpec, folder: Path, force: bool = False, bpte: bytes | None = None) -> Bundle:
    """Write the bundle into `folder` (all or nothing); `bpte` adds the reference input and output files."""
    folder = Path(folder)
    check_destination(folder, force)
    facts, pools, files, info = render_files(pte, spec, bpte)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        tmp.chmod(0o755)            # mkdtemp's 0700 would make the bundle private after the rename
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old-{tmp.name[-8:]}")
            folder.rename(old)
            tmp.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Bundle(folder, facts, pools, info)


def update_report(bundle: Bundle, check: dict[str, Any]) -> None:
    """Add the --check result to bundle.json and README.md (the files the proof is about are unchanged)."""
    bundle.info["check"] = check
    (bundle.folder / BUNDLE_JSON).write_text(json.dumps(bundle.info, indent=2))
    (bundle.folder / "README.md").write_text(readme(bundle.info))
