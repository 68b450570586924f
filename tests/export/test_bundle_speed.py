"""The bundle's report shows the time estimate (issue 43): from a cached profile of the same program and
CPU, the headline with its ±E %, the board and clock used, the sources of error and the ops' ≈ ms, in
bundle.json and README.md; with none cached, the command that makes one."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend_core.orchestration.jobs.steps.export_speed import bundle_speed
from backend_core.target.build.ops import program_bytes
from backend_core.target.export import BundleSpec, write_bundle
from backend_core.target.profile.model import Profile
from backend_core.target.profile.store import ProfileStore, program_key

BPTE = Path(__file__).resolve().parents[1] / "judge" / "fixtures" / "ds_cnn_m55.bpte"
PROFILE = Path(__file__).resolve().parents[1] / "timing" / "fixtures" / "run_profile_layernorm_mlp_stm32l4r5.json"


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CMLENS_CACHE", str(tmp_path / "cache"))
    return tmp_path


def _bundle(tmp: Path, speed: dict) -> Path:
    spec = BundleSpec("ds_cnn", "cortex-m4", tmp / "executorch", "0" * 40, None, "dbf45dbf",
                      "cmlens export ds_cnn -o b", speed=speed)
    return write_bundle(program_bytes(BPTE.read_bytes()), spec, tmp / "bundle", bpte=BPTE.read_bytes()).folder


def test_a_cached_profile_puts_the_estimate_in_the_report(cache: Path) -> None:
    pte = program_bytes(BPTE.read_bytes())
    ProfileStore().put(program_key(pte), Profile.from_dict(json.loads(PROFILE.read_text())["profile"]),
                       {"model": "ds_cnn", "commit": "abc123", "qemu_board": "mps2-an386"})
    speed = bundle_speed(pte, "cortex-m4", "stm32l4r5", "ds_cnn")
    e = speed["estimate"]
    assert e["board"] == "stm32l4r5" and e["clock_mhz"] == 120 and e["error_pct"] is not None
    assert speed["instructions"] == 10069 and speed["top_ops"][0]["ms"] > 0
    folder = _bundle(cache, speed)
    info = json.loads((folder / "bundle.json").read_text())
    assert info["speed"]["estimate"]["headline"] == e["headline"]
    readme = (folder / "README.md").read_text()
    assert "## Speed (estimate)" in readme and e["headline"] in readme
    assert f"±{e['error_pct']:.0f} %" in readme and "@ 120 MHz on stm32l4r5" in readme
    assert "flash wait states" in readme and "an estimate, not a measurement" in readme
    assert "commit abc123" in readme and "| `cortex_m_quantized_linear_default` |" in readme


def test_no_cached_profile_says_how_to_get_one(cache: Path) -> None:
    pte = program_bytes(BPTE.read_bytes())
    speed = bundle_speed(pte, "cortex-m85", "ra8d1", "ds_cnn")
    assert speed["estimate"] is None and speed["cpu"] == "cortex-m55"
    assert "cmlens run ds_cnn --board ra8d1 --profile" in speed["how"]
    readme = (_bundle(cache, speed) / "README.md").read_text()
    assert "## Speed (estimate)" in readme and "No profile of this program on cortex-m55 is cached" in readme
    assert "--target cortex-m55" in bundle_speed(pte, "cortex-m55", None, "ds_cnn")["how"]
