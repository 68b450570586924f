"""The profile cache (target/profile/store.py) and `cmlens profile MODEL --board B` without a checkout:
a profile with classes is kept under its program and CPU and gives the board's estimate later; nothing
cached and no checkout is exit 2 naming the fix; --board with --cpus is exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from backend_core.target.build.ops import program_bytes
from backend_core.target.profile.model import Profile
from backend_core.target.profile.store import ProfileStore, program_key

FIX = Path(__file__).parent / "fixtures" / "run_profile_layernorm_mlp_stm32l4r5.json"
PTE = Path(__file__).parents[1] / "artefacts" / "fixtures" / "ds_cnn_plain_m55_qemu_icount.pte"
MADE = {"model": "layernorm_mlp", "checkout": "/x/executorch", "commit": "abc123", "cmsis_nn": None,
        "qemu_board": "mps2-an386"}


def _profile() -> Profile:
    return Profile.from_dict(json.loads(FIX.read_text())["profile"])


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProfileStore:
    monkeypatch.setenv("CMLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("EXECUTORCH_ROOT", raising=False)
    return ProfileStore()


def test_stored_profile_comes_back_without_its_estimate(store: ProfileStore) -> None:
    prof = _profile()
    assert prof.estimate is not None
    path = store.put("k1", prof, MADE)
    assert path is not None and path.parent == store.folder
    got = store.get("k1", "cortex-m4")
    assert got is not None and got.profile.estimate is None and got.made["commit"] == "abc123"
    assert [o.classes for o in got.profile.ops] == [o.classes for o in prof.ops]
    assert "abc123" in got.describe() and "mps2-an386" in got.describe()
    assert store.get("k1", "cortex-m55") is None and store.get("k2", "cortex-m4") is None


def test_no_classes_nothing_stored_and_a_broken_entry_is_a_miss(store: ProfileStore) -> None:
    prof = _profile()
    for o in prof.ops:
        o.classes = None
    assert store.put("k1", prof, MADE) is None and store.get("k1", "cortex-m4") is None
    store.folder.mkdir(parents=True, exist_ok=True)
    store.path("k2", "cortex-m4").write_text("{not json")
    assert store.get("k2", "cortex-m4") is None
    store.path("k3", "cortex-m4").write_text(json.dumps({"format": 1, "key": "other", "cpu": "cortex-m4",
                                                          "profile": {}}))
    assert store.get("k3", "cortex-m4") is None


def test_profile_board_uses_the_cache_without_a_checkout(store: ProfileStore, capsys: pytest.CaptureFixture,
                                                         tmp_path: Path) -> None:
    key = program_key(program_bytes(PTE.read_bytes()))
    prof = _profile()
    prof.target = "cortex-m4"
    store.put(key, prof, MADE)
    out = tmp_path / "p.json"
    assert main(["profile", str(PTE), "--board", "stm32l4r5", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cached profile of layernorm_mlp" in text and "commit abc123" in text
    assert "ms @ 120 MHz on stm32l4r5" in text
    data = json.loads(out.read_text())
    est = data["profiles"][0]["estimate"]
    assert est["board"] == "stm32l4r5" and est["clock_mhz"] == 120 and data["runs"]["cortex-m4"]["outcome"] == "CACHED"
    assert all(r["ms"] is not None for r in data["profiles"][0]["ops"])
    assert main(["profile", str(PTE), "--board", "stm32l4r5", "--clock-mhz", "80"]) == 0     # the user's clock
    assert "@ 80 MHz on stm32l4r5" in capsys.readouterr().out


def test_nothing_cached_and_no_checkout_is_exit_2_with_the_fix(store: ProfileStore,
                                                              capsys: pytest.CaptureFixture) -> None:
    assert main(["profile", str(PTE), "--board", "stm32l4r5"]) == 2
    err = capsys.readouterr().err
    assert "No cached profile" in err and "--et-root PATH" in err and "cached" in err


def test_board_with_cpus_or_an_unknown_board_is_exit_2(store: ProfileStore, capsys: pytest.CaptureFixture) -> None:
    assert main(["profile", str(PTE), "--board", "stm32l4r5", "--cpus", "m4"]) == 2
    assert "--board and --cpus" in capsys.readouterr().err
    assert main(["profile", str(PTE), "--board", "no-such-board"]) == 2
