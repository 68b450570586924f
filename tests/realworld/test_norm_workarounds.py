"""Target workarounds of issue 38 on a small DenseNet/FPN/DeepLab-like block: portable batch and group norms on
channels-last input (the pre-flight's needs-contiguous: InvalidArgument on the target) run on NCHW copies in
--keep-going, and a dilated conv's int8 host reference is computed, so the .bpte is built. The QEMU run is
opt-in (an ExecuTorch checkout); DenseNet-40 and DeepLabV3+ PASSed bit-exact on QEMU M55 this way."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend_core.stages.fallback.rewrites import NORMS_CONTIGUOUS
from backend_core.stages.pipeline.stages import PipelineOptions

from tests.helpers.target_run import run_on_m55_or_skip

MODEL = str(Path(__file__).resolve().parents[1] / "fixtures" / "models" / "preact_dilated.py") + ":model"


def _lower(keep_going: bool) -> Any:
    from backend_core.orchestration.jobs.steps.lower import lower_source
    from backend_core.lowering.lower import LowerOutputs

    return lower_source(MODEL, PipelineOptions(calib=2, keep_going=keep_going), use_cache=False, outputs=LowerOutputs(bpte=True))


@pytest.fixture(scope="module")
def plain() -> Any:
    return _lower(False)


@pytest.fixture(scope="module")
def kept() -> Any:
    return _lower(True)


def test_preflight_says_the_norms_will_fail(plain: Any) -> None:
    from backend_core.analyses.preflight import findings_of

    assert plain.status == "done", plain.error
    rules = {(f.rule, f.op) for f in findings_of(plain.final) if f.certain}
    assert ("needs-contiguous", "aten._native_batch_norm_legit_no_training.default") in rules, rules
    assert any(r == "needs-contiguous" and "group_norm" in op for r, op in rules), rules


def test_dilated_conv_has_a_host_reference(plain: Any) -> None:
    """The bundle (expected outputs from the lowered program on the host) is built: it raised
    '"slow_conv_dilated<>" not implemented for 'Int'' before."""
    assert plain.blobs.get("model.bpte"), plain.error


def test_keep_going_runs_the_norms_on_nchw_copies(kept: Any) -> None:
    from backend_core.analyses.preflight import findings_of

    assert kept.status == "done", kept.error
    assert NORMS_CONTIGUOUS in kept.verdicts["rewrites"]
    assert not [f.line() for f in findings_of(kept.final) if f.certain]
    assert kept.blobs.get("model.bpte")


def test_keep_going_passes_on_qemu_m55(tmp_path: Path) -> None:
    res = run_on_m55_or_skip(MODEL, tmp_path, keep_going=True)
    assert res.outcome == "PASS", res


def test_a_failing_rewrite_is_reported_as_the_tools_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash in the tool's own workaround (the YOLO run's deepcopy of a fake tensor) is not 'exporting the
    float model failed': the message names the rewrite and says the export itself succeeded."""
    from backend_core.common.errors import StageFailedError
    from backend_core.stages.fallback import rewrites
    from backend_core.stages.models import load_model, parse_model_source
    from backend_core.stages.pipeline import LoweringPipeline

    def broken(ep: Any) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor (e.g. FakeTensor)")

    monkeypatch.setitem(rewrites.REWRITES, NORMS_CONTIGUOUS, (broken, "test"))
    pipe = LoweringPipeline(load_model(parse_model_source(MODEL)), PipelineOptions(calib=1),
                            float_rewrite=rewrites.compose([NORMS_CONTIGUOUS]))
    with pytest.raises(StageFailedError) as ei:
        list(pipe.run())
    msg = ei.value.message
    assert f"The tool's own rewrite '{NORMS_CONTIGUOUS}' failed" in msg and "Cannot access data pointer" in msg
    assert "Exporting the float model failed" not in msg and "not of your model" in ei.value.hint


def test_export_leaves_no_fake_tensor_on_the_module() -> None:
    """ultralytics' Detect caches anchors on itself in forward(): after the tool's export they are the
    module's own tensors again, so a second export (a keep-going round) can be copied."""
    import copy

    import torch

    from backend_core.stages.pipeline.export_guards import module_attributes_kept

    class Caching(torch.nn.Module):       # Detect's pattern: anchors made on the first call, kept by shape
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if getattr(self, "shape", None) != x.shape:
                self.anchors, self.shape = torch.arange(x.shape[-1], dtype=x.dtype), x.shape
            return x + self.anchors

    m, x = Caching(), (torch.randn(2, 4),)
    with module_attributes_kept(m):
        torch.export.export(m, x)
    assert not hasattr(m, "anchors") and not hasattr(m, "shape")
    with module_attributes_kept(m):
        again = torch.export.export(m, x)
    copy.deepcopy(again)          # raised "Cannot access data pointer" before
