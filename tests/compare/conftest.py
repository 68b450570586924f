"""Compare tests lower real models (small ones: the v1/v2 tiny_net fixtures, the teaching models)
with the real pipeline into the session's private cache, once each; the CLI tests then hit that cache."""
from __future__ import annotations

from pathlib import Path

import pytest

MODELS = Path(__file__).parent / "models"
V1 = MODELS / "v1" / "tiny_net.py"          # before the edit
V2 = MODELS / "v2" / "tiny_net.py"          # conv2 widened 8 -> 16, a LayerNorm added (line 22)
NCHW = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "conv_relu_nchw.py"

_SIDES: dict = {}


@pytest.fixture(scope="session")
def side():
    """side("SOURCE@opts", **defaults) -> backend_core.orchestration.compare.sides.Side, loaded once per session."""
    pytest.importorskip("executorch")
    from backend_core.orchestration.compare.sides import load_side, parse_side

    def get(text: str, **defaults):
        key = (text, tuple(sorted(defaults.items())))
        if key not in _SIDES:
            _SIDES[key] = load_side(parse_side(text, defaults), text)
        return _SIDES[key]
    return get


@pytest.fixture(scope="session")
def plain_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny_net v1 lowered by ExecuTorch's own API (export, CortexMQuantizer, to_edge,
    CortexMPassManager, to_executorch): a bare .pte without any provenance."""
    pytest.importorskip("executorch")
    from tests.artefacts.plain_flow import make_from_file

    return make_from_file(V1, tmp_path_factory.mktemp("plain_v1")).pte
