"""nn.LSTM / nn.GRU (issue 46, item 6): the fallback reason names ExecuTorch's open PR and --rewrite rnn-cells;
--keep-going writes the float linears of the decomposed module (aten::linear.out: no portable kernel) as
permute_copy + addmm on the lowered program, with the same values on the host; --rewrite rnn-cells is the
module's own equations in float. Small models (3 time steps); the zoo's lstm_kws / cnn_gru_har on QEMU M55 are
in tests/realworld/test_rnn_on_target.py (opt-in)."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from backend_core.stages.fallback.rnn_cells import rnn_cells_copy

TINY = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "tiny_rnn.py")


def _holder(rnn: nn.Module) -> nn.Module:
    m = nn.Module()
    m.rnn = rnn
    return m


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
@pytest.mark.parametrize("kw", [dict(batch_first=True), dict(num_layers=2), dict(batch_first=True, bias=False)])
def test_the_cells_are_the_modules_equations_in_float(cls: type, kw: dict) -> None:
    torch.manual_seed(0)
    rnn = cls(10, 16, **kw).eval()
    copy_, done = rnn_cells_copy(_holder(rnn))
    assert done == {"rnn": "rewritten"} and isinstance(_holder(rnn).rnn, cls)   # the user's module is untouched
    x = torch.randn(2, 7, 10) if kw.get("batch_first") else torch.randn(7, 2, 10)
    layers = kw.get("num_layers", 1)
    h0 = torch.randn(layers, 2, 16)
    state = (h0, torch.randn(layers, 2, 16)) if cls is nn.LSTM else h0
    with torch.no_grad():
        for args in ((x,), (x, state), (x[0] if kw.get("batch_first") else x[:, 0],)):
            want, got = rnn(*args), copy_.rnn(*args)
            torch.testing.assert_close(got[0], want[0], atol=1e-6, rtol=1e-6)
            for a, b in zip(torch.utils._pytree.tree_leaves(got[1]), torch.utils._pytree.tree_leaves(want[1])):
                torch.testing.assert_close(a, b, atol=1e-6, rtol=1e-6)


def test_a_bidirectional_rnn_is_left_and_says_why() -> None:
    _, done = rnn_cells_copy(_holder(nn.GRU(4, 8, bidirectional=True)))
    assert done == {"rnn": "left as GRU: bidirectional is not covered"}


def _lower(source: str, **kw):
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.stages import PipelineOptions

    # two calibration samples: the counts and the workaround do not depend on the ranges, and an unrolled
    # model's calibration is most of its lowering time
    return lower(source, PipelineOptions(calib=2, **kw), use_cache=False, outputs=LowerOutputs(edge_program=True))


@pytest.fixture(scope="module")
def plain():
    return _lower(TINY + ":lstm")


def test_the_lstm_reason_names_the_open_pr_and_the_rewrite(plain) -> None:
    fbs = [n.fallback for n in plain.fallbacks()]     # 36 float ops + its 2 float permutes, one reason: the module
    assert len(fbs) == 38 and {f.category for f in fbs} == {"unsupported_module"}
    assert all("pytorch/executorch#21024" in f.message and "--rewrite rnn-cells" in f.message for f in fbs)
    assert all("--rewrite rnn-cells" in f.suggestion for f in fbs)
    from backend_core.stages.fallback.fixes import RNN_CELLS, fix_for

    assert {fix_for(f, "legacy", False) for f in fbs} == {RNN_CELLS}      # the window's Verify offers it


def test_the_preflight_says_the_float_linear_has_no_portable_kernel(plain) -> None:
    from backend_core.analyses.preflight import findings_of

    found = [f for f in findings_of(plain.final) if f.rule == "missing-kernel"]
    linears = [n.id for n in plain.final.nodes if n.target == "aten.linear.default"]
    assert len(linears) == 4 and sorted(f.node for f in found) == sorted(linears)
    assert all(f.certain and f.op == "aten::linear.out" and "--keep-going" in f.fix for f in found)


def test_keep_going_writes_linear_as_addmm_with_the_same_values(plain) -> None:
    from backend_core.analyses.preflight import findings_of

    kept = _lower(TINY + ":lstm", keep_going=True)
    assert kept.status == "done" and list(kept.verdicts["rewrites"]) == ["linear_as_addmm"]
    rec = kept.verdicts["rewrites"]["linear_as_addmm"]
    assert rec["on"] == "the lowered program" and len(rec["nodes"]) == 4 and rec["round"] == 1
    targets = [n.target for n in kept.final.nodes]
    assert "aten.linear.default" not in targets and targets.count("aten.addmm.default") == 4
    assert not [f for f in findings_of(kept.final) if f.rule == "missing-kernel"]
    fbs = [n for n in kept.fallbacks()]        # the same 38 float ops, still explained on the module, and the
    on_module = [n for n in fbs if n.fallback.category == "unsupported_module"]     # 2 weight transposes of addmm
    transposes = [n for n in fbs if n not in on_module]
    assert len(on_module) == 38 and len(transposes) == 2
    assert all(n.target == "aten.permute_copy.default" and "arm_transpose" in n.fallback.message
               and "Cost: it writes" in n.fallback.message for n in transposes)
    x = torch.linspace(-1, 1, 12).reshape(1, 3, 4)
    want = plain.pipeline.final_program.module()(x)
    got = kept.pipeline.final_program.module()(x)
    assert torch.equal(got, want)                     # bit for bit on the host


def test_rnn_cells_put_every_gate_on_cmsis_nn(plain) -> None:
    cells = _lower(TINY + ":lstm", rewrites=("rnn-cells",))
    assert cells.status == "done" and cells.verdicts["rnn_cells"] == {"lstm": "rewritten"}
    assert len(plain.fallbacks()) == 38 and cells.fallbacks() == []
    targets = [n.target for n in cells.final.nodes]
    # 3 steps x 4 gates x 2 + the zero state + fc = 26 linears; 3 sigmoids + 2 tanh per step = 15 LUTs
    assert targets.count("cortex_m.quantized_linear.default") == 26
    assert targets.count("cortex_m.quantized_activation.default") == 15
    assert targets.count("cortex_m.quantized_mul.default") == 9
    assert cells.report(with_graphs=False)["options"]["rewrites"] == ["rnn-cells"]
