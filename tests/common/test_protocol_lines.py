"""A worker's stage message is one line of JSON, megabytes long for a real model (timm's ghostnet_050:
2.7 MB, 1,451 nodes). The reader the window uses must hand it over whole, whatever the chunking:
at a 1 MiB limit such stages were cut into unreadable pieces and the window kept stages 1-9 "pending"."""
from __future__ import annotations

import json

from backend_core.common.protocol import STAGE, TOOL_LINE_LIMIT, LineSplitter, parse_line


def _stage_line(nodes: int) -> bytes:
    snap = {"stage": "edge", "index": 2, "kind": "edge",
            "nodes": [{"id": f"n{i}", "name": f"aten_conv2d_default_{i}", "stack": "x" * 1500} for i in range(nodes)]}
    return (json.dumps({"type": STAGE, "snapshot": snap}) + "\n").encode()


def test_a_three_megabyte_stage_arrives_whole_in_64_kib_chunks() -> None:
    line = _stage_line(1800)
    assert len(line) > 2_700_000
    split = LineSplitter()
    out: list[str] = []
    for i in range(0, len(line), 65536):                    # QProcess hands over pipe-sized pieces
        out += split.feed(line[i:i + 65536])
    assert len(out) == 1
    msg = parse_line(out[0])
    assert msg is not None and len(msg["snapshot"]["nodes"]) == 1800


def test_tool_streams_still_cut_a_line_without_end() -> None:
    """A runner printing megabytes without a newline is still emitted in pieces (no unbounded buffer)."""
    split = LineSplitter(TOOL_LINE_LIMIT)
    out = split.feed(b"x" * (TOOL_LINE_LIMIT + 10))
    assert len(out) == 1 and len(out[0]) == TOOL_LINE_LIMIT + 10
