"""--etdump's debug buffer sized from the program (issue 9, item 8): mv2's intermediate outputs did not fit
the runner's fixed 2 MiB and the run faulted. A real lowering gives the plan; the fit check uses the real
board table (kernels/boards.json) and mv2's measured numbers (lowered here with ExecuTorch 1.5.1:
120 outputs, 7,129,088 bytes, 1,509,744 bytes planned)."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from backend_core.common.boards.table import board_for
from backend_core.target.build.debug_buffer import DEFAULT_DEBUG_BUFFER, DebugBufferPlan, check_fits, plan_from_program

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "target" / "tiny_conv_model.py"
MV2 = DebugBufferPlan(outputs=120, need_bytes=7_129_088, planned_bytes=1_509_744, buffer_size=7_208_960)


def test_plan_of_a_real_program() -> None:
    from executorch.exir._serialize._program import deserialize_pte_binary

    from backend_core.lowering.lower import LowerOutputs, lower

    res = lower(str(TINY), outputs=LowerOutputs(pte=True))
    assert res.status == "done", res.error
    program = deserialize_pte_binary(res.blobs["model.pte"]).program
    plan = plan_from_program(program)
    calls = sum(1 for c in program.execution_plan[0].chains for i in c.instructions
                if hasattr(i.instr_args, "op_index"))
    assert plan.outputs >= calls                              # every kernel call writes at least one output
    assert plan.need_bytes >= 64 * plan.outputs and plan.need_bytes % 64 == 0
    assert plan.planned_bytes == sum(program.execution_plan[0].non_const_buffer_sizes[1:])
    assert plan.buffer_size == DEFAULT_DEBUG_BUFFER           # small models keep the runner's 2 MiB


def test_mv2_is_stopped_before_the_build_on_the_m4_board() -> None:
    assert MV2.buffer_size > DEFAULT_DEBUG_BUFFER             # why the fixed 2 MiB buffer faulted
    with pytest.raises(BadInputError) as e:
        check_fits(MV2, board_for("cortex-m4"), uart_base64=False, model_name="mv2")
    assert "120 intermediate outputs need a 6.9 MiB debug buffer" in e.value.message
    assert "more than the runner's 6.0 MiB method allocator on mps2-an386" in e.value.message
    assert "Run without --etdump" in e.value.hint and "cortex-m55" in e.value.hint
    check_fits(MV2, board_for("cortex-m55"), uart_base64=True, model_name="mv2")   # 60 MiB pool: fits


def test_the_uart_base64_copy_counts_against_the_pool() -> None:
    assert MV2.method_pool_need(True) - MV2.method_pool_need(False) == (MV2.buffer_size * 4 + 2) // 3 + 4
