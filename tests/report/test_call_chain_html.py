"""The HTML report's inspector names the line that made the op and the calls from the user's line (issue 38),
read back from a real headless Chromium after the node is selected."""
from __future__ import annotations

from pathlib import Path

from app.cli import main
from tests.app.lowering.test_call_chain import MODEL

NODE = "aten_native_layer_norm_default"


def test_the_html_inspector_lists_the_call_chain(browser, tmp_path: Path) -> None:
    model = tmp_path / "net.py"
    model.write_text(MODEL)
    html = tmp_path / "net.html"
    assert main(["lower", str(model), "--calib", "1", "--html", str(html)]) == 0
    browser.open(html.as_uri() + f"#select={NODE}")
    assert browser.errors == []
    text = browser.eval("document.getElementById('inspector').innerText")
    assert "net.py:5" in text and "called from" in text and "net.py:14 in forward" in text, text[:1500]
