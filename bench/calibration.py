"""Calibration matters; how much (issue 25): accuracy of the lowered program against the calibration's
source (random samples vs the model's own data) and size, as a real sweep (`cmlens sweep MODEL --steps
lower,evaluate --vary calib=random:1,...,model:N`), then a table and a PNG plot of top-1 against the
number of calibration samples, one line per source, float's top-1 as the reference.

    .venv/bin/python bench/calibration.py [MODEL] [--sizes 1,8,32,128] [--out DIR] [--png F] [--workers 1]

Every calibration also holds the model's example input (sample 0 of every calibration set). A size the
model's own data does not reach (digits_cnn brings 64 training images) is run with all of them
(`model`) and said so. The sweep folder is resumable: run it again and finished jobs are kept; its
dashboard.html shows the same numbers (calib and top-1 columns)."""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def own_samples(model: str) -> int:
    """How many calibration samples the model brings (0: none)."""
    from backend_core.stages.models import load_model, parse_model_source

    m = load_model(parse_model_source(model))
    return len(m.calibration_inputs or [])


def calib_values(sizes: list[int], own: int) -> list[str]:
    vals = [f"random:{n}" for n in sizes]
    if own:
        vals += [f"model:{n}" for n in sizes if n < own] + ["model"]
    return vals


def read_rows(folder: Path) -> list[dict]:
    rows = []
    for f in sorted((folder / "results").glob("*.json")):
        r = json.loads(f.read_text())
        calib = r["job"]["lower"].get("calib")
        ev = (r.get("steps") or {}).get("evaluate")
        if not ev:
            rows.append({"calib": calib, "error": (r.get("error") or {}).get("message", r.get("status"))})
            continue
        m = ev["models"]
        top = (ev.get("flips") or {}).get("by_layer") or []
        rows.append({"calib": calib, "samples": ev["samples"], "float": 100 * m["float"]["top1"],
                     "fake_quant": 100 * m["fake_quant"]["top1"], "lowered": 100 * m["lowered"]["top1"],
                     "flips": len(ev.get("flipped", [])),
                     "top_layer": f"{top[0]['flips']} at {top[0].get('label') or top[0].get('layer')}" if top else ""})
    return rows


def source_size(calib: object, own: int) -> tuple[str, int]:
    s = str(calib)
    if s == "model":
        return "model", own
    if s.startswith("model:"):
        return "model", int(s[6:])
    return "random", int(s.split(":")[-1])


def plot(rows: list[dict], own: int, path: Path, title: str) -> None:
    """top-1 (%) against calibration samples (log2 axis), one line per source; float dashed."""
    import math
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")      # a PNG, no window
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen
    from PySide6.QtGui import QGuiApplication

    QGuiApplication.instance() or QGuiApplication(["calibration"])
    w, h = 900, 520
    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    f = QFont()
    f.setPixelSize(14)
    p.setFont(f)
    fm = p.fontMetrics()
    left, right, top, bottom = 70, w - 30, 60, h - 60
    ok = [r for r in rows if "lowered" in r]
    sizes = sorted({source_size(r["calib"], own)[1] for r in ok})
    lo = min([r["lowered"] for r in ok] + [r["float"] for r in ok])
    y0 = max(0.0, math.floor((lo - 2) / 5) * 5)
    xs = {n: left + (right - left) * (math.log2(n) - math.log2(sizes[0])) / max(1e-9, math.log2(sizes[-1]) - math.log2(sizes[0]))
          for n in sizes}

    def y(v: float) -> float:
        return bottom - (bottom - top) * (v - y0) / (100.0 - y0)

    p.setPen(QColor("#263238"))
    p.drawText(QRectF(0, 8, w, 24), int(Qt.AlignmentFlag.AlignCenter), title)
    p.setPen(QPen(QColor("#cfd8dc")))
    step = 5 if 100 - y0 <= 40 else 10
    v = y0
    while v <= 100.001:
        p.drawLine(QPointF(left, y(v)), QPointF(right, y(v)))
        p.setPen(QColor("#455a64"))
        s = f"{v:g} %"
        p.drawText(QPointF(left - 8 - fm.horizontalAdvance(s), y(v) + fm.ascent() / 2 - 2), s)
        p.setPen(QPen(QColor("#cfd8dc")))
        v += step
    p.setPen(QColor("#455a64"))
    for n, x in xs.items():
        s = str(n)
        p.drawText(QPointF(x - fm.horizontalAdvance(s) / 2, bottom + 20), s)
    label = "calibration samples (+ the example input), log scale"
    p.drawText(QPointF((left + right - fm.horizontalAdvance(label)) / 2, bottom + 44), label)
    fl = ok[0]["float"]
    p.setPen(QPen(QColor("#607d8b"), 2, Qt.PenStyle.DashLine))
    p.drawLine(QPointF(left, y(fl)), QPointF(right, y(fl)))
    p.drawText(QPointF(right - 150, y(fl) - 6), f"float {fl:.2f} %")
    colors = {"random": QColor("#e53935"), "model": QColor("#1e88e5")}
    names = {"random": "random samples", "model": "the model's own data"}
    for src, color in colors.items():
        pts = sorted((source_size(r["calib"], own)[1], r["lowered"]) for r in ok if source_size(r["calib"], own)[0] == src)
        if not pts:
            continue
        p.setPen(QPen(color, 3))
        for (a, va), (b, vb) in zip(pts, pts[1:]):
            p.drawLine(QPointF(xs[a], y(va)), QPointF(xs[b], y(vb)))
        p.setBrush(color)
        for n, v in pts:
            p.drawEllipse(QPointF(xs[n], y(v)), 5, 5)
    lx, ly = left + 12, top + 8
    for src, color in colors.items():
        p.setPen(QPen(color, 3))
        p.drawLine(QPointF(lx, ly), QPointF(lx + 24, ly))
        p.setPen(QColor("#263238"))
        p.drawText(QPointF(lx + 30, ly + fm.ascent() / 2 - 2), f"lowered (int8) top-1, calibrated on {names[src]}")
        ly += fm.height() + 4
    p.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(str(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default="digits_cnn")
    ap.add_argument("--sizes", default="1,8,32,128")
    ap.add_argument("--out", type=Path, default=None, help="sweep folder (default: a temporary one)")
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "accuracy_calibration.png")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="evaluate the first N samples only")
    args = ap.parse_args()

    from backend_core.orchestration.execute.pool import LocalPoolExecutor
    from backend_core.orchestration.jobs.spec import EvaluateOptions
    from backend_core.orchestration.sweep import build_jobs, parse_vary, run_sweep

    sizes = [int(s) for s in args.sizes.split(",")]
    own = own_samples(args.model)
    values = calib_values(sizes, own)
    out = args.out or Path(tempfile.mkdtemp(prefix="cmlens-calib-")) / "sweep"
    jobs = build_jobs([args.model], parse_vary([f"calib={','.join(values)}"]), ("lower", "evaluate"),
                      evaluate=EvaluateOptions(limit=args.limit))
    t0 = time.monotonic()
    outcome = run_sweep(jobs, out, LocalPoolExecutor(args.workers),
                        on_progress=lambda p, text: print(f"[{p.line()}] {text}", flush=True),
                        meta={"steps": ["lower", "evaluate"], "axes": {"calib": values}, "models": [args.model]})
    rows = read_rows(out)
    print(f"\n{args.model}: accuracy of the lowered program by calibration ({len(rows)} jobs, "
          f"{time.monotonic() - t0:.0f} s on {outcome.executor}; sweep folder {out})")
    print(f"{'calibration':14} {'source':7} {'size':>5} {'float':>8} {'fake-q':>8} {'lowered':>8} {'flips':>6}  "
          "most flips start at")
    for r in sorted(rows, key=lambda r: source_size(r["calib"], own)):
        src, n = source_size(r["calib"], own)
        if "error" in r:
            print(f"{str(r['calib']):14} {src:7} {n:>5}  failed: {r['error']}")
            continue
        print(f"{str(r['calib']):14} {src:7} {n:>5} {r['float']:7.2f}% {r['fake_quant']:7.2f}% {r['lowered']:7.2f}% "
              f"{r['flips']:>6}  {r['top_layer']}")
    if own and max(sizes) > own:
        print(f"(the model brings {own} calibration samples: `model` is all {own} of them)")
    ok = [r for r in rows if "lowered" in r]
    if ok:
        plot(rows, own, args.png, f"{args.model}: top-1 of the lowered program vs calibration "
                                  f"({ok[0]['samples']} held-out samples)")
        print(f"wrote {args.png}")
    return 0 if outcome.exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
