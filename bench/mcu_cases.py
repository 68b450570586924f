"""ExecuTorch's own Cortex-M test cases as `cmlens run` models: `cmlens run bench/mcu_cases.py:NAME`,
NAME a case of one of MODULES (e.g. avgpool_2x2_pad1, spatial, conv_relu6_avgpool), so a single case
can be run with --etdump like any model (bench/conformance_qemu.py runs the whole corpus without it).
Only these modules are imported: the mobilenet_v2/v3 test modules try to download weights."""
from __future__ import annotations

import importlib
from typing import Any, Callable

MODULES = ("ops.test_avg_pool2d", "ops.test_mean", "ops.test_nhwc_pool", "models.test_nn_modules",
           "models.test_nn_functional", "models.test_resnet8")


def _find(name: str) -> Any:
    from executorch.backends.cortex_m.test.tester import McuTestCase

    for short in MODULES:
        mod = importlib.import_module(f"executorch.backends.cortex_m.test.{short}")
        for value in vars(mod).values():
            if isinstance(value, dict) and isinstance(value.get(name), McuTestCase):
                return value[name]
    raise AttributeError(name)


def __getattr__(name: str) -> Callable[[], tuple]:
    if name.startswith("__"):
        raise AttributeError(name)
    case = _find(name)
    return lambda: (case.model.eval(), tuple(case.get_example_inputs()))
