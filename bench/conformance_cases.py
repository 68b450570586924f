"""ExecuTorch's own Cortex-M test cases (`executorch/backends/cortex_m/test/{ops,models}/`, the
`McuTestCase`s its developers run on the Corstone FVP), found in the installed package and lowered
through cmlens' pipeline, one at a time, each result kept on disk so a rerun skips what is done.

Used by bench/conformance_qemu.py; importable on its own for the lowering half (no checkout needed)."""
from __future__ import annotations

import importlib
import json
import pkgutil
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

TEST_PACKAGES = ("executorch.backends.cortex_m.test.ops", "executorch.backends.cortex_m.test.models")


@dataclass
class Case:
    """One McuTestCase: `ops.test_softmax:test_cases:rank1`."""

    id: str
    module: str
    table: str
    name: str
    obj: Any = field(repr=False, default=None)


@dataclass
class Lowered:
    """What lowering one case left: status, its .bpte path, the pre-flight findings (dicts)."""

    id: str
    status: str                       # lowered | skipped | lower-failed
    reason: str = ""
    bpte: str = ""
    seconds: float = 0.0
    ops: list[str] = field(default_factory=list)
    portable_ops: list[str] = field(default_factory=list)
    preflight: list[dict] = field(default_factory=list)


def discover(select: str = "") -> tuple[list[Case], list[tuple[str, str]]]:
    """Every McuTestCase in the test modules (dicts of McuTestCase at module level), and the
    modules that would not import (module, reason)."""
    from executorch.backends.cortex_m.test.tester import McuTestCase

    cases: list[Case] = []
    broken: list[tuple[str, str]] = []
    for pkg_name in TEST_PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.iter_modules(pkg.__path__):
            if not info.name.startswith("test_"):
                continue
            full = f"{pkg_name}.{info.name}"
            short = f"{pkg_name.rsplit('.', 1)[-1]}.{info.name}"
            try:
                mod = importlib.import_module(full)
            except (Exception, BaseException) as exc:  # needs torchaudio, pytest.skip...
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                broken.append((short, f"{type(exc).__name__}: {exc}".splitlines()[0]))
                continue
            for table, value in vars(mod).items():
                if isinstance(value, dict) and value and all(isinstance(v, McuTestCase)
                                                             for v in value.values()):
                    for name, tc in value.items():
                        cid = f"{short}:{table}:{name}"
                        if select and select not in cid:
                            continue
                        cases.append(Case(cid, short, table, name, tc))
    return cases, broken


def _safe(cid: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in cid)


def snapshot_path(workdir: Path, cid: str) -> Path:
    """The case's final GraphSnapshot (JSON): the pre-flight is re-run on it when the rules change."""
    p = workdir / "final" / f"{_safe(cid)}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def references_path(workdir: Path, cid: str) -> Path:
    """The case's host references (npz): `lowered_N` (the lowered program run on the host: what a
    correct target computes bit for bit) and `fake_quant_N` (the PT2E fake-quant model), logical order."""
    p = workdir / "refs" / f"{_safe(cid)}.npz"
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def save_references(path: Path, final_program: Any, fake_quant: Any, inputs: tuple) -> None:
    import copy

    import numpy as np
    import torch

    def flat(out: Any) -> list:
        return [out] if isinstance(out, torch.Tensor) else list(out)

    arrays = {}
    with torch.no_grad():
        for i, t in enumerate(flat(copy.deepcopy(final_program).module()(*inputs))):
            arrays[f"lowered_{i}"] = t.detach().contiguous().numpy()
        if fake_quant is not None:
            for i, t in enumerate(flat(fake_quant(*inputs))):
                arrays[f"fake_quant_{i}"] = t.detach().contiguous().numpy()
    np.savez(path, **arrays)


def refresh_preflight(low: Lowered, workdir: Path, et_root: str | None = None) -> Lowered:
    """Re-run today's rules on the stored final snapshot and .bpte (rules change faster than lowerings)."""
    from backend_core.analyses.preflight import check_snapshot
    from backend_core.common.snapshot.model import snapshot_from_dict

    f = snapshot_path(workdir, low.id)
    if low.status != "lowered" or not f.is_file():
        return low
    final = snapshot_from_dict(json.loads(f.read_text()))
    low.preflight = [x.to_dict() for x in check_snapshot(final, bundle=Path(low.bpte).read_bytes(), et_root=et_root)]
    return low


def lower_case(case: Case, workdir: Path, target: str = "cortex-m55") -> Lowered:
    """Lower one case with cmlens' pipeline (legacy flow), write its .bpte, run the pre-flight."""
    from backend_core.common.errors import CmlensError
    from backend_core.stages.models.spec import LoadedModel, ModelSpec
    from backend_core.stages.pipeline import LoweringPipeline, PipelineOptions
    from backend_core.stages.pipeline.program_files import bpte_bytes
    from backend_core.analyses.preflight import check_snapshot
    from backend_core.target.build.ops import read_program_ops
    from backend_core.target.build.runner import portable_ops

    start = time.monotonic()
    out = Lowered(case.id, "lowered")
    try:
        inputs = tuple(case.obj.get_example_inputs())
        model = LoadedModel(case.id, case.obj.model.eval(), inputs, ModelSpec("python", case.id))
        pipe = LoweringPipeline(model, PipelineOptions(target=target), keep_edge_program=False)
        for _stage in pipe.run():
            pass
        data = bpte_bytes(pipe.final_program, pipe.quantized_module, pipe.example_inputs)
    except CmlensError as exc:
        out.status, out.reason = "lower-failed", exc.message.splitlines()[0][:300]
        out.seconds = time.monotonic() - start
        return out
    except Exception as exc:  # noqa: BLE001 - a case ExecuTorch itself cannot lower
        out.status = "lower-failed"
        out.reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        out.seconds = time.monotonic() - start
        return out
    path = workdir / "bpte" / f"{_safe(case.id)}.bpte"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    save_references(references_path(workdir, case.id), pipe.final_program, pipe.quantized_module,
                    pipe.example_inputs)
    out.bpte = str(path)
    out.ops = read_program_ops(data)
    out.portable_ops = portable_ops(out.ops)
    final = pipe.snapshots[-1]
    snapshot_path(workdir, case.id).write_text(final.to_json())
    out.preflight = [f.to_dict() for f in check_snapshot(final, bundle=data)]
    out.seconds = time.monotonic() - start
    return out


def lower_all(cases: list[Case], workdir: Path, target: str, *, redo: bool = False, stored_only: bool = False,
              log: Any = print) -> Iterator[Lowered]:
    """Lower every case, reusing `<workdir>/lowered/<case>.json` from an earlier run (`stored_only`:
    only those, lowering nothing)."""
    store = workdir / "lowered"
    store.mkdir(parents=True, exist_ok=True)
    for i, case in enumerate(cases, 1):
        f = store / f"{_safe(case.id)}.json"
        stored = Lowered(**json.loads(f.read_text())) if f.is_file() and not redo else None
        if stored is not None and stored.reason.startswith("cmlens error"):
            stored = None                    # a bug of ours (or a tree caught mid-edit): lower again
        if stored is not None and (stored.status != "lowered" or (snapshot_path(workdir, case.id).is_file()
                                                                  and references_path(workdir, case.id).is_file())):
            yield stored
            continue
        if stored_only:
            if stored is not None:
                yield stored
            continue
        try:
            res = lower_case(case, workdir, target)
        except Exception:  # noqa: BLE001 - a bug of ours: keep going, record it
            res = Lowered(case.id, "lower-failed", "cmlens error: " + traceback.format_exc().splitlines()[-1])
        f.write_text(json.dumps(asdict(res)))
        log(f"[{i}/{len(cases)}] {case.id}: {res.status} {res.seconds:.1f} s"
            + (f" ({res.reason})" if res.reason else "")
            + (f" preflight: {', '.join(p['rule'] for p in res.preflight)}" if res.preflight else ""))
        yield res
