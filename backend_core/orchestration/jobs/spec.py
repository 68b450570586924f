"""A `Job` is data: which model, lowered how, on which board, which steps to run and what to keep.

It is JSON-serialisable (`to_dict` / `from_dict`) so that the CLI, the GUI's worker processes, a local
process pool and a Dask worker all receive the same plain object; `key()` names the job for a resumable
sweep (the lowering cache adds the model's own content to it)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from backend_core.common.cpus import DEFAULT_TARGET, normalise_target
from backend_core.common.errors import BadInputError
from backend_core.stages.pipeline.stages import PipelineOptions

STEPS = ("lower", "repro", "check", "memory", "schedule", "numerics", "evaluate", "run", "profile", "export", "selftest",
         "doctor")
TOOL_STEPS = ("selftest", "doctor")   # steps that run no model: a Job of only these has no lower step
KEEP = ("pte", "bpte", "graphs", "elf", "etdump", "etrecord")   # etrecord: the .bpte + ETRecord of the one lowering
JOB_FORMAT = 1


@dataclass(frozen=True)
class LowerRequest:
    """How to lower: the options a user picks (one object instead of keyword sprawl)."""
    target: str = "cortex-m55"
    flow: str = "legacy"
    activations: str = "int8"
    channels_last: bool = False
    calib: str | int | None = None
    seed: int = 0
    verify_suggestions: bool = False
    use_cache: bool = True
    companions: dict[str, str] | None = None   # an artefact's companions: etdump, etrecord, debug_buffer, program
    keep_going: bool = False          # quarantine ops whose ExecuTorch pass fails and lower the rest
    rewrites: tuple[str, ...] = ()    # --rewrite: opt-in rewrites of a copy of the model (rnn-cells)

    def __post_init__(self) -> None:
        """The one place a lowering's CPU and calibration are normalised (m4 -> cortex-m4, "8" -> 8),
        whichever face made the request."""
        object.__setattr__(self, "target", normalise_target(self.target or DEFAULT_TARGET))
        if isinstance(self.calib, str) and self.calib.isdigit():
            object.__setattr__(self, "calib", int(self.calib))
        elif self.calib == "":
            object.__setattr__(self, "calib", None)
        object.__setattr__(self, "rewrites", tuple(self.rewrites or ()))     # a job read back from JSON: a list

    def pipeline_options(self) -> PipelineOptions:
        return PipelineOptions(target=self.target, flow=self.flow, calib=self.calib,
                               seed=self.seed, activations=self.activations, channels_last=self.channels_last,
                               keep_going=self.keep_going, rewrites=self.rewrites)


@dataclass(frozen=True)
class RunOptions:
    """How to build and run on a board (the `run` and `profile` steps). target/flow are the lowering's:
    `Job.run_options()` fills them in from `Job.lower`."""
    target: str = "cortex-m55"
    sim: str = "qemu"
    timeout: float = 120.0
    build_type: str = "Release"
    etdump: bool = False              # also dump intermediate outputs (debug_buffer.bin) into the ETDump
    atol: float = 0.0                 # 0/0: the target must equal the lowered program bit for bit (verdict/)
    rtol: float = 0.0
    flow: str = "legacy"
    semihosting: bool = False         # runner reads the model from the host: no rebuild per model
    cache_root: Path | None = None    # libraries + runners (default: firmware.build.cache_dir())
    runner_root: Path | None = None   # runner build directories (default: <cache_root>/runner)
    gap_metric: str = "MSE"           # Inspector distance for per-layer gaps (--etdump): MSE, L1 or SNR
    profile: bool = False             # per-op profile from the ETDump's events (backend_core.target.profile)
    icount: bool = False              # QEMU -icount: ticks = instructions executed (on with profile)
    classes: bool = True              # with profile on QEMU: instructions by class + the cycle estimate
    clock_mhz: float | None = None    # the estimate's clock (default: the board's)
    flash_wait_states: int | None = None   # the estimate's flash wait states (default: the board's)
    preflight: bool = True            # stop before the build when the pre-flight finds a certain failure
    etdump_uart: bool = False         # --etdump over the UART as base64 even on QEMU (what FVP/boards do)
    qtol: int = 0                     # relax atol by this many output quantization steps (ExecuTorch's qtol)
    tight: bool = False               # size the runner's pools from backend_core.target.memory's prediction
    method_pool: int | None = None    # force ET_ARM_BAREMETAL_METHOD_ALLOCATOR_POOL_SIZE (bytes)
    temp_pool: int | None = None      # force ..._SCRATCH_TEMP_ALLOCATOR_POOL_SIZE (bytes)
    board: str | None = None          # a board of `cmlens memory --board list`: link into its RAM/flash
    et_root: str | None = None        # the ExecuTorch checkout (default: $EXECUTORCH_ROOT)
    cmsis_nn: str | None = None       # CMSIS-NN tree (default: $CMSIS_NN_PATH, else CMake downloads it)

    def to_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunOptions":
        d = _known(cls, d, "run")
        for k in ("cache_root", "runner_root"):
            if d.get(k) is not None:
                d[k] = Path(d[k])
        return cls(**d)


@dataclass(frozen=True)
class MemoryOptions:
    """The memory step's options (`cmlens memory`): a board given by its sizes instead of `Job.board`, a
    built runner ELF for the runtime's real sections, where the runtime's size comes from without one,
    and the same model on the ten CPUs."""
    ram: str | None = None            # e.g. "256K": a custom board (with flash) instead of Job.board
    flash: str | None = None
    elf: str | None = None            # a built runner ELF (arm-none-eabi-size -A) instead of the prediction
    runtime_from: str = "auto"        # auto / libraries (a link probe) / table (the shipped sizes)
    all_cpus: bool = False            # also one row per Cortex-M CPU (lowers for each)


@dataclass(frozen=True)
class ScheduleOptions:
    """The schedule step's options (`--schedule`, backend_core.analyses.schedule): auto (the least total RAM
    within the MAC budget), fit:BOARD (the cheapest schedule that fits the board), or a schedule JSON file;
    the input the scheduled program takes (float32 as the model gives it, or the int8 tensor its leading
    quantize makes); where the chosen schedule's JSON goes; a narrower search for tests and benches."""
    spec: str = "auto"
    input_dtype: str = "float32"
    output: str | None = None         # the chosen schedule's JSON (None: not written)
    grids: tuple[int, ...] = ()       # () = the search's default grids
    splits: tuple[str, ...] = ()      # () = the split points chosen from the timeline

    def __post_init__(self) -> None:
        if self.input_dtype not in ("float32", "int8", "any"):     # any: fit:BOARD tries float32, then int8
            raise BadInputError(f"Unknown input dtype {self.input_dtype!r}.", "Use float32 or int8.")
        object.__setattr__(self, "grids", tuple(self.grids or ()))
        object.__setattr__(self, "splits", tuple(self.splits or ()))


@dataclass(frozen=True)
class NumericsOptions:
    """The numerics step's options (`cmlens numerics`): which samples, and how many of them the local
    (isolated) error uses (0: all)."""
    inputs: str | int | None = None   # None: the model's example inputs; N random; or a folder
    local_samples: int = 0
    sample_size: int = 400            # values kept per layer for the scatter/histograms


@dataclass(frozen=True)
class EvaluateOptions:
    """The evaluate step's options (`cmlens evaluate`, backend_core.analyses.accuracy): the labelled data (None: the
    model's get_eval_data()), the first N samples only, and how flips are traced."""
    data: str | None = None           # a folder: *.npy/*.pt + labels.csv, or images in one sub-folder per class
    limit: int | None = None
    flips: bool = True                # trace each flipped prediction to the layer where it departs
    threshold_db: float = 3.0         # a layer departs when its SQNR is this far below the median
    reference_samples: int = 16       # samples whose per-layer errors make the median
    on_target: int = 0                # the first K samples also on the board, checked bit for bit (jobs/target_run/evaluate.py)


@dataclass(frozen=True)
class ReproOptions:
    """The repro step's options (`cmlens repro`, backend_core.analyses.repro): where the reproducer goes, and whether
    it is run once more in a fresh Python process (the proof a maintainer will see)."""
    output: str = "repro.py"
    fresh_check: bool = True


@dataclass(frozen=True)
class ExportOptions:
    """The export step's options (`cmlens export`, backend_core.target.export): the bundle folder, whether an
    existing non-bundle folder may be replaced, and whether the bundle is proven on QEMU (--check). The
    checkout and CMSIS-NN are the run options' (`Job.run.et_root` / `cmsis_nn`)."""
    output: str = ""
    force: bool = False
    check: bool = False
    command: str = ""                 # the command line that made it, for the bundle's report


OUTPUT_KINDS = ("json", "html", "pte", "bpte")


@dataclass(frozen=True)
class Job:
    """One model, lowered one way, through `steps`. `board` is the memory board (fit verdict) and, for
    the run step, the board whose sizes the firmware is linked into."""
    model: str
    lower: LowerRequest = field(default_factory=LowerRequest)
    steps: tuple[str, ...] = ("lower",)
    board: str | None = None
    run: RunOptions = field(default_factory=RunOptions)
    keep: tuple[str, ...] = ()
    out_dir: str | None = None        # where kept files go (default: a temporary folder)
    label: str = ""                   # how a sweep names this cell (e.g. "ds_cnn · m4")
    memory: MemoryOptions = field(default_factory=MemoryOptions)
    numerics: NumericsOptions = field(default_factory=NumericsOptions)
    evaluate: EvaluateOptions = field(default_factory=EvaluateOptions)
    outputs: dict[str, str] | None = None   # files to write, by kind (json, html, pte, bpte): jobs/outputs.py
    repro: ReproOptions = field(default_factory=ReproOptions)
    export: ExportOptions = field(default_factory=ExportOptions)
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    selftest: str = "selftest"        # the selftest step's firmware (diagnostic ones: selftest-fail, hang, fault)

    def __post_init__(self) -> None:
        bad = [s for s in self.steps if s not in STEPS]
        if bad:
            raise BadInputError(f"Unknown step(s) {', '.join(bad)}.", f"Steps are: {', '.join(STEPS)}.")
        bad = [k for k in self.keep if k not in KEEP]
        if bad:
            raise BadInputError(f"Unknown keep item(s) {', '.join(bad)}.", f"Keep items are: {', '.join(KEEP)}.")
        if self.memory.runtime_from not in ("auto", "libraries", "table"):
            raise BadInputError(f"Unknown runtime source {self.memory.runtime_from!r}.", "Use auto, libraries or table.")
        if self.memory.ram or self.memory.flash:
            if self.board:
                raise BadInputError("--board and --ram/--flash both given.", "Use one: a board name, or the sizes.")
            if not self.memory.ram:
                raise BadInputError("--flash without --ram.",
                                    "Give both sizes (e.g. --ram 256K --flash 1M) or --board NAME.")
        bad = sorted(set(self.outputs or {}) - set(OUTPUT_KINDS))
        if bad:
            raise BadInputError(f"Unknown output kind(s) {', '.join(bad)}.", f"Outputs are: {', '.join(OUTPUT_KINDS)}.")
        # every job lowers first, except a ready .pte/.bpte read, checked or taken to the board as it is, and a
        # repro: it lowers with the stepped pipeline until the pass fails (it needs the live float export)
        as_is = (self.reads_program and any(s in self.steps for s in ("check", "memory", "run", "profile"))
                 or "repro" in self.steps or all(s in TOOL_STEPS for s in self.steps))
        object.__setattr__(self, "steps", tuple(s for s in STEPS if s in self.steps or (s == "lower" and not as_is)))

    def wants(self, step: str) -> bool:
        return step in self.steps

    @property
    def reads_program(self) -> bool:
        """The model is a ready ExecuTorch program (.pte/.bpte): read as it is, never lowered. The one
        place that decides it from the path."""
        from backend_core.stages.models.sniff import is_program_path

        return is_program_path(self.model)

    def memory_board(self) -> Any:
        """The memory step's board: `board` by name, or one made of the memory options' sizes (or None)."""
        from backend_core.common.boards.specs import board_named, custom_board

        if self.memory.ram:
            return custom_board(self.memory.ram, self.memory.flash)
        return board_named(self.board) if self.board else None

    def run_options(self) -> RunOptions:
        """The run options with the lowering's CPU and flow and the job's board (one source of truth)."""
        return replace(self.run, target=self.lower.target, flow=self.lower.flow,
                       profile=self.run.profile or self.wants("profile"),
                       board=self.run.board or (self.board if self.wants("run") else None))

    def _lower_dict(self) -> dict[str, Any]:
        """The request as JSON has it (tuples as lists), so a Job read back compares equal to the one sent."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.lower).items()}

    def to_dict(self) -> dict[str, Any]:
        return {"format": JOB_FORMAT, "model": self.model, "lower": self._lower_dict(), "steps": list(self.steps),
                "board": self.board, "run": self.run.to_dict(), "keep": list(self.keep),
                "out_dir": self.out_dir, "label": self.label, "memory": asdict(self.memory),
                "numerics": asdict(self.numerics), "evaluate": asdict(self.evaluate), "outputs": self.outputs,
                "repro": asdict(self.repro), "export": asdict(self.export),
                "schedule": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.schedule).items()},
                "selftest": self.selftest}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Job":
        if d.get("format", JOB_FORMAT) != JOB_FORMAT:
            raise BadInputError(f"Job format {d.get('format')} is not {JOB_FORMAT}.",
                                "Write the job with this version of cmlens.")
        return cls(model=d["model"], lower=LowerRequest(**_known(LowerRequest, d.get("lower", {}), "lower")),
                   steps=tuple(d.get("steps", ("lower",))), board=d.get("board"),
                   run=RunOptions.from_dict(d.get("run", {})), keep=tuple(d.get("keep", ())),
                   out_dir=d.get("out_dir"), label=d.get("label", ""),
                   memory=MemoryOptions(**_known(MemoryOptions, d.get("memory", {}), "memory")),
                   numerics=NumericsOptions(**_known(NumericsOptions, d.get("numerics", {}), "numerics")),
                   evaluate=EvaluateOptions(**_known(EvaluateOptions, d.get("evaluate", {}), "evaluate")),
                   outputs=d.get("outputs"),
                   repro=ReproOptions(**_known(ReproOptions, d.get("repro", {}), "repro")),
                   export=ExportOptions(**_known(ExportOptions, d.get("export", {}), "export")),
                   schedule=ScheduleOptions(**_known(ScheduleOptions, d.get("schedule", {}), "schedule")),
                   selftest=d.get("selftest", "selftest"))

    def key(self) -> str:
        """What the job is, as text: model source + every option that changes a result (not where files go)."""
        low = asdict(self.lower)
        low.pop("use_cache", None)
        run = self.run_options().to_dict() if (self.wants("run") or self.wants("profile")) else {}
        for k in ("cache_root", "runner_root"):
            run.pop(k, None)
        key: tuple = (self.model, sorted(low.items()), self.steps, self.board, sorted(run.items()), self.keep)
        if self.memory != MemoryOptions():      # only then: the keys (and sweep ids) of other jobs stay as they were
            key += (sorted(asdict(self.memory).items()),)
        if self.wants("numerics") and self.numerics != NumericsOptions():
            key += (sorted(asdict(self.numerics).items()),)
        if self.wants("evaluate") and self.evaluate != EvaluateOptions():
            key += (sorted(asdict(self.evaluate).items()),)
        if self.wants("repro"):
            key += (sorted(asdict(self.repro).items()),)
        if self.wants("export"):
            key += (sorted(asdict(self.export).items()),)
        if self.wants("schedule"):
            key += (sorted(asdict(self.schedule).items()),)
        if self.wants("selftest"):
            key += (self.selftest,)
        return repr(key)


def _known(cls: type, d: dict[str, Any], what: str) -> dict[str, Any]:
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - names)
    if unknown:
        raise BadInputError(f"Unknown {what} option(s) in the job: {', '.join(unknown)}.",
                            f"Known: {', '.join(sorted(names))}.")
    return dict(d)
