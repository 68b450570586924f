"""ExecuTorch's own Cortex-M test cases (the `McuTestCase`s of backends/cortex_m/test/ops and
models in the installed wheel) as model sources for `backend_core.lowering.lower`:
`tests/corpus/et_cases.py:test_conv__conv2d_nchw` is case "conv2d_nchw" of test_conv.py.

Cases are collected from every module-level dict of McuTestCases. Modules that cannot be
imported here are listed in `skipped()` with the reason (pretrained weights, optional packages).
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Any

PACKAGES = ("executorch.backends.cortex_m.test.ops", "executorch.backends.cortex_m.test.models")
SEP = "__"

# Modules whose cases cannot be built on a machine without network or optional packages.
KNOWN_SKIPS = {
    "test_mobilenet_v2": "needs torchvision's pretrained MobileNetV2 weights (no download possible)",
    "test_mobilenet_v3": "needs torchvision's pretrained MobileNetV3 weights (no download possible)",
    "test_wav2letter": "needs torchaudio (not installed)",
    "test_yolo11": "needs ultralytics (not installed)",
}


@lru_cache(maxsize=1)
def _collect() -> tuple[dict[str, Any], dict[str, str]]:
    from executorch.backends.cortex_m.test.tester import McuTestCase

    cases: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if not info.name.startswith("test_"):
                continue
            if info.name in KNOWN_SKIPS:
                skipped[info.name] = KNOWN_SKIPS[info.name]
                continue
            try:
                mod = importlib.import_module(f"{pkg_name}.{info.name}")
            except BaseException as e:  # noqa: BLE001 - pytest.importorskip raises Skipped
                skipped[info.name] = f"{type(e).__name__}: {str(e)[:120]}"
                continue
            for value in vars(mod).values():
                if isinstance(value, dict) and value and all(isinstance(v, McuTestCase) for v in value.values()):
                    for key, case in value.items():
                        cases.setdefault(f"{info.name}{SEP}{key}", case)
    return cases, skipped


def case_names() -> list[str]:
    return list(_collect()[0])


def skipped() -> dict[str, str]:
    return dict(_collect()[1])


def case(name: str) -> tuple[Any, tuple]:
    """(model, example inputs) of one case, exactly as ExecuTorch's test feeds them."""
    c = _collect()[0][name]
    return c.model.eval(), tuple(c.get_example_inputs())


def source(name: str) -> str:
    """The `file.py:NAME` model source that lowers this case."""
    return f"{__file__}:{name}"


def __getattr__(name: str) -> Any:
    """`file.py:NAME` loading: NAME is a case name; the loader calls it for (model, inputs)."""
    if name.startswith("test_") and SEP in name:
        if name in _collect()[0]:
            return lambda: case(name)
    raise AttributeError(name)
