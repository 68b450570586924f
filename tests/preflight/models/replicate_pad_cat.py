"""A U-Net decoder step as MONAI's BasicUNet writes it (issue 46): an upsampling conv's output padded with
`F.pad(..., "replicate")` to the skip's size, then concatenated with the skip, channels-last input.
torch.export writes the replicate pad as two aten.index.Tensor (advanced indexing); on a channels-last
tensor they write the dim orders (0, 3, 2, 1) and (0, 2, 1, 3), which op_index.cpp refuses (its input must
be contiguous and share the output's dim order) and which no `_clone_dim_order` can make: to_executorch maps
a copy's dim order to a memory format, contiguous or channels-last only."""
import torch
import torch.nn.functional as F
from torch import nn


class ReplicatePadCat(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.skip = nn.Conv2d(4, 8, 3, padding=1)
        self.down = nn.Conv2d(4, 8, 3, stride=2)
        self.fuse = nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.relu(self.skip(x))                       # [1, 8, 8, 8]
        d = torch.relu(self.down(x))                       # [1, 8, 3, 3]
        u = F.interpolate(d, scale_factor=2.0, mode="nearest")   # [1, 8, 6, 6]
        u = F.pad(u, [0, 2, 0, 2], "replicate")            # to the skip's 8 x 8
        return self.fuse(torch.cat([s, u], dim=1))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return ReplicatePadCat().eval()


def get_example_inputs() -> tuple:
    torch.manual_seed(1)
    return (torch.randn(1, 4, 8, 8).to(memory_format=torch.channels_last),)
