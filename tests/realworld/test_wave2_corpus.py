"""The second real-world wave (issue 38) end to end, opt-in (minutes per model; CMLENS_TEST_REALWORLD=1 and the
libraries on PYTHONPATH): every model lowers (with --keep-going when plain ExecuTorch fails) with 0 unknown
reasons and, when it lowers as given, the same portable ops as plain ExecuTorch; on QEMU M55
(CMLENS_TEST_ET_ROOT) the models the pre-flight says will fail PASS after --keep-going."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from backend_core.stages.pipeline.stages import PipelineOptions

from tests.helpers.target_run import run_on_m55_or_skip

from .conftest import MODELS2, bench_module, opt_in, source2

sys.path.insert(0, str(MODELS2.parent))
from realworld_models2 import CORPUS

pytestmark = opt_in
DATA_MOVEMENT = {"cat", "expand_copy", "permute_copy", "select_copy", "slice_copy", "t_copy", "transpose_copy",
                 "squeeze_copy", "unsqueeze_copy", "_to_dim_order_copy", "split_with_sizes_copy", "split_copy"}


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_lowers_like_plain_executorch_with_no_unknown(name: str) -> None:
    if not _have(CORPUS[name]):
        pytest.skip(f"needs {CORPUS[name]} on PYTHONPATH")
    from backend_core.orchestration.jobs.steps.lower import lower_source

    bench = bench_module()
    bench.MODELS_FILE = MODELS2                    # its plain ExecuTorch side, on this wave's models
    plain = bench.plain(name, calib=2)
    res = lower_source(source2(name), PipelineOptions(calib=2, keep_going=not plain["ok"]), use_cache=False)
    assert res.status == "done", res.error
    cats = [n.fallback.category for n in res.fallbacks()]
    assert "unknown" not in cats, [(n.target, n.fallback.message) for n in res.fallbacks()
                                   if n.fallback.category == "unknown"]
    if plain["ok"]:
        from collections import Counter

        # data movement is not a compute fallback (written out here, as tests/fallback/test_fallbacks.py does)
        compute = Counter({op: k for op, k in plain["ops"].items() if op.split(".")[1] not in DATA_MOVEMENT})
        assert Counter(n.target for n in res.fallbacks()) == compute


# every model of the corpus whose pre-flight says "will fail" as plain ExecuTorch lowers it
WILL_FAIL = ["densenet40", "deeplabv3plus", "yolo_det", "yolo_seg", "fpn", "fastscnn", "sinet", "cgnet", "unet",
             "vit_eager"]


@pytest.mark.parametrize("name", WILL_FAIL)
def test_kept_going_passes_on_qemu_m55(name: str, tmp_path: Path) -> None:
    if not _have(CORPUS[name]):
        pytest.skip(f"needs {CORPUS[name]} on PYTHONPATH")
    res: Any = run_on_m55_or_skip(source2(name), tmp_path, keep_going=True)
    assert res.outcome == "PASS", res.summary()
    assert "bit for bit" in res.summary()
