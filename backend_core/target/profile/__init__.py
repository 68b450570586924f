"""Per-operator cost of a target run, from the runner's own ETDump profiling events, on the final
graph's nodes: rows per op (count, share, MACs, bytes), groups per nn.Module and kernel kind, fallback
islands, and the same model across CPUs. No Qt; torch only when an ETDump is deserialised.

The unit is always named (units.py): on QEMU it is instructions executed under -icount, not cycles."""
from backend_core.target.profile.build import build_profile, profile_from_files
from backend_core.target.profile.events import EtdumpProfile, InstructionEvent, parse_etdump, read_etdump
from backend_core.target.profile.islands import IslandShape, find_islands
from backend_core.target.profile.model import Group, Island, OpCost, Profile
from backend_core.target.profile.text import profile_table
from backend_core.target.profile.compare import CpuComparison, compare_cpus
from backend_core.target.profile.units import INSTRUCTIONS_LABEL, Unit, fvp_cycles, qemu_icount, raw_ticks, unit_for

__all__ = ["build_profile", "profile_from_files", "EtdumpProfile", "InstructionEvent", "parse_etdump",
           "read_etdump", "IslandShape", "find_islands", "Group", "Island", "OpCost", "Profile",
           "profile_table", "INSTRUCTIONS_LABEL", "Unit", "fvp_cycles", "qemu_icount", "raw_ticks", "unit_for",
           "CpuComparison", "compare_cpus"]
