"""Read-only views of the "Run on target" panel: the result (PASS/FAIL, error stats, cycles, faults),
the doctor's findings (with the exact install commands), and the per-layer gap plot.

They only display the JSON that `cmlens run|selftest --json-file` and `cmlens doctor --json` write
(app/runtime/cli_process.py): no backend import, no torch, so the panel stays cheap to open."""
from __future__ import annotations

import html
import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget


NOT_CYCLE_ACCURATE = "simulator: not cycle-accurate"   # same words as backend_core.firmware.uart
from app.widgets.theme import OUTCOME_COLORS  # noqa: E402  (re-exported for the panel)


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.6g}"
    return html.escape(str(x))


class ResultView(QWidget):
    """Big coloured outcome plus the details a run or self-test reported."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.outcome = QLabel("—")
        self.outcome.setObjectName("targetOutcome")
        self.outcome.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(False)
        lay.addWidget(self.outcome)
        lay.addWidget(self.details, 1)
        self.show_outcome("—", "#9e9e9e")

    def show_outcome(self, text: str, color: str) -> None:
        self.outcome.setText(text)
        self.outcome.setStyleSheet(f"QLabel#targetOutcome {{ font-size: 28pt; font-weight: bold; color: white;"
                                   f" background: {color}; border-radius: 6px; padding: 6px; }}")

    def clear(self) -> None:
        self.show_outcome("—", "#9e9e9e")
        self.details.clear()

    def show_error(self, exit_code: int, message: str, hint: str = "", detail: str = "") -> None:
        self.show_outcome(f"ERROR (exit {exit_code})", OUTCOME_COLORS["ERROR"])
        parts = [f"<p><b>{html.escape(message)}</b></p>"]
        if hint:
            parts.append(f"<pre>{html.escape(hint)}</pre>")
        if detail:
            parts.append(f"<details><pre>{html.escape(detail[-4000:])}</pre>")
        self.details.setHtml("".join(parts))

    def show_result(self, r: dict[str, Any], exit_code: int) -> None:
        outcome = str(r.get("outcome", "NO RESULT"))
        self.show_outcome(f"{outcome}", OUTCOME_COLORS.get(outcome, "#ef6c00"))
        board = r.get("board")
        board_name = board.get("name") if isinstance(board, dict) else board
        rows = [("model", r.get("model") or r.get("variant")), ("target", r.get("target")),
                ("board", f"{board_name} ({r.get('simulator') or (board or {}).get('simulator', '')})"
                 if isinstance(board, dict) or r.get("simulator") else board_name),
                ("exit status", f"firmware {r.get('exit_code')}, cmlens {exit_code}")]
        out = ["<table cellspacing=4>"] + [f"<tr><td><b>{k}</b></td><td>{_fmt(v)}</td></tr>" for k, v in rows]
        out.append("</table>")
        if r.get("problem"):
            out.append(f"<p style='color:#c62828'><b>problem:</b> {html.escape(str(r['problem']))}</p>")
        tests = r.get("tests") or []
        if tests:
            n_pass = sum(1 for t in tests if t.get("passed"))
            out.append(f"<p><b>tests:</b> {n_pass}/{len(tests)} passed</p>")
        for s in r.get("error_stats") or []:
            out.append("<p><b>error stats, testset {}</b>: mean abs {}, max abs {}, mean rel {}, max rel {}</p>".format(
                s.get("testset"), *(_fmt(s.get(k)) for k in ("mean_absolute_error", "max_absolute_error",
                                                              "mean_relative_error", "max_relative_error"))))
        out.append(self._cycles_html(r.get("cycles"), str(r.get("simulator") or "")))
        faults = r.get("faults") or ([r["fault"]] if r.get("fault") else [])
        for f in faults:
            text = f if isinstance(f, str) else "; ".join(f"{k}={v}" for k, v in f.items() if v not in (None, "", {}))
            out.append(f"<p style='color:#c62828'><b>fault:</b> {html.escape(text)}</p>")
        for e in (r.get("errors") or [])[:5]:
            out.append(f"<p style='color:#c62828'><tt>{html.escape(str(e))}</tt></p>")
        gaps = r.get("gaps")
        if gaps:
            first = gaps.get("first_divergence")
            out.append(f"<p><b>per-layer gaps:</b> {len(gaps.get('layers', []))} layers, "
                       f"{gaps.get('identical_layers', 0)} bit-identical"
                       + (f"; first divergence <tt>{html.escape(first)}</tt>" if first else "") + "</p>")
        elif r.get("gaps_problem"):
            out.append(f"<p><b>per-layer gaps:</b> {html.escape(r['gaps_problem'])}</p>")
        t = r.get("timings_s") or {k: r.get(k) for k in ("configure_s", "build_s", "run_s") if r.get(k) is not None}
        if t:
            out.append("<p><b>time:</b> " + ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in t.items()
                                                       if isinstance(v, (int, float))) + "</p>")
        self.details.setHtml("".join(out))

    @staticmethod
    def _cycles_html(c: dict[str, Any] | None, simulator: str = "") -> str:
        if not c:
            where = f"unavailable on {simulator}" if simulator else "none reported"
            return f"<p><b>cycles:</b> {where} <i>({NOT_CYCLE_ACCURATE})</i></p>"
        if c.get("available"):
            return (f"<p><b>cycles:</b> {c.get('total'):,} <i>({NOT_CYCLE_ACCURATE})</i></p>")
        return (f"<p><b>cycles:</b> unavailable — {html.escape(str(c.get('reason') or ''))} "
                f"<i>({NOT_CYCLE_ACCURATE})</i></p>")


class DoctorView(QTextBrowser):
    """`cmlens doctor --json` findings: missing pieces first, each with its install command."""

    def show_report(self, report: dict[str, Any] | None, headline: str = "") -> None:
        parts = [f"<p style='color:#c62828'><b>{html.escape(headline)}</b></p>"] if headline else []
        if not report:
            parts.append("<p>The doctor did not report (see the console).</p>")
            self.setHtml("".join(parts))
            return
        order = {"missing": 0, "warning": 1, "info": 2, "ok": 3}
        for item in sorted(report.get("items", []), key=lambda i: order.get(i.get("status"), 9)):
            st = item.get("status", "")
            color = {"missing": "#c62828", "warning": "#ef6c00", "ok": "#2e7d32"}.get(st, "#455a64")
            req = "" if item.get("required") else " <i>(optional)</i>"
            parts.append(f"<p><b style='color:{color}'>{html.escape(st.upper())}</b> "
                         f"<b>{html.escape(item.get('name', ''))}</b>{req}: {html.escape(item.get('detail', ''))}")
            if item.get("fix"):
                parts.append(f"<br><tt style='background:#f5f5f5'>{html.escape(item['fix'])}</tt>")
            parts.append("</p>")
        self.setHtml("".join(parts))


class GapPlot(QWidget):
    """Per-layer gap (MSE in real units, log scale) in execution order; a click emits the final-graph
    node id of the layer, like the Numerics tab's plot."""

    nodeClicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import pyqtgraph as pg

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("")
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "layer (execution order)")
        self.plot.setLabel("left", "MSE target vs host (real units, log10)")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.scatter = pg.ScatterPlotItem(size=11, hoverable=True,
                                          tip=lambda x, y, data: f"{data}\nlog10 MSE {y:.2f}")
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        self.floor_line = pg.InfiniteLine(pos=-12, angle=0, pen=pg.mkPen("#2e7d32", style=Qt.PenStyle.DashLine),
                                          label="bit-identical", labelOpts={"position": 0.92, "color": "#2e7d32"})
        self.plot.addItem(self.floor_line)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        self.layers: list[dict[str, Any]] = []

    def set_gaps(self, gaps: dict[str, Any] | None) -> None:
        import pyqtgraph as pg

        self.layers = list((gaps or {}).get("layers", []))
        spots = []
        floor = 1e-12                                  # identical layers sit on the floor, drawn green
        for g in self.layers:
            real = g.get("mse_real")
            if real is None and str(g.get("dtype", "")).startswith("torch.float"):
                real = g.get("mse")
            y = math.log10(max(real if real is not None else g.get("mse", 0.0), floor))
            same = g.get("mismatched", 1) == 0
            color = "#2e7d32" if same else ("#c62828" if g.get("node_id") == (gaps or {}).get("first_divergence")
                                             else "#ef6c00")
            spots.append({"pos": (g.get("index", len(spots)), y), "data": g.get("node_id") or "",
                          "brush": pg.mkBrush(color), "pen": pg.mkPen("#263238"),
                          "symbol": "o" if same else "t"})
        self.scatter.setData(spots)
        ys = [s["pos"][1] for s in spots]
        if ys:                                         # the floor at the bottom, real gaps above it
            self.plot.setYRange(math.log10(floor) - 0.5, max(max(ys), -2.0) + 0.5)
            self.plot.setXRange(-0.5, len(spots) - 0.5)
        same = sum(1 for g in self.layers if g.get("mismatched", 1) == 0)
        first = (gaps or {}).get("first_divergence")
        self.title.setText(f"{len(self.layers)} layers, {same} bit-identical (green circles at 1e-12); click a point to select its node"
                           + (f" — first divergence: {first} (red)" if first else ""))

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        for p in points[:1]:
            nid = p.data()
            if nid:
                self.nodeClicked.emit(str(nid))


def recorded_run_html(overlay: dict[str, Any], name: str, notes: list[str] | None = None) -> str:
    """The result view's text for an ETDump recorded outside this app: top per-op rows, gaps summary, notes."""
    import html

    gaps = overlay.get("gaps")
    prof = overlay.get("profile") or {}
    unit = prof.get("unit_info") or {"name": prof.get("unit", "ticks")}
    out = [f"<p><b>ETDump:</b> {html.escape(name)} (recorded outside this app)</p>"]
    ops = sorted(prof.get("ops") or [], key=lambda o: o.get("count") or 0, reverse=True)
    if ops:
        total = prof.get("total")
        out.append(f"<p><b>per-op {html.escape(str(unit.get('name', 'ticks')))}</b> "
                   f"({html.escape(str(unit.get('label', '')))}), total {total if total is not None else '-'}:</p>"
                   "<table cellspacing=3>" + "".join(
                       f"<tr><td><tt>{html.escape(str(o.get('node') or o.get('op')))}</tt></td>"
                       f"<td align=right>{o.get('count', 0):,}</td><td align=right>{100 * (o.get('share') or 0):.1f}%"
                       f"</td></tr>" for o in ops[:8]) + "</table>")
    if gaps:
        first = gaps.get("first_divergence")
        out.append(f"<p><b>per-layer gaps:</b> {len(gaps.get('layers', []))} layers, "
                   f"{gaps.get('identical_layers', 0)} bit-identical"
                   + (f"; first divergence <tt>{html.escape(first)}</tt>" if first else "") + "</p>")
    out += [f"<p style='color:#546e7a'>note: {html.escape(n)}</p>" for n in (notes or [])]
    return "".join(out)
