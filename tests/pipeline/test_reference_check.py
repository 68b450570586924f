"""A PASS that proves nothing is flagged (issue 9, item 7): degenerate reference outputs are named,
`cmlens run` warns before building, and the zoo's random-weight MobileNets are no longer degenerate."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from backend_core.stages.pipeline.reference_check import ADVICE, bundle_warnings, degenerate_reason

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "target"


@pytest.mark.parametrize("values,atol,step,expect", [
    (np.zeros(10), 0.01, None, "all 10 reference outputs are 0"),
    (np.full(5, 0.25), 0.01, None, "all 5 reference outputs equal 0.25"),
    (np.linspace(-3.4e-9, 3.4e-9, 1000), 0.01, None, "within the tolerance of 0 (max |y| = 3.4e-09 <= atol 0.01)"),
    (np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6]), None, None, "take only 2 distinct values"),
    (np.linspace(0.0, 0.1, 16), None, 0.08, "less than two quantization steps"),
])
def test_degenerate_outputs_are_named(values, atol, step, expect) -> None:
    assert expect in degenerate_reason(values, atol, step)


def test_a_healthy_output_is_not_flagged() -> None:
    assert degenerate_reason(np.array([0.03, -0.05]), 0.01) == ""        # mobilenet_v1_025: 2 outputs
    assert degenerate_reason(np.linspace(-0.9, 0.9, 1000), 0.01, 0.007) == ""


@pytest.fixture(scope="module")
def near_zero_bpte(tmp_path_factory) -> Path:
    from backend_core.lowering.lower import LowerOutputs, lower

    res = lower(str(FIXTURES / "near_zero_linear.py"), outputs=LowerOutputs(bpte=True))
    assert res.status == "done", res.error
    out = tmp_path_factory.mktemp("bpte") / "near_zero.bpte"
    out.write_bytes(res.blobs["model.bpte"])
    return out


def test_bundle_of_a_near_zero_model_warns(near_zero_bpte: Path) -> None:
    [w] = bundle_warnings(near_zero_bpte.read_bytes(), 0.01)
    assert w.startswith("the reference output is degenerate: every reference output is within the tolerance")
    assert w.endswith(ADVICE)
    assert bundle_warnings(b"not a bundle", 0.01) == []


def test_cmlens_run_warns_before_building(near_zero_bpte: Path, tmp_path: Path) -> None:
    """With a tolerance (--atol 0.01) a target printing zeros would PASS against outputs of 1e-6: warned.
    At the default atol 0 (bit-exact against the lowered program) it would FAIL, so no warning then."""
    from tests.helpers.cli import run_cli
    from tests.helpers.checkouts import fake_checkout, fake_cmsis_nn

    root = fake_checkout(tmp_path)        # no operators.yaml: the op check stops the run after the warning
    code, out, _ = run_cli(["run", str(near_zero_bpte), "--et-root", str(root), "--cmsis-nn",
                            str(fake_cmsis_nn(tmp_path)), "--cache-dir", str(tmp_path / "c"), "--skip-preflight",
                            "--atol", "0.01"])
    assert code == 2
    assert "cmlens: warning: the reference output is degenerate: every reference output is within" in out
    assert bundle_warnings(near_zero_bpte.read_bytes(), 0.0) == []
    assert not (tmp_path / "c" / "executorch").exists()


@pytest.mark.slow
def test_zoo_mobilenet_v2_is_not_degenerate() -> None:
    import torch

    from backend_core.stages.models.zoo import ZOO

    model, inputs, _ = ZOO["mv2"].build()
    with torch.no_grad():
        y = model(*inputs)
    assert float(y.abs().max()) > 0.1          # was 3.4e-9 with torchvision's init and fresh BatchNorm stats
    assert degenerate_reason(y.numpy(), 0.01) == ""


def test_a_zoo_change_invalidates_cached_lowerings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lowering cache key hashes backend_core's sources, models/ included (backend_core/stages/cache.py):
    cache.py's own code_fingerprint() run over a copy of the package, before and after a zoo edit."""
    from backend_core.stages import cache

    pkg = Path(cache.__file__).resolve().parents[1]
    copy = tmp_path / "backend_core"
    shutil.copytree(pkg, copy, ignore=shutil.ignore_patterns("__pycache__"))

    def fingerprint() -> str:          # the real function, uncached, reading the copy's files
        monkeypatch.setattr(cache, "__file__", str(copy / "stages" / "cache.py"))
        return cache.code_fingerprint.__wrapped__()

    before = fingerprint()
    for name in ("random_init.py", "zoo.py"):
        f = copy / "stages" / "models" / name
        f.write_text(f.read_text() + "\n# edited\n")
        after = fingerprint()
        assert after != before, name
        before = after


def test_output_step_and_the_fail_hint_of_a_lut_activation() -> None:
    """conv -> GELU -> upsample: on QEMU M55 the target matched the lowered program bit for bit on every
    layer, and the bundle FAILed at atol 0.01 with max abs error 0.029176 = 2 output steps (the LUT GELU of
    the lowering vs the float GELU of the PT2E reference: 4 of 2048 outputs)."""
    from backend_core.lowering.lower import LowerOutputs, lower
    from backend_core.stages.pipeline.reference_check import fail_hint, output_steps
    from executorch.exir._serialize._program import deserialize_pte_binary

    res = lower(str(FIXTURES / "gelu_upsample_cl.py"), outputs=LowerOutputs(pte=True))
    steps = output_steps(deserialize_pte_binary(res.blobs["model.pte"]).program)
    assert len(steps) == 1 and steps[0] == pytest.approx(0.014587787, rel=1e-6)
    hint = fail_hint(0.029176, steps, 0)
    assert hint.startswith("the largest error is 2.0 output quantization step(s) (scale 0.01459)")
    assert hint.endswith("rerun with --qtol 2")
    assert fail_hint(0.5, steps, 0) == ""                   # 34 steps off: beyond any ExecuTorch test tolerance
    assert output_steps(None) == []


def test_numerics_note_degenerate_reference_outputs() -> None:
    from tests.helpers.numerics_job import numerics_job

    r = numerics_job(str(FIXTURES / "near_zero_linear.py"), 1).numerics
    assert any("output 0: every reference output" in n or "output 0: all" in n for n in r.notes), r.notes
    assert any("these numerics compare near-constant outputs" in n for n in r.notes)
