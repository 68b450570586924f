"""The portable pad's layout rule (issue 46, braindecode EEGInceptionERP): op_constant_pad_nd.cpp takes its
strides from the logical sizes, so a channels-last pad of any dim but 0 writes scrambled values on the target
with no error (recorded: tests/fixtures/uart/preflight_pad_channels_last_mps3-an547.txt). The rule reads the
kernel's own walk (last padded dim, the dims it steps with contiguous strides), --keep-going mends it with
dim-order copies on the lowered program in the round that found it, and the mended program PASSes on QEMU."""
from __future__ import annotations

from pathlib import Path

from backend_core.orchestration.jobs.steps.lower import lower_source
from backend_core.stages.pipeline.stages import PipelineOptions
from backend_core.analyses.preflight import certain, findings_of
from backend_core.analyses.preflight.kernel_rules import TensorArg, last_padded_dim, pad_reads_right
from tests.preflight.test_preflight_rules import lowered

PAD = str(Path(__file__).resolve().parent / "models" / "pad_channels_last.py")


def _t(shape: tuple[int, ...], order: tuple[int, ...]) -> TensorArg:
    return TensorArg("self", "x", "float32", shape, order)


def test_the_rule_follows_the_kernels_walk() -> None:
    # pad = (W before, W after, H before, H after, ...): the last padded dim, as op_constant_pad_nd.cpp:208 finds it
    assert last_padded_dim([0, 1, 0, 0], 4) == 3 and last_padded_dim([0, 0, 1, 0], 4) == 2
    assert last_padded_dim([0, 0, 0, 0, 0, 0, 2, 0], 4) == 0 and last_padded_dim([], 4) == 0
    nhwc = (0, 2, 3, 1)
    assert not pad_reads_right(_t((1, 8, 1, 16), nhwc), 3)        # EEGInceptionERP's [1, 48, 1, 33] pads
    assert pad_reads_right(_t((1, 1, 8, 16), nhwc), 3)            # one channel: memory is in logical order
    assert pad_reads_right(_t((1, 8, 4, 4), (0, 1, 3, 2)), 1)     # dims 0..1 lead: the block copy keeps the rest
    assert not pad_reads_right(_t((1, 8, 4, 4), (0, 1, 3, 2)), 2)
    assert pad_reads_right(_t((1, 8, 4, 4), (0, 1, 2, 3)), 3)


def test_a_channels_last_same_padding_is_predicted_on_the_pad() -> None:
    res = lowered(PAD)
    found = certain(res.preflight)
    assert [f.rule for f in found] == ["pad-layout-ignored"], [f.line() for f in res.preflight]
    f = found[0]
    assert res.final.node(f.node).target == "aten.constant_pad_nd.default"
    assert f.source == "kernels/portable/cpu/op_constant_pad_nd.cpp:204"
    assert "padding dim 3 (pad [0, 1, 0, 0])" in f.message and "self is channels-last (0, 2, 3, 1)" in f.message
    assert f.confirmed_by.endswith("preflight_pad_channels_last_mps3-an547.txt")


def test_keep_going_mends_it_in_the_round_that_found_it() -> None:
    res = lower_source(PAD, PipelineOptions(calib=2, keep_going=True), use_cache=False)
    assert res.status == "done", res.error
    rec = res.verdicts["rewrites"]["dim_order_copies"]
    assert rec["round"] == 1 and rec["rules"] == ["pad-layout-ignored"] and rec["copies"] == 2
    assert not certain(findings_of(res.final))


def test_the_mended_pad_passes_on_qemu_m55_bit_exact(tmp_path: Path) -> None:
    from tests.helpers.target_run import run_on_m55_or_skip

    r = run_on_m55_or_skip(PAD, tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()
