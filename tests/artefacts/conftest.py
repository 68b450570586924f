"""Artefacts made once per session with plain ExecuTorch APIs (plain_flow.py), a private cache, and
the project's own lowering of the same models to compare with."""
from __future__ import annotations

from pathlib import Path

import pytest

from backend_core.target.simulate.uart import parse_uart

from .plain_flow import PlainArtefacts, make_artefacts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "target"

_MADE: dict[str, PlainArtefacts] = {}


@pytest.fixture(scope="session")
def plain(tmp_path_factory: pytest.TempPathFactory):
    """plain(zoo_name) -> PlainArtefacts (.pte, .bpte, .etrecord made by ExecuTorch's own APIs)."""
    pytest.importorskip("executorch")
    root = tmp_path_factory.mktemp("plain")

    def get(name: str) -> PlainArtefacts:
        if name not in _MADE:
            _MADE[name] = make_artefacts(name, root / name)
        return _MADE[name]
    return get


@pytest.fixture(scope="session")
def recorded_run(tmp_path_factory: pytest.TempPathFactory):
    """The ETDump + debug buffer of a real QEMU run (UART text) and the program that ran with its ETRecord
    (.pte, .bpte, .etrecord made with plain ExecuTorch APIs, tests/artefacts/plain_flow.make_from_file on
    tiny_conv_model.py), stored beside the recording: a re-lowering is not byte-identical on every machine
    (calibration's float rounding follows the CPU's vector unit), and the gaps are asserted bit-exact."""
    pytest.importorskip("executorch")
    import shutil

    from .plain_flow import PlainArtefacts

    work = tmp_path_factory.mktemp("run")
    block = parse_uart((FIXTURES / "uart_etdump_tiny_conv_pass_mps3-an547.txt").read_text()).etdumps[0]
    (work / "run.etdump").write_bytes(block.files["etdump.bin"])
    (work / "debug_buffer.bin").write_bytes(block.files["debug_buffer.bin"])
    stored = FIXTURES / "tiny_conv_recorded"
    for ext in ("pte", "bpte", "etrecord"):
        shutil.copy(stored / f"tiny_conv_model.{ext}", work / f"tiny_conv_model.{ext}")
    made = PlainArtefacts(work / "tiny_conv_model.pte", work / "tiny_conv_model.bpte",
                          work / "tiny_conv_model.etrecord", [])
    assert len(made.pte.read_bytes()) == 5932          # the runner logged "PTE Model data loaded. Size: 5932"
    return work, made
