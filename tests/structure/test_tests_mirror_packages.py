"""The tests mirror the packages (issue 45): each package of backend_core's tiers has its own test folder
under tests/, named after it, so a change to a package finds its tests by name. `build` is the one
exception in spelling: pytest never collects a folder called `build` (its default norecursedirs), so
target/build's tests live in tests/target_build."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIERS = ("common", "stages", "target", "analyses", "lowering", "orchestration")
SPELLING = {"build": "target_build"}


def core_packages() -> list[str]:
    return sorted(p.name for tier in TIERS for p in (ROOT / "backend_core" / tier).iterdir()
                  if p.is_dir() and (p / "__init__.py").exists())


def test_every_core_package_has_a_test_folder_of_its_name() -> None:
    packages = core_packages()
    assert len(packages) >= 25, packages
    missing = [p for p in packages
               if not any((ROOT / "tests" / SPELLING.get(p, p)).glob("test_*.py"))]
    assert not missing, f"core packages without tests/<package>/test_*.py: {missing}"


def test_no_catch_all_test_folders_are_left() -> None:
    for old in ("core", "runner_build"):
        assert not (ROOT / "tests" / old).exists(), f"tests/{old} is back: put its tests beside their package's"
