"""The N-way compare page (`compare_html` on the real compare core's dict) in headless Chromium:
selection synced through the matching, one op becoming several (1 -> many) and several one (a ReLU
fused into its conv: many -> one), deltas coloured on the nodes, the "what changed" list."""
from __future__ import annotations

import json
import re

from tests.report.conftest import embedded_data

SEL = "#panel-compare .cpane:nth-child({}) g.node[data-id='{}']"


def selected(b, side: int) -> list[str]:
    return b.eval(f"Array.from(document.querySelectorAll('#panel-compare .cpane:nth-child({side + 1}) g.node.sel'))"
                  ".map(function (g) { return g.dataset.id; }).sort()")


def row_of(cmp, label_start: str) -> dict:
    return next(r for r in cmp["rows"] if r["label"].startswith(label_start))


def test_compare_page_is_self_contained_with_the_summary_on_top(three_way) -> None:
    cmp, path = three_way
    text = path.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.I)
    top = text[:text.index("<div id='viewer'>")]
    assert "fallbacks removed on [2]" in top and "conv_relu_conv.py:15" in top
    assert "planned arena" in top and "4,096 B" in top                 # the summary deltas, readable
    data = embedded_data(text)
    assert len(data["lowerings"]) == 3 and data["compare"]["sides"][2].startswith("[3]")
    raw = text[text.index("id='cmlens-compare'>") + 20:]                # the compare JSON, for tools
    assert json.loads(raw[:raw.index("</script>")]) == {k: v for k, v in cmp.items() if k != "reports"}


def test_clicking_a_fallback_selects_its_match_on_every_side(browser, three_way) -> None:
    cmp, path = three_way
    conv = row_of(cmp, "aten.conv2d `conv2d` [conv1]")
    browser.open(path.as_uri())
    assert browser.errors == []
    browser.click_element(SEL.format(1, conv["cells"][0]["nodes"][0]))       # a real mouse click
    for side in (1, 2):
        assert selected(browser, side) == sorted(conv["cells"][side]["nodes"])
    row = browser.eval("document.getElementById('compare-inspector').innerText")
    assert "fallback · layout" in row and conv["cells"][0]["reason"][:80] in row
    assert row.count("lowered") >= 2
    # the deltas on the nodes: the fallback is gone on [2] and [3]
    assert browser.eval(f"document.querySelector(\"{SEL.format(2, conv['cells'][1]['nodes'][0])}\")"
                        ".classList.contains('d-fb_removed')")
    li = browser.eval("document.querySelector('#what-changed li.cur').innerText")
    assert "fallback gone on [2], [3]" in li


def test_one_op_that_became_two_nodes_selects_both(browser, three_way) -> None:
    cmp, path = three_way
    conv2 = row_of(cmp, "aten.conv2d `conv2d_1` [conv2]")
    assert len(conv2["cells"][1]["nodes"]) == 2 and len(conv2["cells"][0]["nodes"]) == 1
    browser.open(path.as_uri())
    browser.click_element(SEL.format(1, conv2["cells"][0]["nodes"][0]))
    assert selected(browser, 1) == sorted(conv2["cells"][1]["nodes"])          # 1 -> many
    browser.click_element(SEL.format(2, conv2["cells"][1]["nodes"][1]))        # the dequantize of [2]
    assert selected(browser, 0) == conv2["cells"][0]["nodes"]                  # many -> 1


def test_a_relu_fused_into_its_conv_selects_the_conv(browser, three_way) -> None:
    cmp, path = three_way
    relu, conv = row_of(cmp, "aten.relu `relu` [act]"), row_of(cmp, "aten.conv2d `conv2d` [conv1]")
    assert relu["cells"][1]["status"] == "fused" and relu["cells"][1]["nodes"] == []
    browser.open(path.as_uri())
    browser.click_element(SEL.format(1, relu["cells"][0]["nodes"][0]))        # the relu kernel on [1]
    assert selected(browser, 1) == conv["cells"][1]["nodes"]                   # the conv it fused into
    assert selected(browser, 2) == conv["cells"][2]["nodes"]
    assert "fused into aten.conv2d `conv2d` [conv1]" in browser.eval("document.getElementById('compare-inspector').innerText")
    browser.click_element(SEL.format(2, conv["cells"][1]["nodes"][0]))        # and back: the conv on [2]
    assert selected(browser, 0) == sorted(conv["cells"][0]["nodes"] + relu["cells"][0]["nodes"])


def test_what_changed_entry_brings_every_side_to_the_op(browser, three_way, tmp_path) -> None:
    cmp, path = three_way
    browser.open(path.as_uri())
    rows = browser.eval("Array.from(document.querySelectorAll('#what-changed li[data-row]'))"
                        ".map(function (li) { return +li.dataset.row; })")
    assert len(rows) == sum(r["change"] != "same" for r in cmp["rows"]) == 6
    target = next(i for i in rows if cmp["rows"][i]["label"].startswith("aten.conv2d `conv2d_1`"))
    browser.eval("document.getElementById('viewer').scrollIntoView()")
    for side in range(3):                                                      # zoom in and pan away first
        browser.eval(f"(function(){{var p=document.querySelectorAll('#panel-compare .cpane .pane')[{side}];"
                     "var r=p.getBoundingClientRect(); p.firstChild.dispatchEvent(new WheelEvent('wheel', "
                     "{deltaY: -900, clientX: r.left + 5, clientY: r.top + 5, bubbles: true}));})()")
    browser.click_element(f"#what-changed li[data-row='{target}']")
    for side in range(3):                                  # each side's matched nodes are inside its pane
        inside = browser.eval(f"""(function () {{
            var pane = document.querySelectorAll('#panel-compare .cpane .pane')[{side}].getBoundingClientRect();
            var sel = document.querySelectorAll('#panel-compare .cpane:nth-child({side + 1}) g.node.sel rect.box');
            return sel.length > 0 && Array.from(sel).every(function (e) {{ var b = e.getBoundingClientRect();
              return b.left >= pane.left && b.right <= pane.right && b.top >= pane.top && b.bottom <= pane.bottom; }}); }})()""")
        assert inside, f"side {side + 1}: the selected nodes are not in view"
    assert "row=" + str(target) in browser.eval("location.hash")
    browser.screenshot(tmp_path / "compare.png")


def test_deep_link_to_a_row_opens_the_compare_on_it(browser, three_way) -> None:
    cmp, path = three_way
    i = next(k for k, r in enumerate(cmp["rows"]) if r["label"].startswith("aten.relu"))
    browser.open(path.as_uri() + f"#compare&row={i}")
    assert "aten.relu `relu` [act]" in browser.eval("document.getElementById('compare-inspector').innerText")
    browser.click_element("#tab-lowering-1")                                   # a side's stage viewer
    assert browser.eval("document.getElementById('stage-select-1').options.length") == \
        len(cmp["reports"][1]["stages"])


def test_first_screen_shows_the_summary_pixels(browser, three_way, tmp_path) -> None:
    """Opened fresh at 1366x768, the page stays at its top (it once scrolled to the viewer on load: the
    hash the viewer writes named the panel's id) and the summary is drawn there: dark text pixels in
    the first screen's upper half, read from a real screenshot, not the DOM."""
    from PIL import Image

    _, path = three_way
    browser.open(path.as_uri())
    browser.wait_for("document.readyState === 'complete'")
    assert browser.eval("window.scrollY") == 0
    shot = Image.open(browser.screenshot(tmp_path / "first.png")).convert("L")
    w, h = shot.size
    top = shot.crop((0, 0, w, h // 2))
    dark = sum(1 for v in top.getdata() if v < 100)
    assert dark > 2000, f"the first screen's upper half is blank ({dark} dark pixels)"
