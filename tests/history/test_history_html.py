"""`cmlens history show --html`: one self-contained file; opened in headless Chromium at 1366x768, its
first screen shows the change list and the charts, with a stack version change drawn as a marker and a
failed commit as a red cross (checked by pixels). Records are made here (no lowering)."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from backend_core.orchestration.history import Record, open_store
from tests.history.conftest import make_repo
from tests.report.browser import find_chromium

from .helpers import cli

BLUE, ORANGE, PURPLE, RED = (0x30, 0x56, 0xD3), (0xE6, 0x7E, 0x22), (0x8E, 0x44, 0xAD), (0xC0, 0x39, 0x2B)


def _count(img, box: tuple[int, int, int, int], rgb: tuple[int, int, int], tol: int = 40) -> int:
    import numpy as np

    px = np.asarray(img.crop(box).convert("RGB"), dtype=np.int16)
    return int((np.abs(px - np.array(rgb, dtype=np.int16)) <= tol).all(axis=-1).sum())


@pytest.fixture()
def page(tmp_path: Path) -> Path:
    repo, commits = make_repo(tmp_path / "repo")
    db = tmp_path / "h.db"
    with open_store(db) as store:
        for i, c in enumerate(commits):
            ok = i != 5
            store.add(Record(
                model="model.py", name="model", config="cortex-m55 legacy int8", commit=c, subject=f"commit {i + 1}",
                commit_date=f"2026-11-{i + 1:02d}T12:00:00+00:00", branch="main", status="ok" if ok else "failed",
                error=None if ok else {"message": "SyntaxError: invalid syntax"},
                metrics={"fallbacks": 1 if i >= 4 else 0, "arena_bytes": 800 if i >= 6 else 288,
                         "lowering_s": 2.0} if ok else {},
                versions={"executorch": "1.5.1" if i < 3 else "1.6.0", "torch": "2.14.1"},
                extra={"notes": {"fallbacks": [{"op": "aten.layer_norm `layer_norm` [ln]", "category": "not_annotated",
                                                "source": "model.py:12"}] if i >= 4 else []}}))
    out = tmp_path / "trends.html"
    code, text, err = cli("history", "show", repo / "model.py", "--history", db, "--html", out)
    assert code == 0, err
    assert "FAILED: SyntaxError" in text and "executorch 1.5.1 -> 1.6.0" in text
    assert '"commit 7": arena peak (bytes): 288 -> 800' in text        # measured across the failed commit 6
    return out


def test_html_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert "<svg" in html and "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "aten.layer_norm `layer_norm` [ln] (not_annotated)" in html          # the new fallback, on the user's op


def test_first_screen_shows_changes_and_charts(page: Path, tmp_path: Path) -> None:
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from PIL import Image

    shot = tmp_path / "shot.png"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                        f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1366,768",
                        page.as_uri()], capture_output=True, timeout=120, check=True)
    img = Image.open(shot)
    shot.replace(Path(tempfile.gettempdir()) / "cmlens-history-first-screen.png")   # to look at after a failure
    shot = Path(tempfile.gettempdir()) / "cmlens-history-first-screen.png"
    assert img.size == (1366, 768)
    changes, charts = (12, 70, 404, 768), (410, 70, 1366, 768)
    print({name: _count(img, charts if name != "red" else changes, rgb) for name, rgb in
           (("blue", BLUE), ("orange", ORANGE), ("purple", PURPLE), ("red", RED))})
    assert _count(img, changes, RED) > 150                  # the change list's "worse" lines, left
    assert _count(img, charts, BLUE) > 400                  # series lines and points
    assert _count(img, charts, ORANGE) > 40                 # the changed points
    assert _count(img, charts, PURPLE) > 40                 # the executorch 1.5.1 -> 1.6.0 marker
    assert _count(img, charts, RED, tol=25) > 20            # the failed commit's cross


def test_a_click_on_a_point_shows_the_commit(page: Path) -> None:
    exe = find_chromium()
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    html = page.read_text().replace("</body>", "<script>show(4)</script></body>")   # the click handler's call
    clicked = page.with_name("clicked.html")
    clicked.write_text(html)
    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              f"--user-data-dir={profile}", "--dump-dom", clicked.as_uri()],
                             capture_output=True, text=True, timeout=120).stdout
    detail = dom[dom.index('id="detail"'):]
    assert "commit 5" in detail and "against the commit before" in detail and "+ aten.layer_norm" in detail
