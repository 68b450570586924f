"""The near miss of issue 21: ExecuTorch's own "channel" case (backends/cortex_m/test/ops/test_mean.py,
fallback_test_cases): `x.mean(dim=1, keepdim=True)` on a channels-last [1, 8, 4, 4] input. The final graph
shows aten.mean.dim reading a channels-last tensor into a contiguous output, which the portable kernel
rejects (op_mean.cpp:39) -- but to_executorch's LegalizePortableDimOrderPass puts a contiguous
_to_dim_order_copy before it, so the program the runtime loads is fine: PASS on QEMU M55, bit-exact."""
import torch


class ChannelMean(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1, keepdim=True)


def get_model() -> torch.nn.Module:
    return ChannelMean().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 8, 4, 4).to(memory_format=torch.channels_last),)
