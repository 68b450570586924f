"""One `cmlens run` lowers its model once. It used to lower it up to three times (the job's lower step,
the run step's model_file, the pre-flight gate): every lowering that asked for a .bpte missed the
cache, because the cache gave back only .pte/.bpte files and not the bundle's references.json."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend_core.lowering.lower import LowerOutputs, lower
from backend_core.stages.pipeline.stages import PipelineOptions
from tests.helpers.cli import run_cli
from tests.helpers.checkouts import fake_checkout, fake_cmsis_nn

MLP = Path(__file__).resolve().parents[1] / "sweep" / "models" / "mlp.py"


def _copy(tmp_path: Path) -> str:
    """A fresh model file: its own cache entry, so the first lowering is a real one."""
    path = tmp_path / "lower_once_mlp.py"
    shutil.copy(MLP, path)
    return str(path)


def test_a_bundle_lowering_is_a_cache_hit_the_second_time(tmp_path: Path) -> None:
    model = _copy(tmp_path)
    opts = PipelineOptions(target="cortex-m55")
    first = lower(model, opts, outputs=LowerOutputs(pte=True, bpte=True))
    second = lower(model, opts, outputs=LowerOutputs(pte=True, bpte=True))
    assert not first.from_cache and second.from_cache
    assert second.blobs["references.json"] == first.blobs["references.json"]
    assert second.blobs["model.bpte"] == first.blobs["model.bpte"]


@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="the run's simulator check needs QEMU")
@pytest.mark.parametrize("flags", [[], ["--etdump"]], ids=["bpte", "etdump"])
def test_cmlens_run_lowers_once(tmp_path: Path, flags: list[str]) -> None:
    """A real `cmlens run` of a model file, stopped by the op check against a checkout that registers no
    operator (after the run step has its .bpte, before any build): one lowering in its log. With
    --etdump the .bpte and ETRecord are made from the lower step's live programs (they were a second,
    uncached lowering)."""
    root = fake_checkout(tmp_path)
    code, out, err = run_cli(["run", _copy(tmp_path), "--et-root", str(root), "--cache-dir", str(tmp_path / "c"),
                              "--cmsis-nn", str(fake_cmsis_nn(tmp_path)), *flags])
    assert code != 0 and "ops:" in out, (out, err)           # it got as far as the op check
    if flags:
        assert "serialising the .bpte and its ETRecord" in out
    assert out.count("importing ExecuTorch") == 1, out
    assert out.count("AtenToCortexMPass") <= 1, out          # the pass list is not printed twice
