"""Instructions and SQNR on the rows: a recorded QEMU -icount profile of layernorm_mlp on Cortex-M55
(tests/profile/fixtures: the runner's UART with its ETDump, two runs gave the same counts) laid over a
fresh lowering of the same model, and numerics of int8 vs int16 activations."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from backend_core.orchestration.compare import compare_facts
from backend_core.orchestration.compare.gate import GateOptions, parse_limit, run_gate
from backend_core.orchestration.compare.text import comparison_text

PROFILE_FIXTURES = Path(__file__).resolve().parents[1] / "profile" / "fixtures"
TOTAL = 38_956          # Method::execute of the recorded inference, instructions


@pytest.fixture(scope="module")
def recorded_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("executorch")
    from backend_core.target.simulate.uart import parse_uart
    from backend_core.target.profile import build_profile, parse_etdump, qemu_icount
    from backend_core.common.snapshot.model import snapshot_from_dict

    uart = parse_uart((PROFILE_FIXTURES / "uart_profile_layernorm_mlp_mps3-an547.txt").read_text())
    final = snapshot_from_dict(json.loads((PROFILE_FIXTURES / "layernorm_mlp_m55.final.json").read_text()))
    prof = build_profile(parse_etdump(uart.etdumps[0].files["etdump.bin"]), final, qemu_icount(5, 32e6),
                         model="layernorm_mlp", target="cortex-m55")
    path = tmp_path_factory.mktemp("profile") / "run.json"
    path.write_text(json.dumps({"profile": prof.to_dict()}))     # the shape of `cmlens run --json F`
    return path


def test_a_profile_puts_instructions_on_the_user_ops_and_islands(side, recorded_profile: Path) -> None:
    s = side(f"layernorm_mlp@int8,profile={recorded_profile}")
    p = s.facts.profile
    assert p["total"] == TOTAL and p["mapped_nodes"] == p["ops"] == 8
    norm = next(g for g in s.facts.groups if g.module == "norm" and g.name == "layer_norm")
    fc1 = next(g for g in s.facts.groups if g.module == "fc1" and g.name == "linear")
    assert norm.instructions and fc1.instructions and norm.instructions > 0
    island = next(i for i in p["islands"] if norm.key in i["fallbacks"])
    assert island["count"] > norm.instructions                 # the island drags its q/dq along


def test_instruction_limit_against_a_baseline_with_a_profile(side, recorded_profile: Path) -> None:
    base = side(f"layernorm_mlp@int8,profile={recorded_profile}").facts
    slower = copy.deepcopy(base)
    slower.profile["total"] = int(TOTAL * 1.05)                  # 5 % more instructions per inference
    cmp = compare_facts([base, slower])
    assert cmp.deltas[0]["instructions"]["total"]["delta"] == int(TOTAL * 1.05) - TOTAL
    failed = run_gate(base, slower, GateOptions(max_instructions=parse_limit("+3%", "--max-instructions")))
    assert [c.name for c in failed.regressions] == ["instructions"]
    assert "38,956 -> 40,903" in failed.regressions[0].message
    ok = run_gate(base, slower, GateOptions(max_instructions=parse_limit("+10%", "--max-instructions")))
    assert not ok.regressions
    assert "island aten.native_layer_norm island" in comparison_text(cmp)


def test_int16_numerics_per_op_and_at_the_output(side) -> None:
    from backend_core.orchestration.compare.sides import load_side, parse_side

    i8 = load_side(parse_side("layernorm_mlp@int8"), "int8", numerics_samples=2)
    i16 = load_side(parse_side("layernorm_mlp@int16"), "int16", numerics_samples=2)
    for s in (i8, i16):
        assert s.facts.numerics["output_sqnr_db"] is not None and s.facts.numerics["mapped_layers"] > 0
    cmp = compare_facts([i8.facts, i16.facts])
    sq = cmp.deltas[0]["sqnr"]["output_sqnr_db"]
    assert sq["base"] == i8.facts.numerics["output_sqnr_db"] and sq["delta"] == sq["value"] - sq["base"]
    fc2 = next(r for r in cmp.rows if r.module == "fc2" and r.label.startswith("aten.linear"))
    assert fc2.cells[0].sqnr_db is not None and fc2.cells[1].sqnr_db is not None
    # an output SQNR 2 dB lower than the baseline fails -1dB and passes -3dB
    worse = copy.deepcopy(i8.facts)
    worse.numerics["output_sqnr_db"] -= 2.0
    assert run_gate(i8.facts, worse, GateOptions(min_sqnr=parse_limit("-1dB", "--min-sqnr", db=True))).regressions
    assert not run_gate(i8.facts, worse, GateOptions(min_sqnr=parse_limit("-3dB", "--min-sqnr", db=True))).regressions
    assert "SQNR at the output, lowered vs float" in comparison_text(cmp)
