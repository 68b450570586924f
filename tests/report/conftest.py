"""The HTML report's tests: real lowerings written by `cmlens lower --html` (session result cache),
opened in a real headless Chromium (tests/report/browser.py)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.report.browser import Browser, find_chromium

MISSING = ("chromium is not installed, so the HTML report's browser tests cannot run: "
           "apt-get install -y chromium (scripts/install_sysdeps.sh installs it; CI has it)")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session (1366x768). Skips without chromium, but fails under CI,
    which installs it: the browser tests must not silently stop running there."""
    if find_chromium() is None:
        if os.environ.get("CI"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    with Browser(1366, 768) as b:
        yield b


def lower_to_files(tmp: Path, model: str, *extra: str) -> tuple[dict[str, Any], Path]:
    """`cmlens lower MODEL --json --html` as a user runs it; (the JSON report, the HTML path)."""
    from app.cli import main

    name = Path(model).name
    j, h = tmp / f"{name}.json", tmp / f"{name}.html"
    code = main(["lower", model, *extra, "--json", str(j), "--html", str(h)])
    assert code == 0, f"cmlens lower {model} exited {code}"
    return json.loads(j.read_text()), h


@pytest.fixture(scope="session")
def layernorm(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """layernorm_mlp: two fallbacks (a LayerNorm in float, a clamp that could not fuse)."""
    return lower_to_files(tmp_path_factory.mktemp("html-ln"), "layernorm_mlp")


@pytest.fixture(scope="session")
def ds_cnn(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    return lower_to_files(tmp_path_factory.mktemp("html-ds"), "ds_cnn")


def embedded_data(html_text: str) -> dict[str, Any]:
    start = html_text.index("<script type='application/json' id='cmlens-data'>")
    body = html_text[html_text.index(">", start) + 1: html_text.index("</script>", start)]
    return json.loads(body)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def three_way(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """`cmlens compare --json --with-reports --html` of Conv-ReLU-Conv as given (M55), channels-last (M55)
    and channels-last (M4): the real compare core's dict and the interactive page the CLI wrote."""
    from app.cli import main

    tmp = tmp_path_factory.mktemp("html-cmp")
    f = str(FIXTURES / "conv_relu_conv.py")
    out, page = tmp / "cmp.json", tmp / "cmp.html"
    code = main(["compare", f, f + "@channels-last", f + "@channels-last,m4", "--json", str(out), "--with-reports",
                 "--html", str(page)])
    assert code == 0, f"cmlens compare exited {code}"
    return json.loads(out.read_text()), page
