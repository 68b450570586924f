"""The interactive HTML file itself, without a browser: self-contained, small, summary first."""
from __future__ import annotations

import re

from tests.report.conftest import embedded_data


def test_lower_html_needs_no_network_and_no_other_file(layernorm) -> None:
    _, path = layernorm
    text = path.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.I), "a network resource"
    assert "<link" not in text.lower()
    assert not re.search(r"<script[^>]+src", text, re.I), "an external script"
    assert "@import" not in text and "url(http" not in text
    assert "<script>" in text and "GraphView" in text                   # the viewer's JS is inline


def test_static_summary_comes_before_the_viewer(layernorm) -> None:
    rep, path = layernorm
    text = path.read_text()
    summary = text.index("<h2>Fallbacks: 2</h2>")
    assert summary < text.index("<div id='viewer'>")
    for f in rep["fallbacks"]:                                          # readable without JavaScript
        assert f["node"] in text[summary:text.index("<div id='viewer'>")]
    assert "<h2>Pre-flight" in text and "<h2>Stages</h2>" in text


def test_the_file_holds_every_stage_and_the_inspector_data(layernorm) -> None:
    rep, path = layernorm
    data = embedded_data(path.read_text())
    (low,) = data["lowerings"]
    assert [s["name"] for s in low["stages"]] == [s["name"] for s in rep["stages"]]
    final = low["stages"][-1]
    records = {low["nodes"][i]["id"]: low["nodes"][i] for i in final["nodes"]}
    ln = records["aten_native_layer_norm_default"]
    assert ln["fb"]["cat"] == "not_annotated" and "layer_norm" in ln["fb"]["why"]
    graph = low["graphs"][final["graph"]]
    drawn = {it[0] for it in graph["items"]}
    assert "aten_native_layer_norm_default" in drawn and graph["engine"] == "dot"
    assert data["colors"]["node_kinds"]["portable_fallback"]["fill"]    # from resources/colors.json


def test_ds_cnn_file_is_a_few_hundred_kb(ds_cnn) -> None:
    rep, path = ds_cnn
    size = path.stat().st_size
    assert size < 400_000, f"ds_cnn's HTML is {size:,} bytes"
    low = embedded_data(path.read_text())["lowerings"][0]
    assert len(low["stages"]) == len(rep["stages"]) == 12
    assert len(low["graphs"]) < len(low["stages"])                     # unchanged passes share a layout
