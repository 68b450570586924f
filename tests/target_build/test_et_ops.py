"""The op-availability check: operators read from a .pte/.bpte flatbuffer (built here with the
`flatbuffers` package, field order of ExecuTorch's schema/program.fbs), compared with fixture YAMLs."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.common.errors import BadInputError
from tests.helpers.programs import CORTEX_M_YAML, HERE, PORTABLE_YAML, fixture_ops, make_bpte, make_pte
from backend_core.target.build.ops import (check_checkout_ops, check_ops, program_bytes, read_model_ops, read_program_ops,
                                           yaml_ops)

DS_CNN_WHEEL = fixture_ops("ds_cnn_ops_wheel-1.5.1.txt")


def _split(op: str) -> tuple[str, str]:
    name, _, overload = op.partition(".")
    return name, overload


def test_reads_ops_from_pte_and_bpte() -> None:
    pte = make_pte([[_split(op) for op in DS_CNN_WHEEL]])
    assert read_program_ops(pte) == DS_CNN_WHEEL
    bpte = make_bpte(pte)
    assert program_bytes(bpte) == pte
    assert read_program_ops(bpte) == DS_CNN_WHEEL


def test_ops_of_several_methods_are_deduplicated(tmp_path: Path) -> None:
    pte = make_pte([[("aten::add", "out"), ("cortex_m::pad", "out")], [("aten::add", "out"),
                                                                        ("executorch_prim::et_view", "default")]])
    (tmp_path / "m.pte").write_bytes(pte)
    assert read_model_ops(tmp_path / "m.pte") == ["aten::add.out", "cortex_m::pad.out",
                                                   "executorch_prim::et_view.default"]


def test_rejects_non_programs() -> None:
    with pytest.raises(BadInputError, match="Not an ExecuTorch program"):
        read_program_ops(b"\x00\x00\x00\x00PK\x03\x04garbage")
    with pytest.raises(BadInputError, match="too short"):
        read_program_ops(b"ET")


def test_yaml_ops_reads_func_and_op_entries() -> None:
    cm = yaml_ops(CORTEX_M_YAML)
    assert "cortex_m::quantized_conv2d.out" in cm and "cortex_m::quantized_conv2d_nhwc.out" not in cm
    assert yaml_ops(PORTABLE_YAML) == {"aten::add.out", "aten::view_copy.out", "aten::_softmax.out", "aten::tanh.out"}


def test_check_all_present() -> None:
    check = check_ops(DS_CNN_WHEEL, {"cortex_m": CORTEX_M_YAML, "portable": PORTABLE_YAML})
    assert check.ok and check.missing == []
    assert check.summary() == "all 7 operators of the model have kernels in the checkout (7 cortex_m)"
    assert check.hint() == ""


def test_check_reports_missing_nhwc_ops_clearly() -> None:
    ops = ["cortex_m::quantize_per_tensor.out", "cortex_m::quantized_conv2d_nhwc.out",
           "cortex_m::quantized_avg_pool2d_nhwc.out", "aten::view_copy.out", "aten::sym_size.int",
           "executorch_prim::et_view.default", "aten::mean.out"]
    check = check_ops(ops, {"cortex_m": CORTEX_M_YAML, "portable": PORTABLE_YAML, "quantized": HERE / "absent.yaml"})
    assert not check.ok
    assert check.missing == ["cortex_m::quantized_conv2d_nhwc.out", "cortex_m::quantized_avg_pool2d_nhwc.out",
                             "aten::mean.out"]
    assert check.available["aten::view_copy.out"] == "portable"
    assert check.available["executorch_prim::et_view.default"] == "prim"
    assert check.summary() == ("3 of 7 operators of the model have no kernel in the checkout: "
                               "cortex_m::quantized_conv2d_nhwc.out, cortex_m::quantized_avg_pool2d_nhwc.out, "
                               "aten::mean.out")
    assert "--flow legacy" in check.hint()
    assert set(check.yamls) == {"cortex_m", "portable"}     # absent files are skipped


def test_check_checkout_ops_uses_the_checkout_layout(tmp_path: Path) -> None:
    root = tmp_path / "executorch"
    (root / "backends/cortex_m/ops").mkdir(parents=True)
    (root / "kernels/portable").mkdir(parents=True)
    (root / "backends/cortex_m/ops/operators.yaml").write_text(CORTEX_M_YAML.read_text())
    (root / "kernels/portable/functions.yaml").write_text(PORTABLE_YAML.read_text())
    pte = make_pte([[("cortex_m::quantized_max_pool2d_nhwc", "out"), ("aten::add", "out")]])
    check = check_checkout_ops(pte, root)
    assert check.missing == ["cortex_m::quantized_max_pool2d_nhwc.out"]
    assert check.available == {"aten::add.out": "portable"}


def test_own_ops_are_accepted_only_when_a_kernels_ops_source_registers_them(tmp_path: Path) -> None:
    """cmlens:: ops (kernels/ops/cmlens_ops.yaml) have kernels whatever the checkout, because the runner and
    the bundle compile kernels/ops/ for a program that uses them; an op the yaml lists but no source there
    registers is missing, and so is every cmlens:: op when kernels/ops is absent."""
    from backend_core.target.build.ops import own_kernel_ops

    ops = ["cortex_m::quantized_conv2d.out", "cmlens::window.out", "cmlens::tiles.out"]
    real = check_ops(ops, {"cortex_m": CORTEX_M_YAML})
    assert real.ok and real.available["cmlens::window.out"] == "cmlens" == real.available["cmlens::tiles.out"]
    fake = tmp_path / "kernels"
    (fake / "ops").mkdir(parents=True)
    yaml = Path(__file__).resolve().parents[2] / "kernels" / "ops" / "cmlens_ops.yaml"
    (fake / "ops" / "cmlens_ops.yaml").write_text(yaml.read_text())
    (fake / "ops" / "cmlens_ops.cpp").write_text('const Kernel k[] = {Kernel("cmlens::window.out", window_boxed)};\n')
    assert own_kernel_ops(fake) == {"cmlens::window.out"}
    half = check_ops(ops, {"cortex_m": CORTEX_M_YAML}, kernels_dir=fake)
    assert half.missing == ["cmlens::tiles.out"]
    assert check_ops(ops, {"cortex_m": CORTEX_M_YAML}, kernels_dir=tmp_path / "none").missing == \
        ["cmlens::window.out", "cmlens::tiles.out"]
