"""Rules measured on the target rather than read from a runtime check: configurations whose CMSIS-NN
kernel gave wrong numbers in the conformance run (bench/conformance_qemu.py, ExecuTorch's own Cortex-M
test cases on QEMU M55) while the same lowered program is right on the host (the cortex_m ops' Python
reference). They are "may fail": the cause is not located in a source line yet."""
from __future__ import annotations

import re

from backend_core.common.snapshot.model import GraphSnapshot, NodeSnapshot
from backend_core.common.finding import MAY_FAIL, Finding
from backend_core.analyses.preflight.kernel_rules import schema_arg_names

_INTS = re.compile(r"-?\d+")


def _int_list(node: NodeSnapshot, name: str) -> list[int] | None:
    names = schema_arg_names(node.schema)
    if name not in names or names.index(name) >= len(node.args):
        return None
    return [int(x) for x in _INTS.findall(node.args[names.index(name)])]


def _transpose_conv(node: NodeSnapshot) -> Finding | None:
    """ConvTranspose2d(stride=2, padding=1) on CMSIS-NN: 3 of 3 conformance cases off by up to 255
    quantization steps on QEMU M55 (conv_transpose2d_relu, conv_transpose2d_hardtanh,
    models.test_nn_modules conv_transpose2d); stride 2 without padding and padding 1 with stride 1 PASS."""
    stride, padding = _int_list(node, "stride"), _int_list(node, "padding")
    if not stride or not padding or max(stride) <= 1 or max(padding) <= 0:
        return None
    return Finding(
        node=node.id, rule="transpose-conv-stride-padding",
        message=(f"{node.target} with stride {stride} and padding {padding}: on QEMU Cortex-M55 the CMSIS-NN "
                 "transpose convolution gave outputs up to 255 quantization steps off the reference in every "
                 "such case of ExecuTorch's own tests, while the same program is exact on the host. Expect "
                 "wrong numbers (a BundleIO FAIL), not a crash."),
        fix=("Use padding=0 and crop the output in the model (a slice after the transpose conv), or stride 1; "
             "check the result with `cmlens run` (BundleIO) or `cmlens numerics`."),
        certainty=MAY_FAIL,
        evidence=(f"stride = {stride}", f"padding = {padding}",
                  "measured: bench/conformance_qemu.py on QEMU M55, CMSIS-NN dbf45dbf, ExecuTorch main 2026-08-22"),
        op=node.target, source="backends/cortex_m/ops/op_quantized_transpose_conv2d.cpp (arm_transpose_conv_s8)")


MEASURED = {"cortex_m.quantized_transpose_conv2d.default": _transpose_conv}


def measured_findings(final: GraphSnapshot) -> list[Finding]:
    out = []
    for node in final.nodes:
        rule = MEASURED.get(node.target)
        if rule is not None:
            f = rule(node)
            if f is not None:
                out.append(f)
    return out
