"""`cmlens gate`: exit 1 on the edited model, 0 on the same model lowered twice, 2 on a bad baseline;
last-bit noise in saved scales is never a regression."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from app.cli import main
from backend_core.orchestration.compare.baseline import BASELINE_VERSION, read_baseline, write_baseline

from .conftest import V1, V2


@pytest.fixture(scope="module")
def base_v1(side, tmp_path_factory: pytest.TempPathFactory) -> Path:
    side(str(V2))                              # lowered once into the session cache for the CLI below
    path = tmp_path_factory.mktemp("gate") / "base.json"
    assert main(["gate", str(V1), "--write-baseline", str(path)]) == 0
    return path


def test_edited_model_fails_with_its_regressions(base_v1: Path, capsys) -> None:
    code = main(["gate", str(V2), "--baseline", str(base_v1), "--no-new-fallbacks", "--max-arena", "+5%",
                 "--max-flash", "+5%"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  new fallbacks: 1 (0 in the baseline, 1 now)" in out
    assert "aten.layer_norm `layer_norm` [norm] — not_annotated" in out and "v2/tiny_net.py:22]" in out
    assert "FAIL  planned arena" in out and "FAIL  .pte (flash)" in out and "3 regression(s)." in out


def test_same_model_lowered_again_passes_every_default_check(base_v1: Path, capsys) -> None:
    code = main(["gate", str(V1), "--no-cache", "--baseline", str(base_v1)])      # a fresh lowering
    out = capsys.readouterr().out
    assert code == 0, out
    for check in ("new fallbacks: 0", "qparams changed beyond rtol 1e-05: 0", "planned arena", ".pte (flash)"):
        assert f"ok    {check}" in out
    assert out.rstrip().endswith("No regression.")


def test_generous_limits_pass_the_edit_but_not_the_fallback(base_v1: Path, capsys) -> None:
    assert main(["gate", str(V2), "--baseline", str(base_v1), "--max-arena", "+50%", "--max-flash", "+4K"]) == 0
    assert main(["gate", str(V2), "--baseline", str(base_v1), "--max-arena", "+50%", "--no-new-fallbacks"]) == 1
    capsys.readouterr()


@pytest.mark.parametrize("argv, says", [
    (["layernorm_mlp"], "model: baseline 'tiny_net', result 'layernorm_mlp'"),
    ([str(V1), "--target", "m4"], "target: baseline cortex-m55, result cortex-m4"),
    ([str(V1), "--activations", "int16"], "activations: baseline int8, result int16"),
])
def test_baseline_of_another_configuration_is_exit_2_before_lowering(base_v1: Path, argv, says, capsys) -> None:
    assert main(["gate", *argv, "--baseline", str(base_v1)]) == 2
    err = capsys.readouterr().err
    assert says in err and "one baseline file per configuration" in err
    assert "lowering" not in err                      # refused before any lowering


def test_bad_baseline_files_are_exit_2(base_v1: Path, side, tmp_path: Path, capsys) -> None:
    newer = json.loads(base_v1.read_text())
    newer["version"] = BASELINE_VERSION + 1
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    (tmp_path / "report.json").write_text(json.dumps(side(str(V1)).report))
    (tmp_path / "junk.json").write_text("{not json")
    cases = {"newer.json": f"format version {BASELINE_VERSION + 1}; this cmlens reads version {BASELINE_VERSION}",
             "report.json": "is a `cmlens lower --json` report", "junk.json": "is not readable JSON",
             "missing.json": "does not exist"}
    for name, says in cases.items():
        assert main(["gate", str(V1), "--baseline", str(tmp_path / name)]) == 2, name
        assert says in capsys.readouterr().err, name


def _perturb(report: dict, factor: float, zp_step: int = 0) -> dict:
    """Every scale of the final graph times `factor` (and zero points moved by `zp_step`), as another
    machine's float rounding would."""
    rep = copy.deepcopy(report)
    for node in rep["stages"][-1]["nodes"]:
        qps = [node.get("output_qparams")] + [q for _, q in node.get("input_qparams") or []]
        for q in (q for q in qps if q):
            q["scale"] *= factor
            q["scales"] = [s * factor for s in q.get("scales") or []]
            q["zero_point"] = max(q["qmin"], min(q["qmax"], q["zero_point"] + zp_step))
        rq = node.get("requant")
        if rq:
            rq["effective_scales"] = [s * factor for s in rq["effective_scales"]]
    return rep


def test_last_bit_noise_in_scales_is_not_a_regression(base_v1: Path, side, tmp_path: Path, capsys) -> None:
    report = side(str(V1)).report
    noisy = tmp_path / "noisy.json"
    noisy.write_text(json.dumps(_perturb(report, 1 + 3e-7, zp_step=1)))     # a few float32 ulps, zp +-1
    assert main(["gate", str(noisy), "--baseline", str(base_v1), "--same-qparams", "--no-new-fallbacks"]) == 0
    assert "ok    qparams changed beyond rtol 1e-05: 0 op(s)" in capsys.readouterr().out
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(_perturb(report, 1 + 1e-3)))                  # a real calibration change
    assert main(["gate", str(moved), "--baseline", str(base_v1), "--same-qparams"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  qparams changed beyond rtol 1e-05" in out and "aten.conv2d `conv2d` [conv1]" in out
    # a stated, looser tolerance accepts it
    assert main(["gate", str(moved), "--baseline", str(base_v1), "--same-qparams", "--rtol", "2e-3"]) == 0
    capsys.readouterr()


def test_fits_a_board_or_not(base_v1: Path, capsys) -> None:
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--fits", "stm32f746"]) == 0
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--fits", "4K/64K"]) == 1
    assert "memory-ram-does-not-fit" in capsys.readouterr().out
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--fits", "nosuchboard"]) == 2
    assert "--fits 256K/1M" in capsys.readouterr().err


def test_checks_without_data_are_exit_2_not_a_pass(base_v1: Path, capsys) -> None:
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--max-instructions", "+3%"]) == 2
    assert "the baseline has no profile data" in capsys.readouterr().err
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--min-sqnr", "-1dB"]) == 2
    assert main(["gate", str(V1), "--baseline", str(base_v1), "--max-arena", "5dB"]) == 2
    assert "is not a limit" in capsys.readouterr().err


def test_baseline_round_trip_keeps_the_facts(side, tmp_path: Path) -> None:
    facts = side(str(V2)).facts
    back = read_baseline(write_baseline(facts, tmp_path / "b.json"))
    assert back.to_dict() == facts.to_dict()
