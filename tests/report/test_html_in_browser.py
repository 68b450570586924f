"""The interactive HTML report in a real headless Chromium: real mouse clicks over the DevTools
protocol, the DOM read back, screenshots at 1366x768."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.report.browser import find_chromium

FALLBACK = "aten_native_layer_norm_default"


def inspector_text(b) -> str:
    return b.eval("document.getElementById('inspector').innerText")


def test_clicking_a_fallback_node_shows_its_reason_evidence_and_fix(browser, layernorm, tmp_path) -> None:
    rep, path = layernorm
    row = next(f for f in rep["fallbacks"] if f["node"] == FALLBACK)
    browser.open(path.as_uri())
    assert browser.errors == []
    assert "Portable fallback —" not in inspector_text(browser)     # nothing selected yet: the stage overview
    browser.click_element(f"g.node[data-id='{FALLBACK}']")
    text = inspector_text(browser)
    assert "Portable fallback — not_annotated" in text
    assert row["reason"] in text
    assert row["suggestion"] in text
    for ev in row["evidence"]:
        assert ev in text
    assert "teaching.py:25" in text                          # the user's line
    assert browser.eval(f"document.querySelector(\"g.node[data-id='{FALLBACK}']\").classList.contains('sel')")
    assert "select=" + FALLBACK in browser.eval("location.hash")
    shot = browser.screenshot(tmp_path / "fallback.png")
    from PIL import Image

    img = Image.open(shot).convert("RGB")
    assert img.size == (1366, 768)
    red = Image.new("RGB", (1, 1), "#e53935").getpixel((0, 0))          # the fallback fill is drawn
    assert any(img.getpixel((x, y)) == red for x in range(0, 1366, 3) for y in range(0, 768, 3))


def test_clicking_the_background_clears_the_selection(browser, layernorm) -> None:
    _, path = layernorm
    browser.open(path.as_uri() + f"#select={FALLBACK}")
    assert "not_annotated" in inspector_text(browser)
    box = browser.eval("(function(){var r=document.querySelector('#viewer .pane').getBoundingClientRect();"
                       "return [r.left + 12, r.top + r.height - 12];})()")
    browser.click(*box)
    assert "Fallbacks in the final program (2)" in inspector_text(browser)


def test_stage_selector_keeps_the_node_selected_across_passes(browser, layernorm) -> None:
    rep, path = layernorm
    browser.open(path.as_uri() + f"#select={FALLBACK}")
    edge = next(s for s in rep["stages"] if s["name"] == "edge")
    browser.eval(f"(function(){{var s=document.getElementById('stage-select'); s.value='{edge['index']}';"
                 "s.dispatchEvent(new Event('change'));})()")
    text = inspector_text(browser)
    assert f"in stage {edge['index']}: edge" in text
    ids = {n["id"] for n in edge["nodes"]}
    assert FALLBACK in ids and FALLBACK in text.splitlines()[0]        # same node (its debug handle)
    drawn = browser.eval("Array.from(document.querySelectorAll('#viewer g.node')).map(function(g){return g.dataset.id})")
    assert set(drawn) <= ids and len(drawn) > 5
    browser.eval("window.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
    assert browser.eval("document.getElementById('stage-select').value") == str(edge["index"] + 1)


def test_find_box_selects_a_node_by_op(browser, layernorm) -> None:
    _, path = layernorm
    browser.open(path.as_uri())
    browser.click_element("#viewer input.find")
    browser.type_text("layer_norm", enter=True)
    assert inspector_text(browser).splitlines()[0] == FALLBACK
    assert "1 match(es)" in browser.eval("document.querySelector('#viewer .bar').innerText")


def test_final_stage_inspector_shows_memory_and_cost_of_a_kernel(browser, ds_cnn) -> None:
    rep, path = ds_cnn
    step = next(s for s in rep["memory"]["timeline"] if s["op"].startswith("cortex_m::quantized_conv2d"))
    browser.open(path.as_uri())
    browser.click_element(f"g.node[data-id='{step['node']}']")
    text = inspector_text(browser)
    assert "Memory (ExecuTorch's plan in the .pte)" in text
    assert f"{step['live_bytes']:,} B of {rep['memory']['arena_bytes']:,} B planned" in text
    assert "MACs" in text and "Quantization" in text and "requantise" in text
    assert browser.errors == []


def test_a_reason_with_markup_is_shown_as_text_not_run(browser, layernorm, tmp_path) -> None:
    """The report's strings come from the user's code and ExecuTorch: `</script>` in one must not end
    the embedded data, and `<img onerror>` must not run."""
    from backend_core.analyses.report.html_report import write_html

    rep = json.loads(json.dumps(layernorm[0]))
    hostile = "</script><img src=x onerror=\"document.title='pwned'\"> <!-- still text"
    final = rep["stages"][-1]
    node = next(n for n in final["nodes"] if n["id"] == FALLBACK)
    node["fallback"]["message"] = hostile
    page = Path(write_html(rep, str(tmp_path / "hostile.html")))
    browser.open(page.as_uri() + f"#select={FALLBACK}")
    assert hostile in inspector_text(browser)
    assert browser.eval("document.title") != "pwned" and browser.errors == []


def test_dump_dom_of_a_deep_link_has_the_reason(layernorm) -> None:
    """The page's own self-test hook, without the DevTools protocol: `#select=NODE` renders the
    inspector, and `chromium --dump-dom` prints the DOM after the scripts ran."""
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    rep, path = layernorm
    row = next(f for f in rep["fallbacks"] if f["node"] == "aten_clamp_default")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync", "--no-first-run",
                               f"--user-data-dir={profile}", "--dump-dom", path.as_uri() + "#select=aten_clamp_default"],
                              capture_output=True, text=True, timeout=120)
    dom = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert 'data-viewer="ready"' in dom
    inspector = dom[dom.index('id="inspector"'):]
    assert "activation_not_fused" in inspector and row["suggestion"][:60] in inspector


def test_overlay_colours_the_final_graph_by_macs(browser, ds_cnn) -> None:
    from tests.report.conftest import embedded_data

    _, path = ds_cnn
    cost = embedded_data(path.read_text())["lowerings"][0]["cost"]
    top = max((n for n in cost if cost[n].get("macs")), key=lambda n: cost[n]["macs"])
    browser.open(path.as_uri())
    labels = browser.eval("Array.from(document.getElementById('overlay').options).map(function (o) { return o.text; })")
    assert labels[:4] == ["colour: node kind", "colour: arena bytes alive", "colour: MACs", "colour: bytes moved"]
    browser.eval("var s = document.getElementById('overlay'); s.value = '2'; s.dispatchEvent(new Event('change'))")
    assert f"darkest: {cost[top]['macs']:,} at " in browser.eval("document.querySelector('#viewer .bar').innerText")
    fill = "document.querySelector(\"g.node[data-id='{}'] rect.box\").style.fill"
    assert browser.eval(fill.format(top)) == "rgb(8, 48, 107)"
    assert browser.eval(fill.format("x")) != "rgb(8, 48, 107)"            # the input has no MACs: grey
    browser.eval("window.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowLeft'}))")
    assert browser.eval(fill.format(top)) in ("", None) or browser.eval("document.getElementById('overlay').disabled")


def test_an_etdump_run_shows_its_measured_counts(browser, tmp_path) -> None:
    """`cmlens lower run.etdump --html` (the program beside it, a QEMU run's stored ETDump): the
    measured count per op is an overlay and a line of the inspector, in the profile's own unit."""
    from tests.report.conftest import lower_to_files

    etdump = Path(__file__).resolve().parents[1] / "artefacts" / "fixtures" / "ds_cnn_plain_m55_qemu_icount.etdump"
    rep, path = lower_to_files(tmp_path, str(etdump))
    prof = rep["artefact"]["overlay"]["profile"]
    top = max(prof["ops"], key=lambda o: o["count"])
    browser.open(path.as_uri())
    labels = browser.eval("Array.from(document.getElementById('overlay').options).map(function (o) { return o.text; })")
    assert "colour: measured count" in labels
    browser.click_element(f"g.node[data-id='{top['node']}']")
    text = inspector_text(browser)
    assert f"{prof['unit']}\t{top['count']:,} ({100 * top['share']:.1f}% of the kernels)" in text
    assert prof["unit_info"]["label"] in text
