"""The host reference computes a lowered program's float portable ops as the target does, with
ExecuTorch's portable kernels (judge/portable_refs.py), and the cortex_m quantize as CMSIS-NN's Helium
loop does (judge/kernel_refs.py). Before, the expected outputs of FPN (segmentation-models-pytorch,
`run --keep-going`, QEMU M55) came from PyTorch's group norm and bilinear upsampling, and a correct
target FAILed on 1 of 12,288 values."""
from __future__ import annotations

import copy

import numpy as np
import torch

from backend_core.target.judge.kernel_refs import FaithfulRun, cortex_m_quantize, target_faithful_run
from backend_core.target.judge.portable_refs import needs_portable


class _Decoder(torch.nn.Module):
    """FPN's segmentation block: conv, group norm, ReLU, bilinear upsampling, then a channel sum."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.norm = torch.nn.GroupNorm(8, 32)
        torch.nn.init.normal_(self.norm.weight)
        torch.nn.init.normal_(self.norm.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.norm(self.conv(x)))
        y = torch.nn.functional.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=True)
        return y.sum(dim=1, keepdim=True)


def test_float_portable_ops_are_computed_as_executorch_runs_them_not_as_pytorch_does() -> None:
    from executorch.exir import to_edge
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    torch.manual_seed(0)
    model = _Decoder().eval()
    x = torch.randn(1, 16, 8, 8)
    edge = to_edge(torch.export.export(model, (x,)))
    program = copy.deepcopy(edge.exported_program())       # to_executorch() rewrites the edge program in place
    assert any(needs_portable(n) for n in program.graph.nodes)
    buffer = edge.to_executorch().buffer
    runtime = _load_for_executorch_from_buffer(buffer).forward((x,))[0]      # ExecuTorch's own kernels
    with torch.no_grad():
        pytorch = program.module()(x)
    info = FaithfulRun()
    (faithful,), _ = target_faithful_run(program, (x,), "cortex-m55", info)

    assert (pytorch != runtime).any(), "PyTorch's kernels round as ExecuTorch's here: the test shows nothing"
    assert torch.equal(faithful, runtime)
    assert info.portable_nodes >= 3 and not info.portable_unavailable


def _boundary_values(inv: np.float32, n: int) -> np.ndarray:
    """Values x whose float32 product x * inv rounds onto an exact half step while the exact product does
    not: one rounding (fused multiply-add) and two (product, then nearbyint) give different integers."""
    rng = np.random.default_rng(0)
    found = []
    while len(found) < n:
        x = (rng.integers(-200, 200, 200_000) + 0.5) / inv + rng.normal(0, 1e-5, 200_000)
        x = x.astype(np.float32)
        product = x * inv
        exact = x.astype(np.float64) * np.float64(inv)
        found.extend(x[(np.rint(product) != np.rint(exact)) & (np.abs(exact) < 100)][: n - len(found)])
    return np.array(found, dtype=np.float32)


def test_cortex_m_quantize_rounds_as_the_helium_loop_on_whole_blocks_and_the_scalar_loop_on_the_tail() -> None:
    scale = 0.0464358441
    inv = np.float32(1.0) / np.float32(scale)
    tricky = _boundary_values(inv, 20)
    x = torch.from_numpy(tricky)                       # 20 values: one block of 16, a tail of 4
    m55 = cortex_m_quantize(x, scale, 0, -128, 127, torch.int8, helium=True)
    m4 = cortex_m_quantize(x, scale, 0, -128, 127, torch.int8, helium=False)
    fused = np.rint(tricky.astype(np.float64) * np.float64(inv))
    unfused = np.rint(tricky * inv)
    assert (fused != unfused).all()
    assert m55[:16].tolist() == np.clip(fused[:16], -128, 127).astype(int).tolist()
    assert m55[16:].tolist() == np.clip(unfused[16:], -128, 127).astype(int).tolist()
    assert m4.tolist() == np.clip(unfused, -128, 127).astype(int).tolist()
