"""The target part of an evaluation (`cmlens evaluate --on-target K`): the first K evaluation samples run on
the board, each checked against the lowered program bit for bit.

One firmware: the semihosting runner (it reads the program from the host, so it is built once per op set
and the K programs need no rebuild), run K times on the simulator, once per sample. Each run's program is
the job's own lowered program bundled with that sample as its input and the lowered program's host output
on it as the expected output (computed the target's way where a host reference kernel is known to differ
from its CMSIS-NN kernel), checked with atol 0 / rtol 0. When all K are bit-exact, the host figures on
those samples are the target's figures, and the result says so; a sample whose target output differs is
named with the target's prediction (read from the output file the runner writes)."""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError

DEFAULT_K = 16


def evaluate_on_target(job: Any, lowering: Any, data: Any, ev: dict[str, Any], k: int,
                       emit: Callable[[str, dict[str, Any]], None], cancel: threading.Event) -> dict[str, Any]:
    """ev["target_run"] (and ev["models"]["target"] for a classification) for the first `k` samples of `data`."""
    opts = replace(job.run_options(), semihosting=True, atol=0.0, rtol=0.0, qtol=0, etdump=False, profile=False,
                   icount=False)
    et_root = opts.et_root or os.environ.get("EXECUTORCH_ROOT")
    if not et_root:
        raise BadInputError("--on-target needs an ExecuTorch checkout to build the runner.",
                            "Pass --et-root PATH (and --cmsis-nn PATH), or set EXECUTORCH_ROOT.")
    cmsis = opts.cmsis_nn or os.environ.get("CMSIS_NN_PATH")

    def line(stream: str, text: str) -> None:
        if text.startswith("warning:") or "error" in text.lower()[:12]:
            emit("line", {"stream": stream, "line": text})

    own = job.out_dir is None
    work = Path(tempfile.mkdtemp(prefix="cmlens-eval-target-")) if own else Path(job.out_dir) / "evaluate-target"
    try:
        return _run_samples(lowering, data, ev, k, emit, cancel, opts, et_root, cmsis, work, line)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)          # the programs and runs are in the result


def _run_samples(lowering: Any, data: Any, ev: dict[str, Any], k: int,
                 emit: Callable[[str, dict[str, Any]], None], cancel: threading.Event, opts: Any, et_root: str,
                 cmsis: str | None, work: Path, line: Callable[[str, str], None]) -> dict[str, Any]:
    from backend_core.orchestration.jobs.target_run.run_on_target import run_on_target

    pipe = lowering.pipeline
    samples = data.samples[:k]
    work.mkdir(parents=True, exist_ok=True)
    preds = (ev.get("models", {}).get("lowered") or {}).get("predictions")
    rows: list[dict[str, Any]] = []
    board: Any = None
    for i, s in enumerate(samples):
        emit("status", {"text": f"target: sample {i + 1}/{len(samples)} ({s.name}) on {opts.target} ({opts.sim})"
                                + (": building the runner" if i == 0 else "")})
        bpte = work / f"sample{i}.bpte"
        _write_bundle(pipe, s.inputs, bpte)
        run = run_on_target(str(bpte), et_root=et_root, cmsis_nn=cmsis, options=opts, on_line=line,
                            cancel_event=cancel, workdir=work / f"run{i}")
        board = run.board                    # the same semihosting runner every time: built once, then a no-op build
        v = run.verdict
        row: dict[str, Any] = {"sample": s.name, "index": i, "outcome": run.outcome,
                               "exact": bool(v is not None and v.exact), "label": s.label if isinstance(s.label, int) else None}
        if preds is not None:
            row["lowered"] = preds[i]
            out = _target_output(work / f"run{i}" / "out-0.bin")
            row["target"] = int(out.argmax()) if out is not None and out.size == _numel(ev) else None
        rows.append(row)
    exact = [r for r in rows if r["exact"]]
    where = f"{board.name} ({board.cpu}, {board.simulator}): one firmware (the semihosting runner), {len(rows)} runs"
    if len(exact) == len(rows):
        summary = (f"{len(rows)}/{len(rows)} target == lowered program bit for bit on {where}: the host figures "
                   f"are the target's figures")
    else:
        bad = [r for r in rows if not r["exact"]]
        named = ", ".join(f"{r['sample']} ({r['outcome']}" + (f", target predicts {r['target']}, lowered "
                          f"{r['lowered']}" if r.get("target") is not None else "") + ")" for r in bad[:8])
        summary = (f"{len(exact)}/{len(rows)} target == lowered program bit for bit on {where}; the target "
                   f"differs on {named}: the host figures are NOT the target's")
    result = {"k": len(rows), "bit_exact": len(exact), "board": board.name, "cpu": board.cpu,
              "simulator": board.simulator, "samples": rows, "differ": [r["sample"] for r in rows if not r["exact"]],
              "summary": summary}
    ev["target_run"] = result
    if preds is not None and all(r.get("target") is not None or r["exact"] for r in rows):
        tp = [r["lowered"] if r["exact"] else r["target"] for r in rows]
        labels = [r["label"] for r in rows]
        fp = ev["models"]["float"]["predictions"][:len(rows)]
        m: dict[str, Any] = {"n": len(rows), "predictions": tp,
                             "agreement": sum(a == b for a, b in zip(tp, fp)) / len(rows)}
        if all(isinstance(x, int) for x in labels):
            m["top1"] = sum(a == b for a, b in zip(tp, labels)) / len(rows)
            m["correct"] = sum(a == b for a, b in zip(tp, labels))
            m["lowered_top1_same_samples"] = sum(r["lowered"] == r["label"] for r in rows) / len(rows)
        ev["models"]["target"] = m
    return result


def _write_bundle(pipe: Any, inputs: tuple, path: Path) -> None:
    """The lowered program bundled with `inputs`, expected = the lowered program on them (the target's way
    where a host kernel is known to differ), and its references record beside it (PASS means bit-exact)."""
    from backend_core.target.judge.kernel_refs import has_known_ops, target_faithful_run
    from backend_core.target.judge.references import beside, references_from_bundle
    from backend_core.stages.pipeline.program_files import bundle_program

    def adjust(expected: tuple, _secs: float) -> tuple:
        if not has_known_ops(pipe.final_program):
            return expected
        return target_faithful_run(pipe.final_program, inputs, pipe.options.target)[0]

    bundle = bundle_program(pipe.final_program, pipe.quantized_module, inputs, adjust)
    path.write_bytes(bundle.bpte)
    beside(path).write_bytes(references_from_bundle(bundle).to_json())


def _target_output(path: Path) -> Any:
    """The runner's first output as float32 values (None when it wrote none)."""
    import numpy as np

    if not path.is_file() or path.stat().st_size % 4:
        return None
    return np.frombuffer(path.read_bytes(), dtype=np.float32)


def _numel(ev: dict[str, Any]) -> int:
    shape = (ev.get("outputs") or [{}])[0].get("shape") or []
    n = 1
    for d in shape:
        n *= int(d)
    return n
