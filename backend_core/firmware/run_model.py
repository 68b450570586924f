"""`run_model`: lower a model (or take a .pte/.bpte) -> check its ops against the checkout -> build the
ExecuTorch libraries (cached) and the runner -> run on QEMU or the FVP -> parse the UART -> one
structured result. Each step reports through `on_line(stream, line)` and honours `cancel_event`.

Outcome: PASS / FAIL (a BundleIO comparison failed), FAULT, TIMEOUT, RAN (a plain .pte ran to the end:
nothing to compare with), NO RESULT (no TEST line: the runner stopped early); errors before the run are exceptions (BadInputError exit 2,
BuildError / SimulatorError exit 3, Cancelled)."""
from __future__ import annotations

import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .boards import Board, board_for
from . import checkout as checkout_mod
from .build import cache_dir
from .checkout import Checkout, find_cmsis_nn, inspect_checkout, unseen_warnings
from ..errors import BadInputError, SimulatorError
from .et_build import EtLibRequest, ensure_libraries, is_built
from .et_ops import OpCheck, check_checkout_ops
from .process import LineCallback
from .runner_build import RunnerRequest, build_runner
from .simulator import EventCallback, SimResult, runner_for
from .uart import NOT_CYCLE_ACCURATE


class MissingOpsError(BadInputError):
    """The model needs operators the checkout has no kernels for (exit 2)."""

    def __init__(self, check: OpCheck) -> None:
        super().__init__(check.summary() + ".", check.hint())
        self.check = check


@dataclass
class RunOptions:
    target: str = "cortex-m55"
    sim: str = "qemu"
    timeout: float = 120.0
    build_type: str = "Release"
    etdump: bool = False              # also dump intermediate outputs (debug_buffer.bin) into the ETDump
    atol: float = 0.01
    rtol: float = 0.01
    flow: str = "legacy"
    semihosting: bool = False         # runner reads the model from the host: no rebuild per model
    cache_root: Path | None = None    # libraries + runners (default: cache_dir())
    runner_root: Path | None = None   # runner build directories (default: <cache_root>/runner)
    gap_metric: str = "MSE"           # Inspector distance for per-layer gaps (--etdump): MSE, L1 or SNR
    profile: bool = False             # per-op profile from the ETDump's events (backend_core.profile)
    icount: bool = False              # QEMU -icount: ticks = instructions executed (on with profile)
    preflight: bool = True            # stop before the build when backend_core.preflight finds a certain failure
    etdump_uart: bool = False         # --etdump over the UART as base64 even on QEMU (what FVP/boards do)
    qtol: int = 0                     # relax atol by this many output quantization steps (ExecuTorch's qtol)
    tight: bool = False               # size the runner's pools from backend_core.memory's prediction
    method_pool: int | None = None    # force ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE (bytes)
    temp_pool: int | None = None      # force ..._SCRATCH_TEMP_ALLOCATOR_POOL_SIZE (bytes)


@dataclass
class ModelRunResult:
    model: str
    target: str
    board: Board
    outcome: str                      # PASS / FAIL / FAULT / TIMEOUT / NO RESULT
    exit_code: int | None
    op_check: OpCheck
    sim: SimResult
    elf: Path
    timings: dict[str, float] = field(default_factory=dict)   # lower_s, libs_s, runner_*_s, run_s
    libs_cached: bool = False
    cold_library_build_s: float | None = None
    problem: str = ""
    files: dict[str, Path] = field(default_factory=dict)    # semihosting: out-0.bin, etdump.bin, ...
    gaps: Any = None                  # gaps.GapReport when --etdump ran a lowered model (ETRecord + debug buffer)
    gaps_problem: str = ""            # why there are no gaps although --etdump was asked for
    profile: Any = None               # profile.Profile with --profile
    profile_problem: str = ""         # why there is no profile although --profile was asked for
    memory: dict[str, Any] | None = None   # prediction vs the runner's memory lines (memory/target_check.py)
    reference_warnings: list[str] = field(default_factory=list)   # degenerate expected outputs (reference_check)

    @property
    def passed(self) -> bool:
        """PASS (or RAN for a .pte without reference outputs) and exit status 0."""
        return self.outcome in ("PASS", "RAN") and self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        r = self.sim.report
        cycles = r.cycles
        return {
            "model": self.model, "target": self.target, "board": self.board.name,
            "simulator": self.board.simulator, "outcome": self.outcome, "exit_code": self.exit_code,
            "problem": self.problem,
            "tests": [{"suite": t.suite, "index": t.index, "passed": t.passed} for t in r.tests],
            "error_stats": [vars(s) for s in r.error_stats],
            "cycles": None if cycles is None else {
                "available": cycles.available, "total": cycles.total, "per_inference": cycles.per_inference,
                "label": NOT_CYCLE_ACCURATE, "reason": cycles.reason, "counters": cycles.counters},
            "etdump": [{k: len(v) for k, v in b.files.items()} for b in r.etdumps],
            "faults": [f.summary() for f in r.faults],
            "errors": r.errors,
            "outputs": len(r.outputs),
            "ops": {"model": self.op_check.model_ops, "missing": self.op_check.missing},
            "timings_s": {k: round(v, 3) for k, v in self.timings.items()},
            "libraries_cached": self.libs_cached, "cold_library_build_s": self.cold_library_build_s,
            "memory": self.memory,
            "reference_warnings": self.reference_warnings,
            "elf": str(self.elf), "files": {k: str(v) for k, v in self.files.items()},
            "gaps": None if self.gaps is None else self.gaps.to_dict(), "gaps_problem": self.gaps_problem,
            "profile": None if self.profile is None else self.profile.to_dict(),
            "profile_problem": self.profile_problem,
        }

    def summary(self) -> str:
        r = self.sim.report
        lines = [f"{self.model} on {self.board.name} ({self.target}, {self.board.simulator}): {self.outcome}, "
                 f"exit status {self.exit_code}"]
        for s in r.error_stats:
            lines.append(f"error stats testset {s.testset}: mean abs {s.mean_absolute_error}, max abs "
                         f"{s.max_absolute_error}, mean rel {s.mean_relative_error}, max rel {s.max_relative_error}")
        if r.cycles is not None and r.cycles.available:
            lines.append(f"cycles: {r.cycles.total} ({NOT_CYCLE_ACCURATE})")
        else:
            lines.append(f"cycles: unavailable on {self.board.simulator} ({NOT_CYCLE_ACCURATE} anyway)")
        if r.etdumps:
            lines.append("etdump: " + ", ".join(f"{k} {len(v)} B" for b in r.etdumps for k, v in b.files.items()))
        if self.files:
            lines.append("files: " + ", ".join(f"{p} ({p.stat().st_size} B)" for p in self.files.values()
                                               if p.is_file()))
        if self.gaps is not None:
            lines.append(self.gaps.table(10))
        elif self.gaps_problem:
            lines.append(f"per-layer gaps: none ({self.gaps_problem})")
        if self.profile is not None:
            from ..profile import profile_table
            lines.append(profile_table(self.profile))
        elif self.profile_problem:
            lines.append(f"per-op profile: none ({self.profile_problem})")
        if self.memory and self.memory["lines"]:
            lines += ["memory: prediction vs the runner's own figures"] + ["  " + x for x in self.memory["lines"]]
        if self.problem:
            lines.append(f"problem: {self.problem}")
        lines += [f"warning: {w}" for w in self.reference_warnings]
        t = self.timings
        lines.append("time: " + ", ".join(f"{k[:-2]} {v:.2f} s" for k, v in t.items())
                     + (" (libraries cached)" if self.libs_cached else ""))
        return "\n".join(lines)


def model_file(source: str, opts: RunOptions, workdir: Path, on_line: LineCallback) -> tuple[Path, float]:
    """A .pte/.bpte for `source`: the file itself, or the result of lowering it (a .bpte)."""
    p = Path(source)
    if p.suffix in (".pte", ".bpte"):
        if not p.is_file():
            raise BadInputError(f"Model file {p} does not exist.")
        return p, 0.0
    from ..lowering import lower
    from ..pipeline import PipelineOptions

    start = time.monotonic()
    on_line("cmlens", f"lowering {source} for {opts.target} ({opts.flow} flow)")
    res = lower(source, PipelineOptions(target=opts.target, flow=opts.flow), want_pte=True, want_bpte=True,
                on_status=lambda s: on_line("cmlens", s))
    if res.status != "done" or "model.bpte" not in res.blobs:
        err = res.error or {}
        raise BadInputError(f"Lowering {source} failed at {err.get('stage', '?')}: {err.get('message', res.status)}",
                            err.get("hint", ""), detail=err.get("traceback", ""))
    out = workdir / f"{res.model}.bpte"
    out.write_bytes(res.blobs["model.bpte"])
    return out, time.monotonic() - start


def run_model(source: str, *, et_root: str | Path, cmsis_nn: str | Path | None = None,
              options: RunOptions | None = None, on_line: LineCallback | None = None,
              on_event: EventCallback | None = None, cancel_event: threading.Event | None = None,
              workdir: Path | None = None, on_step: Callable[[str], None] | None = None) -> ModelRunResult:
    """Lower (or take) a model, check its ops, build libraries + runner, run it, attach gaps.

    `on_step(name)` is called as each of backend_core.protocol.RUN_STEPS begins (the GUI's progress)."""
    opts = options or RunOptions()
    emit = on_line or (lambda stream, line: None)
    step = on_step or (lambda name: None)
    cancel_event = cancel_event or threading.Event()
    board = board_for(opts.target, opts.sim)                       # UnsupportedTargetError: exit 2
    checkout: Checkout = inspect_checkout(et_root)                 # BadInputError: exit 2
    checkout.require_buildable()                                   # submodules, directory name: exit 2
    for w in unseen_warnings(checkout, Path(opts.cache_root) if opts.cache_root is not None else cache_dir()):
        emit("cmlens", f"warning: {w}")                            # once per checkout; doctor always
    cmsis = find_cmsis_nn(cmsis_nn, checkout)
    lib_req = EtLibRequest(checkout.root, board.cpu, opts.build_type, cmsis.path,
                           cache_root=opts.cache_root, commit=checkout.commit, etdump=True)
    sim = runner_for(board, on_line=on_line, on_event=on_event, cancel_event=cancel_event,
                     icount=opts.icount or opts.profile)
    sim.require()                                                  # ToolMissingError before a long build
    if cmsis.path is None and not is_built(lib_req):
        if not checkout_mod.can_reach():
            raise checkout_mod.offline_cmsis_nn_error(cmsis.fetch_tag)   # not 20 s into the configure
        emit("cmlens", f"note: {cmsis.note}")
    workdir = workdir or Path(tempfile.mkdtemp(prefix="cmlens-run-"))
    timings: dict[str, float] = {}

    record = None
    step("lower")
    if opts.etdump and Path(source).suffix not in (".pte", ".bpte"):
        from .etrecord_lowering import lower_with_etrecord   # the ETRecord must come from the same lowering

        emit("cmlens", f"lowering {source} for {opts.target} ({opts.flow} flow) with an ETRecord")
        record = lower_with_etrecord(source, opts.target, opts.flow, workdir, lambda s: emit("cmlens", s))
        model, timings["lower_s"] = record.bpte, record.seconds
    else:
        model, timings["lower_s"] = model_file(source, opts, workdir, emit)
    step("check ops")
    ref_warnings: list[str] = []
    steps: list[float | None] = []
    atol = opts.atol
    if model.suffix == ".bpte":      # a PASS against near-constant reference outputs proves nothing
        from ..pipeline.reference_check import bundle_warnings, output_steps
        from .debug_buffer import read_program

        ref_warnings = bundle_warnings(model.read_bytes(), opts.atol)
        for w in ref_warnings:
            emit("cmlens", f"warning: {w}")
        steps = output_steps(read_program(model))
        if opts.qtol and any(steps):
            atol = opts.atol + opts.qtol * max(s for s in steps if s)
            emit("cmlens", f"tolerance: atol {opts.atol:g} + {opts.qtol} x output step {max(s for s in steps if s):.4g} "
                           f"= {atol:.4g} (--qtol)")
    check = check_checkout_ops(model, checkout.root)
    emit("cmlens", f"ops: {check.summary()}")
    if not check.ok:
        raise MissingOpsError(check)
    if opts.preflight:       # what will fail on the target stops the run here, before any build (exit 2)
        from ..preflight.gate import gate

        gate(source, model, opts.target, opts.flow, board.name, emit)

    # --etdump on QEMU: the runner writes etdump.bin / debug_buffer.bin to host files through semihosting
    # (seconds of base64 on the UART otherwise: ~16 s for mobilenet_v1_025); FVP and boards keep the UART.
    host_files = opts.semihosting or (opts.etdump and not opts.etdump_uart and board.simulator == "qemu"
                                      and model.suffix == ".bpte")
    debug_size = None
    if opts.etdump:
        from .debug_buffer import check_fits, plan_for_model

        dplan = plan_for_model(model)
        check_fits(dplan, board, not host_files, model.stem)   # BadInputError before any build (exit 2)
        debug_size = dplan.buffer_size
        emit("cmlens", f"--etdump: {dplan.outputs} intermediate outputs, {dplan.need_bytes:,} bytes: debug buffer "
                       f"{debug_size / 2**20:.2f} MiB (the runner's default is 2 MiB); "
                       + ("written to host files through semihosting" if host_files else "sent as base64 on the UART"))

    from ..memory.target_check import check_run, predict_for_run, run_pools

    mem_pred = predict_for_run(model, opts.etdump, emit, debug_size, uart_etdump=not host_files)
    pools = run_pools(mem_pred, opts.tight, opts.method_pool, opts.temp_pool, emit)

    start = time.monotonic()
    step("libraries")
    libs = ensure_libraries(lib_req, on_line=on_line, cancel_event=cancel_event)
    timings["libraries_s"] = time.monotonic() - start

    if host_files and model.suffix != ".bpte":
        raise BadInputError("The semihosting runner needs a .bpte: it takes the inputs from the bundle.",
                            "Pass a model name or a .bpte, or drop --semihosting to bake the .pte in.")
    rreq = RunnerRequest(board, libs, model=None if host_files else model, ops=check.model_ops,
                         semihosting=host_files, etdump=opts.etdump, debug_buffer_size=debug_size,
                         dump_intermediate_outputs=opts.etdump, atol=atol, rtol=opts.rtol,
                         method_pool=pools[0], temp_pool=pools[1],
                         build_root=opts.runner_root or (None if opts.cache_root is None
                                                         else Path(opts.cache_root) / "runner"))
    step("build runner")
    rb = build_runner(rreq, on_line=on_line, cancel_event=cancel_event)
    timings["runner_configure_s"], timings["runner_build_s"] = rb.configure_s, rb.build_s

    step("run")
    if host_files:
        result = _run_semihosting(sim, rb.elf, model, workdir, opts, emit)
    else:
        emit("cmlens", "$ " + " ".join(sim.command(rb.elf)))
        result = sim.run(rb.elf, timeout=opts.timeout)
    timings["run_s"] = result.elapsed_s
    if result.exit_code not in (0, None) and not result.uart and result.problem:
        raise SimulatorError(f"The simulator could not run the runner: {result.problem}")
    outcome = result.outcome
    if outcome == "PASS" and result.exit_code not in (0, None):
        outcome = "FAIL"
    if (outcome == "NO RESULT" and result.exit_code == 0 and not result.report.errors
            and model.suffix == ".pte"):
        outcome = "RAN"          # a plain .pte has no reference outputs to compare with
    problem = result.problem
    fatal = [e for e in result.report.errors if e.startswith("F [")]
    if result.report.faults and fatal:
        problem = (f"the runner aborted ({fatal[-1].split('] ', 1)[-1]}); ExecuTorch's et_pal_abort traps, "
                   f"which the board layer reports as {result.report.faults[0].kind}")
    files = {}
    for block in result.report.etdumps:          # the UART's base64 blocks, as files for the Inspector
        for name, data in block.files.items():
            (workdir / name).write_bytes(data)
    files = {p.name: p for p in sorted(workdir.glob("out-*.bin")) + [workdir / "etdump.bin",
                                                                      workdir / "debug_buffer.bin"]
             if p.is_file()}
    run = ModelRunResult(Path(source).stem if Path(source).suffix else source, board.cpu, board, outcome,
                         result.exit_code, check, result, rb.elf, timings, libs.cached, libs.cold_build_s,
                         problem, files)
    run.memory = check_run(mem_pred, result.report.memory, *pools, elf=rb.elf,
                           baked_model_bytes=0 if host_files else model.stat().st_size)
    if run.memory and run.memory["problem"]:
        run.problem = run.memory["problem"] + (f" ({run.problem})" if run.problem else "")
    run.reference_warnings = ref_warnings
    if outcome == "FAIL" and result.report.error_stats:
        from ..pipeline.reference_check import fail_hint

        hint = fail_hint(result.report.error_stats[0].max_absolute_error, steps, opts.qtol)
        if hint:
            run.problem = hint + (f"; {run.problem}" if run.problem else "")
    if opts.etdump:
        step("gaps")
        _attach_gaps(run, record, workdir, opts.gap_metric, emit)
    if opts.profile:
        from ..profile.run import attach_profile

        attach_profile(run, source, opts.flow, opts.icount or opts.profile, record, emit)
    step("results")
    return run


def _attach_gaps(run: ModelRunResult, record: Any, workdir: Path, metric: str, emit: LineCallback) -> None:
    """Per-layer gaps when the run left an ETDump + debug buffer and we hold the ETRecord; otherwise
    say why. A failure here is reported on the result, not raised: the run itself already happened."""
    if record is None:
        run.gaps_problem = "no ETRecord for a ready-made .pte/.bpte: pass the model source to get per-layer gaps"
        return
    if "etdump.bin" not in run.files or "debug_buffer.bin" not in run.files:
        run.gaps_problem = "the runner printed no ETDump with a debug buffer (did it stop early?)"
        return
    from .gaps_inspector import compute_gaps

    emit("cmlens", f"per-layer gaps: Inspector over the ETDump ({metric})")
    start = time.monotonic()
    try:
        run.gaps = compute_gaps(run.files["etdump.bin"], run.files["debug_buffer.bin"], record.etrecord,
                                record.final, metric)
    except Exception as exc:  # noqa: BLE001  ExecuTorch's Inspector raises plain exceptions
        run.gaps_problem = f"Inspector failed: {type(exc).__name__}: {exc}"
        emit("cmlens", f"per-layer gaps failed: {run.gaps_problem}")
    run.timings["gaps_s"] = time.monotonic() - start
    run.files["etrecord.bin"] = record.etrecord


SEMIHOSTING_ARGV = ("executor_runner", "-m", "model.bpte", "-i", "input.bin", "-o", "out")


def semihosting_files(model: Path, workdir: Path) -> list[str]:
    """Put the model where the runner opens it (the simulator's working directory) and return the
    runner's argv. The runner insists on an `-i` file even when the bundle provides the inputs."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "model.bpte").write_bytes(model.read_bytes())
    (workdir / "input.bin").write_bytes(b"\0" * 4)
    return list(SEMIHOSTING_ARGV)


def _run_semihosting(sim, elf: Path, model: Path, workdir: Path, opts: RunOptions,
                     emit: LineCallback) -> SimResult:
    argv = semihosting_files(model, workdir)
    if sim.board.simulator == "qemu":
        emit("cmlens", f"(cd {workdir}) $ " + " ".join(sim.command(elf, argv)))
        return sim.run(elf, timeout=opts.timeout, semihosting_args=argv, cwd=workdir)
    emit("cmlens", "$ " + " ".join(sim.command(elf, opts.timeout, workdir, " ".join(argv))))
    return sim.run(elf, timeout=opts.timeout, cwd=workdir, cmd_line=" ".join(argv))
