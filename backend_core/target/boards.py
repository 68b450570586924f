"""CPU target string -> board (QEMU machine or Corstone FVP) and GCC flags.

The table mirrors kernels/cmake/boards.cmake (a test configures the kernels project and checks that
both agree). CPUs are ExecuTorch's CortexMTargetConfig ones: M0 M0PLUS M3 M4 M7 M23 M33 M35P M55 M85."""
from __future__ import annotations

from dataclasses import dataclass

from ..cpus import TARGETS, normalise_target
from ..errors import UnsupportedTargetError

SIMULATORS: tuple[str, ...] = ("qemu", "fvp")

# GCC flags per CPU (-mthumb is added for every CPU). GCC 12 (Debian's arm-none-eabi) has no
# -mcpu=cortex-m85: the -march below is the same ISA (Armv8.1-M mainline, MVE with FP, FP64).
GCC_FLAGS: dict[str, tuple[str, ...]] = {
    "cortex-m0": ("-mcpu=cortex-m0", "-mfloat-abi=soft"),
    "cortex-m0plus": ("-mcpu=cortex-m0plus", "-mfloat-abi=soft"),
    "cortex-m3": ("-mcpu=cortex-m3", "-mfloat-abi=soft"),
    "cortex-m4": ("-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
    "cortex-m7": ("-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"),
    "cortex-m23": ("-mcpu=cortex-m23", "-mfloat-abi=soft"),
    "cortex-m33": ("-mcpu=cortex-m33", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"),
    "cortex-m35p": ("-mcpu=cortex-m35p", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"),
    "cortex-m55": ("-mcpu=cortex-m55", "-mfloat-abi=hard"),
    "cortex-m85": ("-march=armv8.1-m.main+mve.fp+fp.dp", "-mfloat-abi=hard"),
}


@dataclass(frozen=True)
class Board:
    """One board of kernels/: its CMake name, CPU, simulator and how to start it."""

    name: str                   # CMLENS_BOARD value, e.g. "mps3-an547"
    cpu: str                    # e.g. "cortex-m55"
    simulator: str              # "qemu" or "fvp"
    machine: str                # QEMU -M value, or the FVP binary name
    linker_script: str          # relative to kernels/
    description: str

    @property
    def gcc_flags(self) -> tuple[str, ...]:
        """Compiler flags for this board's CPU, as kernels/cmake/boards.cmake uses them."""
        return gcc_flags(self.cpu)


BOARDS: dict[str, Board] = {b.name: b for b in (
    Board("mps3-an547", "cortex-m55", "qemu", "mps3-an547", "linker/sse300.ld",
          "MPS3 AN547: Corstone SSE-300 with Cortex-M55 (QEMU)"),
    Board("mps2-an386", "cortex-m4", "qemu", "mps2-an386", "linker/mps2_an386.ld",
          "MPS2 AN386: Cortex-M4 (QEMU)"),
    Board("mps2-an385", "cortex-m3", "qemu", "mps2-an385", "linker/mps2_an386.ld",
          "MPS2 AN385: Cortex-M3 (QEMU)"),
    Board("mps2-an500", "cortex-m7", "qemu", "mps2-an500", "linker/mps2_an500.ld",
          "MPS2 AN500: Cortex-M7 (QEMU)"),
    Board("mps2-an505", "cortex-m33", "qemu", "mps2-an505", "linker/mps2_an505.ld",
          "MPS2 AN505: IoT Kit SSE-200 with Cortex-M33 (QEMU)"),
    Board("corstone-300-fvp", "cortex-m55", "fvp", "FVP_Corstone_SSE-300_Ethos-U55", "linker/sse300.ld",
          "Arm Corstone-300 FVP with Cortex-M55"),
    Board("corstone-320-fvp", "cortex-m85", "fvp", "FVP_Corstone_SSE-320", "linker/sse320.ld",
          "Arm Corstone-320 FVP with Cortex-M85"),
)}

_BY_CPU: dict[tuple[str, str], str] = {(b.cpu, b.simulator): b.name for b in BOARDS.values()}


def gcc_flags(target: str) -> tuple[str, ...]:
    """GCC flags for a CPU target string (`cortex-m4`, `M4`, ...), -mthumb included."""
    return GCC_FLAGS[normalise_target(target)] + ("-mthumb",)


def supported_targets(sim: str) -> list[str]:
    """CPU targets that have a board on this simulator, in ExecuTorch's CPU order."""
    return [t for t in TARGETS if (t, sim) in _BY_CPU]


def board_for(target: str, sim: str = "qemu") -> Board:
    """The board that runs `target` on `sim`; UnsupportedTargetError names the alternatives."""
    if sim not in SIMULATORS:
        raise UnsupportedTargetError(f"Unknown simulator {sim!r}.", "Use --sim qemu or --sim fvp.")
    cpu = normalise_target(target)
    name = _BY_CPU.get((cpu, sim))
    if name is not None:
        return BOARDS[name]
    other = "fvp" if sim == "qemu" else "qemu"
    hints = []
    if (cpu, other) in _BY_CPU:
        hints.append(f"{cpu} runs on --sim {other} ({BOARDS[_BY_CPU[(cpu, other)]].description}).")
    hints.append(f"{sim} boards exist for: " + ", ".join(supported_targets(sim)) + ".")
    what = "QEMU has no board with" if sim == "qemu" else "There is no Corstone FVP with"
    raise UnsupportedTargetError(f"{what} a {cpu} CPU.", " ".join(hints))


def board_by_name(name: str) -> Board:
    """Look a board up by its CMLENS_BOARD name."""
    try:
        return BOARDS[name]
    except KeyError:
        raise UnsupportedTargetError(
            f"Unknown board {name!r}.", "Known boards: " + ", ".join(BOARDS) + ".") from None
