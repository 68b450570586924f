"""Cycle estimates: instructions by class from QEMU's block log and the ELF's disassembly (isa.py,
trace.py), and per-core timing tables (resources/timing/) that turn them into cycles and milliseconds."""
