"""A cache entry stores each repeated per-channel list once (format 7): the snapshots of a lowering come
back equal, the entry is smaller, and a reference to a list the entry does not hold is a bad entry (a
miss), not a crash."""
from __future__ import annotations

import json

import pytest

from backend_core.stages.cache import decode_payload, encode_payload
from backend_core.lowering.lower.entry import lower
from backend_core.stages.pipeline import PipelineOptions


@pytest.fixture(scope="module")
def snapshots() -> list:
    res = lower("ds_cnn", PipelineOptions(target="cortex-m55", calib=2), use_cache=False)
    assert res.status == "done"
    return list(res.snapshots)


def test_snapshots_come_back_equal_from_a_smaller_entry(snapshots: list) -> None:
    raw = encode_payload({"model": "ds_cnn", "snapshots": snapshots})
    back = decode_payload(raw)
    assert [s.to_dict() for s in back["snapshots"]] == [s.to_dict() for s in snapshots]
    naive = json.dumps({"snapshots": [s.to_dict() for s in snapshots]})
    assert len(raw) < 0.8 * len(naive), (len(raw), len(naive))
    assert json.loads(raw)["lists"]["__lists__"], "no per-channel list was shared"


def test_a_reference_to_a_list_the_entry_lacks_is_a_bad_entry(snapshots: list) -> None:
    raw = encode_payload({"model": "ds_cnn", "snapshots": snapshots}).decode()
    broken = raw.replace('"__lists__": [[', '"__lists__": [], "x": [[', 1)
    with pytest.raises(ValueError):
        decode_payload(broken.encode())
