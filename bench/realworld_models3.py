"""The third real-world wave (issue 46): the workloads microcontrollers run beyond images — EEG decoding and
sleep staging (braindecode), a streaming TCN (pytorch-tcn), medical segmentation (MONAI), speech separation,
recognition and speaker embedding (torchaudio, speechbrain), and two sequence models of our own (an LSTM
keyword spotter, a CNN + GRU activity recogniser). Random seeded weights, no downloads, all < 1 M parameters,
small inputs. Use as `cmlens lower bench/realworld_models3.py:eegnet`.

The libraries are not in the venv: install them into a folder outside it and put that on PYTHONPATH:
  pip install --no-deps --target DIR -c constraints.txt braindecode==1.8.1 skorch mne mne-bids pydantic \
      pydantic-core annotated-types typing-inspection einops torchinfo h5py wfdb docstring-inheritance \
      linear-attention-transformer local-attention hyper-connections linformer product-key-memory \
      colt5-attention axial-positional-embedding lazy-loader pooch platformdirs decorator tabulate \
      pytorch-tcn==1.2.3 monai==1.6.1 torchaudio==2.11.1 speechbrain==1.1.2 hyperpyyaml ruamel.yaml
  PYTHONPATH=DIR cmlens lower bench/realworld_models3.py:ecapa_tdnn
"""
from __future__ import annotations

from typing import Any, Callable

# name -> the library it needs (tests skip a model whose library is not importable)
CORPUS = {
    "eegnet": "braindecode", "shallow_fbcsp": "braindecode", "deep4": "braindecode",
    "eeginception_erp": "braindecode", "atcnet": "braindecode",
    "sleep_chambon": "braindecode", "sleep_blanco": "braindecode", "usleep": "braindecode",
    "tcn_stream": "pytorch_tcn",
    "basic_unet": "monai", "densenet_small": "monai", "segresnet": "monai",
    "convtasnet": "torchaudio", "conformer_asr": "torchaudio",
    "ecapa_tdnn": "speechbrain",
    "lstm_kws": "torch", "cnn_gru_har": "torch",
}


def _seed() -> Any:
    import torch

    torch.manual_seed(0)
    return torch


def _randn(*shape: int) -> tuple:
    import torch

    return (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)


# ---- EEG (braindecode): 8 electrodes, 128-1000 samples; in eval mode, as an MCU runs them --------------

def eegnet() -> tuple[Any, tuple]:
    """EEGNet-v4: its spatial convolution applies a max-norm constraint to its weight in forward."""
    _seed()
    from braindecode.models import EEGNet

    return EEGNet(n_chans=8, n_outputs=4, n_times=128).eval(), _randn(1, 8, 128)


def shallow_fbcsp() -> tuple[Any, tuple]:
    """ShallowFBCSPNet: square / mean-pool / log, a max-norm constrained temporal-spatial convolution."""
    _seed()
    from braindecode.models import ShallowFBCSPNet

    model = ShallowFBCSPNet(n_chans=8, n_outputs=4, n_times=256, n_filters_time=16, n_filters_spat=16)
    return model.eval(), _randn(1, 8, 256)


def deep4() -> tuple[Any, tuple]:
    """Deep4Net: four conv-pool blocks, the first with a max-norm constrained split convolution."""
    _seed()
    from braindecode.models import Deep4Net

    model = Deep4Net(n_chans=8, n_outputs=4, n_times=512, n_filters_time=8, n_filters_spat=8, n_filters_2=16,
                     n_filters_3=32, n_filters_4=64)
    return model.eval(), _randn(1, 8, 512)


def eeginception_erp() -> tuple[Any, tuple]:
    """EEG-Inception for event-related potentials: inception blocks of padded temporal convolutions."""
    _seed()
    from braindecode.models import EEGInceptionERP

    return EEGInceptionERP(n_chans=8, n_outputs=2, n_times=128, sfreq=128).eval(), _randn(1, 8, 128)


def atcnet() -> tuple[Any, tuple]:
    """ATCNet: a conv block, sliding windows of multi-head attention and a TCN per window."""
    _seed()
    from braindecode.models import ATCNet

    model = ATCNet(n_chans=8, n_outputs=4, input_window_seconds=2.0, sfreq=250.0, conv_block_n_filters=8,
                   n_windows=3, num_heads=2, head_dim=4)
    return model.eval(), _randn(1, 8, 500)


def sleep_chambon() -> tuple[Any, tuple]:
    """Chambon et al. 2018's sleep stager on 2 EEG channels, a 30 s window at 64 Hz."""
    _seed()
    from braindecode.models import SleepStagerChambon2018

    model = SleepStagerChambon2018(n_chans=2, sfreq=64, input_window_seconds=30, n_outputs=5)
    return model.eval(), _randn(1, 2, 30 * 64)


def sleep_blanco() -> tuple[Any, tuple]:
    """Blanco et al. 2020's sleep stager (grouped convolutions), 2 channels, 30 s at 64 Hz."""
    _seed()
    from braindecode.models import SleepStagerBlanco2020

    model = SleepStagerBlanco2020(n_chans=2, sfreq=64, input_window_seconds=30, n_outputs=5, n_conv_chans=8)
    return model.eval(), _randn(1, 2, 30 * 64)


def usleep() -> tuple[Any, tuple]:
    """U-Sleep (a 1-D U-Net) at depth 4 on 2 channels, 30 s at 64 Hz."""
    _seed()
    from braindecode.models import USleep

    model = USleep(n_chans=2, sfreq=64, depth=4, n_time_filters=5, input_window_seconds=30, n_outputs=5,
                   ensure_odd_conv_size=True)
    return model.eval(), _randn(1, 2, 30 * 64)


# ---- streaming time series ------------------------------------------------------------------------------

def tcn_stream() -> tuple[Any, tuple]:
    """pytorch-tcn's causal TCN with its default weight norm (a parametrization recomputed every inference)."""
    _seed()
    from pytorch_tcn import TCN

    model = TCN(num_inputs=8, num_channels=[16, 16, 16, 16], kernel_size=3, causal=True, output_projection=4)
    return model.eval(), _randn(1, 8, 64)


# ---- medical segmentation (MONAI, 2-D) ------------------------------------------------------------------

def basic_unet() -> tuple[Any, tuple]:
    _seed()
    from monai.networks.nets import BasicUNet

    model = BasicUNet(spatial_dims=2, in_channels=1, out_channels=2, features=(8, 8, 16, 32, 64, 8), norm="batch")
    return model.eval(), _randn(1, 1, 32, 32)


def densenet_small() -> tuple[Any, tuple]:
    """MONAI's DenseNet with a small growth rate and three dense blocks, a 1-channel 32x32 classifier."""
    _seed()
    from monai.networks.nets import DenseNet

    model = DenseNet(spatial_dims=2, in_channels=1, out_channels=3, init_features=16, growth_rate=8,
                     block_config=(2, 4, 4), bn_size=2)
    return model.eval(), _randn(1, 1, 32, 32)


def segresnet() -> tuple[Any, tuple]:
    """SegResNet (group norm) at 4 initial filters."""
    _seed()
    from monai.networks.nets import SegResNet

    model = SegResNet(spatial_dims=2, init_filters=4, in_channels=1, out_channels=2, num_groups=2,
                      norm=("GROUP", {"num_groups": 2}), blocks_down=(1, 1, 1), blocks_up=(1, 1))
    return model.eval(), _randn(1, 1, 32, 32)


# ---- speech ---------------------------------------------------------------------------------------------

def convtasnet() -> tuple[Any, tuple]:
    """torchaudio's Conv-TasNet speech separator, small: 2 sources from 1,024 samples (64 ms at 16 kHz)."""
    _seed()
    from torchaudio.models import ConvTasNet

    model = ConvTasNet(num_sources=2, enc_kernel_size=16, enc_num_feats=64, msk_kernel_size=3, msk_num_feats=32,
                       msk_num_hidden_feats=64, msk_num_layers=3, msk_num_stacks=1)
    return model.eval(), _randn(1, 1, 1024)


def conformer_asr() -> tuple[Any, tuple]:
    """torchaudio's Conformer encoder (speech recognition), 2 small layers on 40 mel bands x 32 frames, run on
    a whole clip: its layers without the padding mask, which torch.export cannot trace from lengths
    (data-dependent). torchaudio's Wav2Letter has no small configuration (23 M parameters)."""
    torch = _seed()
    from torchaudio.models import Conformer

    class FullClip(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conformer = Conformer(input_dim=40, num_heads=2, ffn_dim=64, num_layers=2,
                                       depthwise_conv_kernel_size=7)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.transpose(0, 1)
            for layer in self.conformer.conformer_layers:
                y = layer(y, None)
            return y.transpose(0, 1)

    return FullClip().eval(), _randn(1, 32, 40)


def ecapa_tdnn() -> tuple[Any, tuple]:
    """speechbrain's ECAPA-TDNN speaker embedder, small: 40 mel bands x 50 frames -> a 64-d embedding."""
    _seed()
    from speechbrain.lobes.models.ECAPA_TDNN import ECAPA_TDNN

    model = ECAPA_TDNN(40, lin_neurons=64, channels=[64, 64, 64, 64, 192], attention_channels=32,
                       res2net_scale=4, se_channels=32)
    return model.eval(), _randn(1, 50, 40)


# ---- sequence models of our own -------------------------------------------------------------------------

def _lstm_kws_class() -> type:
    import torch

    class LstmKws(torch.nn.Module):
        """A keyword spotter as MCU audio demos build it: 10 MFCCs x 49 frames, one LSTM, 12 keywords."""

        def __init__(self) -> None:
            super().__init__()
            self.lstm = torch.nn.LSTM(10, 64, batch_first=True)
            self.fc = torch.nn.Linear(64, 12)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out, _ = self.lstm(x)
            return self.fc(out[:, -1])

    return LstmKws


def _cnn_gru_class() -> type:
    import torch

    class CnnGruHar(torch.nn.Module):
        """An activity recogniser: 3-axis accelerometer x 128 samples, two 1-D convs, a GRU, 6 classes."""

        def __init__(self) -> None:
            super().__init__()
            self.conv1 = torch.nn.Conv1d(3, 16, 5, padding=2)
            self.conv2 = torch.nn.Conv1d(16, 32, 5, padding=2)
            self.pool = torch.nn.MaxPool1d(2)
            self.gru = torch.nn.GRU(32, 32, batch_first=True)
            self.fc = torch.nn.Linear(32, 6)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.pool(torch.relu(self.conv1(x)))
            y = self.pool(torch.relu(self.conv2(y)))
            out, _ = self.gru(y.permute(0, 2, 1))
            return self.fc(out[:, -1])

    return CnnGruHar


def lstm_kws() -> tuple[Any, tuple]:
    _seed()
    return _lstm_kws_class()().eval(), _randn(1, 49, 10)


def cnn_gru_har() -> tuple[Any, tuple]:
    _seed()
    return _cnn_gru_class()().eval(), _randn(1, 3, 128)


def build(name: str) -> tuple[Any, tuple]:
    fn: Callable[[], tuple[Any, tuple]] = globals()[name]
    return fn()
