"""`cmlens run --profile`'s text with a cycle estimate: the headline, the values used, ≈ ms per op."""
from __future__ import annotations

from backend_core.target.profile.model import OpCost, Profile
from backend_core.target.profile.text import profile_table
from backend_core.target.profile.units import qemu_icount
from backend_core.target.timing.estimate import estimate

FIT = {"cores": {"cortex-m4": {"stall_per_load": 0.5, "anchor_wait_states": 5}}, "per_wait_state": 0.1,
       "error_pct": {"cortex-m4": 12.5}, "error_basis": {"cortex-m4": "test basis"}}


def test_profile_text_shows_the_estimate_and_ms_per_op() -> None:
    rows = [{"alu": 600, "load": 400}, {"mac_simd": 3000}]
    ops = [OpCost(i, i, f"n{i}", "cortex_m.quantized_conv2d.default", "cmsis_nn", "", sum(r.values()), None, 0.5,
                  None, None, classes=r) for i, r in enumerate(rows)]
    p = Profile("m", "cortex-m4", qemu_icount(6), 5000, ops)
    p.estimate = estimate(rows, "cortex-m4", "stm32l4r5", clock_mhz=100, fit=FIT).to_dict()
    text = profile_table(p)
    assert "cycle estimate (kernels): ≈ " in text and "@ 100 MHz on stm32l4r5" in text and "±12 %" in text
    assert "clock 100 MHz (--clock-mhz)" in text and "flash wait states 5" in text and "≈ ms" in text
    per_op = p.estimate["per_op"]
    assert f"{per_op[1] / 100e3:8.3f}" in text
    assert "alu 15.0%" in text             # 600 of the 4,000 instructions counted by class
