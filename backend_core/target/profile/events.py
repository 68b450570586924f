"""ETDump -> the runner's profiling events, per inference, as plain data.

ExecuTorch's `Method::execute` records (runtime/executor/method.cpp, ExecuTorch 1.5):
- one "Method::execute" event around the whole inference (before the outputs are logged);
- per KernelCall instruction an "OPERATOR_CALL" event (argument list + kernel call) stamped with the
  chain index and instruction id, and inside it the generated unboxing wrapper's
  "native_call_<op>.<overload>" event (codegen/gen.py), which names the operator;
- "DELEGATE_CALL" for delegate instructions (none in a Cortex-M program), and "MOVE_CALL" /
  "FREE_CALL" / "JF_CALL" for the runtime's own instructions (kept, mapped to no node).
With intermediate outputs dumped (cmlens run --etdump), the wrapper also copies each output into the
debug buffer inside native_call_*: those counts include the copy.
Each inference is one "Execute" run-data block. Timestamps are raw `et_pal_current_ticks()` values:
what a tick is (instructions under QEMU -icount, PMU cycles on the FVP, nothing at all with the weak
default that returns 0) is the caller's business (units.py).

The flatcc deserialiser is ExecuTorch's own (`executorch.devtools.etdump.serialize`); it imports torch."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from backend_core.common.errors import BadInputError

OPERATOR_CALL = "OPERATOR_CALL"
DELEGATE_CALL = "DELEGATE_CALL"
CONTROL_CALLS = ("MOVE_CALL", "FREE_CALL", "JF_CALL")   # runtime instructions that are no graph node
METHOD_EXECUTE = "Method::execute"
NATIVE_PREFIX = "native_call_"


@dataclass
class InstructionEvent:
    """One executed instruction: its whole OPERATOR_CALL span and the kernel wrapper's span inside it."""

    chain: int
    instruction_id: int
    op_name: str                 # "quantized_conv2d.out" from native_call_*, "" when not recorded
    start: int                   # raw ticks
    end: int
    kernel_ticks: int | None     # the native_call_* span (kernel + unboxing), None without one
    kind: str = OPERATOR_CALL
    kernel_start: int | None = None   # raw ticks of the native_call_* span (the per-class counts' bounds)
    kernel_end: int | None = None

    @property
    def ticks(self) -> int:
        return self.end - self.start

    @property
    def op_base(self) -> str:
        """The operator's name without namespace and overload: "quantized_conv2d"."""
        return op_base(self.op_name)


@dataclass
class Inference:
    """One "Execute" block: the Method::execute span and its instructions in execution order."""

    index: int
    bundled_input_index: int | None
    execute_ticks: int | None
    instructions: list[InstructionEvent] = field(default_factory=list)

    @property
    def instruction_ticks(self) -> int:
        return sum(e.ticks for e in self.instructions)


@dataclass
class EtdumpProfile:
    inferences: list[Inference]
    init_ticks: int | None = None        # Method::init
    load_ticks: int | None = None        # Program::load_method

    @property
    def all_zero(self) -> bool:
        """Every timestamp is 0: the firmware has no et_pal_current_ticks (ExecuTorch's weak default)."""
        return all(i.execute_ticks in (0, None) and i.instruction_ticks == 0 for i in self.inferences)


def op_base(name: str) -> str:
    """"native_call_quantized_conv2d.out", "cortex_m::quantized_conv2d.out" and
    "cortex_m.quantized_conv2d.default" all give "quantized_conv2d"."""
    if name.startswith(NATIVE_PREFIX):
        name = name[len(NATIVE_PREFIX):]
    name = name.split("::")[-1]
    parts = name.split(".")
    if len(parts) >= 2 and parts[0] in ("aten", "cortex_m", "quantized_decomposed", "dim_order_ops",
                                         "memory", "executorch_prim"):
        parts = parts[1:]
    return parts[0]


def parse_etdump(data: bytes) -> EtdumpProfile:
    """Bytes of an etdump.bin -> per-inference instruction events. BadInputError when it is not one."""
    if not data:
        raise BadInputError("The ETDump is empty.", "Check that the runner printed a complete ETDump block.")
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    try:
        etdump = deserialize_from_etdump_flatcc(data)
    except Exception as exc:  # flatc raises plain exceptions on a corrupt buffer
        raise BadInputError(f"Not a readable ETDump ({type(exc).__name__}: {exc}).",
                            "Use the etdump.bin the runner printed (a complete #[RUN THIS] ... #[END] block).") from exc
    return _collect(etdump.run_data or [])


def read_etdump(path: str | Path) -> EtdumpProfile:
    p = Path(path)
    if not p.is_file():
        raise BadInputError(f"No ETDump at {p}.", "Run the model on the target first (cmlens run ...).")
    return parse_etdump(p.read_bytes())


def _collect(run_data: list) -> EtdumpProfile:
    out = EtdumpProfile([])
    for rd in run_data:
        events = [e.profile_event for e in (rd.events or []) if e.profile_event is not None]
        if rd.name != "Execute":
            for p in events:
                if p.name == "Method::init":
                    out.init_ticks = p.end_time - p.start_time
                elif p.name == "Program::load_method":
                    out.load_ticks = p.end_time - p.start_time
            continue
        inf = Inference(len(out.inferences), rd.bundled_input_index, None)
        kernel: dict[tuple[int, int], tuple[str, int, int, int]] = {}
        for p in events:
            key = (int(p.chain_index), int(p.instruction_id))
            name = p.name or ""
            if name == METHOD_EXECUTE:
                inf.execute_ticks = int(p.end_time - p.start_time)
            elif name.startswith(NATIVE_PREFIX):
                # the wrapper's event ends (and is recorded) before its OPERATOR_CALL
                kernel[key] = (name[len(NATIVE_PREFIX):], int(p.end_time - p.start_time), int(p.start_time),
                               int(p.end_time))
            elif name in (OPERATOR_CALL, DELEGATE_CALL) + CONTROL_CALLS:
                op_name, kticks, kstart, kend = kernel.pop(key, ("", None, None, None))
                inf.instructions.append(InstructionEvent(key[0], key[1], op_name, int(p.start_time),
                                                         int(p.end_time), kticks, name, kstart, kend))
        out.inferences.append(inf)
    return out
