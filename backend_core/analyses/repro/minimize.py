"""`cmlens repro`: the smallest subgraph of a model that fails an ExecuTorch pass (or torchao's PT2E
quantisation) the same way.

1. Lower the model with the stepped pipeline (not backend_core.lowering.lower: no cache, no reports) until
   a stage fails; its diagnosis names the failing op at quantisation time.
2. Grow: the failing op plus its producers up to depth k, k = 0, 1, 2, …; every tensor entering the
   subgraph is an input with the recorded shape, dtype and memory format. The first k whose file
   fails with the same error (type and first line) is kept, then shrunk one producer at a time.
3. When no producer set fails alone (the failure needs an op upstream of them or one downstream):
   the whole graph, narrowed to a window in graph order around the op, then delta debugging over
   the window's nodes (backend_core.analyses.repro.search).
Each candidate file is run in this process (ExecuTorch is imported once); the result is then run
once more in a fresh Python process, as a user who gets the file would run it."""
from __future__ import annotations

import io
import contextlib
import runpy
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from backend_core.common.errors import BadInputError, Cancelled, CmlensError, StageFailedError
from backend_core.stages.models import load_model, parse_model_source
from backend_core.stages.pipeline import STAGE_EXPORT, LoweringPipeline, PipelineOptions
from backend_core.stages.pipeline.failure import exception_chain
from backend_core.stages.pipeline.logs import capture_logs
from backend_core.common.versions import stack_versions
from backend_core.analyses.repro.codegen import subgraph_source, traced_values
from backend_core.analyses.repro.search import grow_ancestors, narrow_window, delta_shrink

MAX_DEPTH = 6


@dataclass
class ReproResult:
    path: str
    lines: int
    expected: str                          # "AssertionError: Cortex-M quantized_mul: ..."
    stage: str
    op: str                                # the op at quantisation time
    nodes: list[str]                       # the float-export nodes the file rebuilds
    tries: list[tuple[int, bool]] = field(default_factory=list)   # (nodes, reproduced) per candidate
    fresh_process: str = ""                # the error a fresh `python FILE` printed ("" = not run)
    minimal: bool = True                   # False: no smaller set reproduced; the file is the whole export
    note: str = ""                         # why it is not minimal (what the smaller candidates did instead)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _first_line(text: str) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return lines[0].strip() if lines else ""


def expected_error(failure: dict[str, Any]) -> str:
    return f"{failure.get('error_type') or 'Exception'}: {_first_line(failure.get('error', ''))}"


def run_candidate(text: str) -> str:
    """Run a candidate file here; its root error as "Type: first line", or "" when it lowered."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write(text)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), capture_logs():
            runpy.run_path(fh.name, run_name="__main__")
        return ""
    except Exception as e:  # noqa: BLE001 - any error of the candidate is data
        root = exception_chain(e)[-1]
        return f"{type(root).__name__}: {_first_line(str(root))}"
    finally:
        Path(fh.name).unlink(missing_ok=True)


def run_fresh(path: str, expected: str = "", timeout: float = 900) -> str:
    """Run the file in a new Python process. Python prints a chain root first and the wrapper
    ("An error occurred when running ... pass") last: the line matching `expected` if any, else the
    last "Type: message" line; "" when it ran without error."""
    proc = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=timeout)
    if proc.returncode == 0:
        return ""
    lines = [ln for ln in proc.stderr.splitlines() if ln and not ln.startswith((" ", "\t"))]
    errs = [ln for ln in lines if ":" in ln and ln.split(":", 1)[0].replace(".", "").isidentifier()]
    hit = next((ln for ln in errs if expected and same_error(ln, expected)), None)
    return hit or (errs[-1] if errs else (lines[-1] if lines else f"exit code {proc.returncode}"))


def same_error(got: str, expected: str) -> bool:
    """Same class and same first line; a class path prefix (torch._dynamo.exc.X) is ignored."""
    if not got:
        return False
    g_type, _, g_msg = got.partition(": ")
    e_type, _, e_msg = expected.partition(": ")
    return g_type.rsplit(".", 1)[-1] == e_type.rsplit(".", 1)[-1] and g_msg.strip() == e_msg.strip()


def find_failure(source: str, options: PipelineOptions,
                 say: Callable[[str], None]) -> tuple[Any, dict[str, Any], Any, tuple]:
    """(the float ExportedProgram, the failure diagnosis, the quantized-stage snapshot, the example inputs)
    of lowering `source`; BadInputError when it lowers."""
    model = load_model(parse_model_source(source))
    pipe = LoweringPipeline(model, options, say, keep_edge_program=False)
    ep = None
    try:
        for stage in pipe.run():
            if stage.name == STAGE_EXPORT:
                ep = stage.program
    except StageFailedError as e:
        failure = getattr(e, "failure", None)
        if ep is None or not failure:
            raise BadInputError(f"{source} fails in '{e.stage}' before any pass: {e.message}",
                                "cmlens repro reduces failures of torchao's PT2E quantisation, of ExecuTorch's "
                                "quantisation passes and of the Cortex-M passes; fix the export first.") from e
        quantized = next((sn for sn in pipe.snapshots if sn.stage == "quantized"), None)
        return ep, failure, quantized, pipe.example_inputs
    raise BadInputError(f"{source} lowers without error with these options: there is nothing to reproduce.",
                        "Run cmlens repro on a model (and options) that `cmlens lower` reports as failed.")


def _failing_node(ep: Any, failure: dict[str, Any], quantized: Any = None) -> Any:
    """The failing op's node in the float export: by its name at quantisation time, else (the
    quantizer's transform_for_annotation rewrote it, e.g. matmul -> bmm) the last node of the same
    model line in the same module; the candidate runs decide whether it reproduces."""
    from backend_core.common.snapshot.source import module_path_from_stack

    nodes = {n.name: n for n in ep.graph.nodes}
    if failure.get("repro_node") in nodes:       # a quantizer failure: the op torchao fuses the failing one into
        return nodes[failure["repro_node"]]
    name = failure.get("op_node")
    if name in nodes:
        return nodes[name]
    src = failure.get("source") or ""
    file, _, line = src.rpartition(":")
    same_line = [n for n in ep.graph.nodes if n.op == "call_function" and file
                 and f'File "{file}", line {line},' in (n.meta.get("stack_trace") or "")
                 and module_path_from_stack(n.meta.get("nn_module_stack"))[0] == failure.get("module")]
    if quantized is not None and same_line:
        # one line can make several such ops (a loop over heads): the failing one is the k-th op of
        # its kind on that line at quantisation time, and the k-th renamed op on it here
        q_same = [n.id for n in quantized.nodes if n.source is not None and n.source.file == file
                  and str(n.source.line) == line and n.module_path == failure.get("module")
                  and n.target == failure.get("op")]
        renamed = [n for n in same_line if quantized.node(n.name) is None]
        if name in q_same and len(renamed) == len(q_same):
            return renamed[q_same.index(name)]
    if len(same_line) == 1:
        return same_line[0]
    hit = _same_module_op(ep, failure, quantized)
    if hit is not None:
        return hit
    raise CmlensError(f"The failing op {name} ({failure.get('op')}) is not in the float export graph, and no "
                      f"op of {src or 'its line'} in module {failure.get('module')!r} is.",
                      "Report this: the repro needs the op's node at export time.")


_FAMILY = {"bmm": "matmul", "matmul": "matmul", "mm": "matmul", "linear": "linear", "addmm": "linear",
           "conv2d": "conv", "convolution": "conv"}


def _family(target: str) -> str:
    base = target.split(".")[-2] if target.count(".") >= 2 else target
    return _FAMILY.get(base, base)


def _same_module_op(ep: Any, failure: dict[str, Any], quantized: Any) -> Any:
    """The failing op made inside a helper of another file (transformers' eager_attention_forward makes
    the attention matmuls for the module that calls it, so no node carries the module's line): the k-th
    op of the same kind in the same module, k counted at quantisation time."""
    from backend_core.common.snapshot.source import module_path_from_stack

    module, op, name = failure.get("module"), failure.get("op") or "", failure.get("op_node")
    if not module or quantized is None:
        return None
    mine = [n for n in ep.graph.nodes if n.op == "call_function" and _family(str(n.target)) == _family(op)
            and module_path_from_stack(n.meta.get("nn_module_stack"))[0] == module]
    q_same = [n.id for n in quantized.nodes if n.module_path == module and _family(n.target) == _family(op)]
    if name in q_same and len(mine) == len(q_same):
        return mine[q_same.index(name)]
    return mine[0] if len(mine) == 1 else None


def _output_node(ep: Any) -> Any:
    """The node a whole-export file returns when the failing op is not found: the first graph output."""
    out = next(n for n in ep.graph.nodes if n.op == "output")
    first = out.args[0][0] if isinstance(out.args[0], (list, tuple)) else out.args[0]
    return first


def make_repro(source: str, options: PipelineOptions, out: str, *,
               on_status: Callable[[str], None] | None = None, fresh_check: bool = True,
               is_cancelled: Callable[[], bool] | None = None) -> ReproResult:
    """Write the reproducer of `source`'s pass failure to `out`. `is_cancelled()` is asked before each
    candidate (a cancel between two lowerings of the search raises Cancelled)."""
    say = on_status or (lambda _t: None)
    ep, failure, quantized, example_inputs = find_failure(source, options, say)
    expected = expected_error(failure)
    try:
        fail, found = _failing_node(ep, failure, quantized), True
    except CmlensError:         # not traceable to one export node: the whole export is the reproducer
        fail, found = _output_node(ep), False
    values = traced_values(ep, example_inputs)
    versions = {k: v for k, v in stack_versions().items() if k in ("torch", "torchao", "executorch")}
    where = f" at {Path(failure['source'].rsplit(':', 1)[0]).name}:{failure['source'].rsplit(':', 1)[1]}" \
        if failure.get("source") else ""
    header = (f"{failure.get('stage')} fails on {failure.get('op')} ({failure.get('module') or 'model'}{where}): "
              f"reduced from {Path(source).name} by cmlens repro.")

    def text_for(keep: set[str], head: str = header) -> str:
        return subgraph_source(ep, keep, fail.name, header=head, target=options.target, expected=expected,
                               versions=versions, flow=options.flow, traced=values)

    tries: list[tuple[int, bool]] = []

    others: dict[str, int] = {}          # what the candidates that did not reproduce did instead

    def reproduces(keep: set[str]) -> bool:
        if is_cancelled is not None and is_cancelled():
            raise Cancelled(f"cancelled after {len(tries)} candidate(s) of the reduction")
        say(f"repro: trying {len(keep)} node(s)")
        got = run_candidate(text_for(keep))
        ok = same_error(got, expected)
        tries.append((len(keep), ok))
        if not ok:
            others[got or "lowered without error"] = others.get(got or "lowered without error", 0) + 1
        return ok

    keep = grow_ancestors(fail, MAX_DEPTH, reproduces) if found else None
    if keep is None and found:
        say("repro: the op's producers alone do not fail; narrowing a window of the whole graph")
        keep = narrow_window(fail, reproduces)
        if keep is not None:
            keep = delta_shrink(fail, keep, reproduces)
    note, minimal = "", keep is not None
    if keep is None:            # never end with nothing: the whole export, marked as such
        tried = ", ".join(str(n) for n, _ in tries) or "none"
        note = ((f"no subgraph of up to depth {MAX_DEPTH} around {fail.name} nor a window of the graph reproduced "
                 f"(tried {tried} nodes; instead: "
                 + "; ".join(f"{k[:160]} ({v}x)" for k, v in sorted(others.items(), key=lambda kv: -kv[1])[:3])
                 + ")") if found else
                f"the failing op {failure.get('op_node')} ({failure.get('op')}) has no single node in the float export")
        say(f"repro: {note}; writing the whole export (not minimal)")
        keep = {n.name for n in ep.graph.nodes if n.op == "call_function"}
        header = f"NOT MINIMAL (the whole export: {note}). {header}"
    text = text_for(keep, header)
    Path(out).expanduser().parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text)
    res = ReproResult(path=str(out), lines=len(text.splitlines()), expected=expected, stage=failure.get("stage", ""),
                      op=failure.get("op", ""), nodes=[n.name for n in ep.graph.nodes if n.name in keep],
                      tries=tries, minimal=minimal, note=note)
    if fresh_check:
        say("repro: running the file in a fresh Python process")
        res.fresh_process = run_fresh(str(out), expected)
    return res
