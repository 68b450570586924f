"""Minimal ExecuTorch program flatbuffers (a Program's operator lists, a BundledProgram around it) and the
operator-list fixtures they are checked against, built with the `flatbuffers` package in ExecuTorch's
schema field order: the op check's inputs without a lowering."""
from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "target"
CORTEX_M_YAML = HERE / "cortex_m_operators_2026-08.yaml"
PORTABLE_YAML = HERE / "portable_functions_excerpt.yaml"


def fixture_ops(name: str) -> list[str]:
    return [ln.strip() for ln in (HERE / name).read_text().splitlines() if ln.strip() and not ln.startswith("#")]


def make_pte(plans: list[list[tuple[str, str]]]) -> bytes:
    """A minimal Program: execution_plan[i].operators = [(name, overload)], identifier ET12."""
    fb = pytest.importorskip("flatbuffers")
    b = fb.Builder(256)
    plan_offsets = []
    for ops in plans:
        op_offsets = []
        for name, overload in ops:
            n, o = b.CreateString(name), b.CreateString(overload)
            b.StartObject(2)
            b.PrependUOffsetTRelativeSlot(0, n, 0)
            b.PrependUOffsetTRelativeSlot(1, o, 0)
            op_offsets.append(b.EndObject())
        b.StartVector(4, len(op_offsets), 4)
        for off in reversed(op_offsets):
            b.PrependUOffsetTRelative(off)
        vec = b.EndVector()
        pname = b.CreateString("forward")
        b.StartObject(10)                          # ExecutionPlan: name=0 ... operators=6
        b.PrependUOffsetTRelativeSlot(0, pname, 0)
        b.PrependUOffsetTRelativeSlot(6, vec, 0)
        plan_offsets.append(b.EndObject())
    b.StartVector(4, len(plan_offsets), 4)
    for off in reversed(plan_offsets):
        b.PrependUOffsetTRelative(off)
    plans_vec = b.EndVector()
    b.StartObject(4)                               # Program: version=0, execution_plan=1
    b.PrependUint32Slot(0, 0, 0)
    b.PrependUOffsetTRelativeSlot(1, plans_vec, 0)
    b.Finish(b.EndObject(), file_identifier=b"ET12")
    return bytes(b.Output())


def make_bpte(pte: bytes) -> bytes:
    """A BundledProgram (identifier BP08) whose `program` field (2) holds the .pte bytes."""
    fb = pytest.importorskip("flatbuffers")
    b = fb.Builder(len(pte) + 256)
    prog = b.CreateByteVector(pte)
    b.StartObject(3)
    b.PrependUOffsetTRelativeSlot(2, prog, 0)
    b.Finish(b.EndObject(), file_identifier=b"BP08")
    return bytes(b.Output())
