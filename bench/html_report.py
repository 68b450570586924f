"""The interactive HTML report: bytes of the file and how fast it opens.

Per model: `cmlens lower MODEL --json --html` (result cache), then the file's size, the time to write it
(Graphviz layouts of the distinct stages included) and, in headless Chromium, the time from navigation
start to the viewer drawn (`data-ready-ms`, the page's own performance.now()). Goals: ds_cnn a few
hundred KB; opens in well under a second. Usage: python bench/html_report.py [model ...]  (default ds_cnn
layernorm_mlp; mv2 for a big graph)"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    from app.cli import main as cli
    from backend_core.analyses.report.html_report import render_html
    from tests.report.browser import Browser, find_chromium

    models = sys.argv[1:] or ["ds_cnn", "layernorm_mlp"]
    tmp = Path(tempfile.mkdtemp(prefix="cmlens-bench-html-"))
    rows = []
    for m in models:
        j = tmp / f"{m}.json"
        assert cli(["lower", m, "--json", str(j)]) == 0
        report = json.loads(j.read_text())
        t0 = time.perf_counter()
        html = render_html(report)
        write_s = time.perf_counter() - t0
        out = tmp / f"{m}.html"
        out.write_text(html, encoding="utf-8")
        json_kb = j.stat().st_size / 1024
        rows.append([m, len(report["stages"]), sum(len(s["nodes"]) for s in report["stages"]), json_kb,
                     out.stat().st_size / 1024, write_s, out])
    ready = {}
    if find_chromium():
        with Browser() as b:
            for r in rows:
                times = []
                for _ in range(3):
                    b.open(r[6].as_uri())
                    times.append(int(b.eval("document.body.dataset.readyMs")))
                ready[r[0]] = min(times)
    print(f"{'model':16} {'stages':>6} {'nodes':>6} {'JSON KB':>8} {'HTML KB':>8} {'HTML/JSON':>9} {'write s':>8} "
          f"{'ready ms':>9}")
    for m, st, n, jk, hk, ws, _ in rows:
        print(f"{m:16} {st:6} {n:6} {jk:8.0f} {hk:8.0f} {hk / jk:9.2f} {ws:8.2f} {ready.get(m, '—'):>9}")
    print("(write s: building the page, Graphviz layouts included (disk-cached); ready ms: navigation start to the "
          "viewer drawn, headless Chromium, best of 3)")


if __name__ == "__main__":
    main()
