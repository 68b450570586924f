"""The third wave on QEMU Cortex-M55 after `run --keep-going` (issue 46), opt-in twice over (CMLENS_TEST_REALWORLD=1
and CMLENS_TEST_ET_ROOT, braindecode on PYTHONPATH): EEGInceptionERP, whose float `padding="same"` convs pad
channels-last tensors on the portable pad (pre-flight: pad-layout-ignored, mended by dim-order copies) PASSes bit
for bit; ATCNet's kept-going program builds its bundle (a cortex_m div fed by a bmm left in float is left in
float too) and PASSes, in no more rounds than it has distinct causes."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .conftest import opt_in, source3

pytestmark = [opt_in, pytest.mark.skipif(importlib.util.find_spec("braindecode") is None,
                                         reason="needs braindecode on PYTHONPATH")]


def test_eeginception_erp_kept_going_passes_bit_for_bit(tmp_path: Path) -> None:
    from tests.helpers.target_run import run_on_m55_or_skip

    r = run_on_m55_or_skip(source3("eeginception_erp"), tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
    assert "bit for bit" in r.summary()


def test_atcnet_kept_going_builds_its_bundle_and_passes(tmp_path: Path) -> None:
    from tests.helpers.target_run import run_on_m55_or_skip

    r = run_on_m55_or_skip(source3("atcnet"), tmp_path, keep_going=True)
    assert r.outcome == "PASS", r.summary()
