"""Read-only views of the "Run on target" panel: the result (one coloured line with the key numbers,
and the details: error stats, cycles, faults),
the doctor's findings (with the exact install commands), and the per-layer gap plot.

They only display plain dicts: a run's section of a job's result (ModelRunResult.to_dict()), a
self-test's result, the doctor's report (DoctorReport.to_dict()): no backend import, no torch, so the
panel stays cheap to open."""
from __future__ import annotations

import html
import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from app.widgets.elided_label import ElidedLabel
from app.widgets.theme import OUTCOME_COLORS, PLACEHOLDER_STYLE, UI  # OUTCOME_COLORS re-exported for the panel

NOT_CYCLE_ACCURATE = "simulator: not cycle-accurate"   # same words as backend_core.target.simulate.uart_records


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.6g}"
    return html.escape(str(x))


NO_RUN = ("No run yet: Run on target builds the runner and runs this model on QEMU or an FVP; "
          "the outcome appears on this line.")
NO_DETAILS = "The run's details (tests, error stats, cycles, faults, timings) appear here after a run."
NO_GAPS = ("Per-layer gaps (target vs host, layer by layer) appear here after a run with "
           "\"ETDump + per-layer gaps\" on, or when you open an ETRecord with its ETDump.")
BADGE = ("QLabel#targetOutcome {{ font-weight: bold; color: white; background: {color}; border-radius: 3px;"
         " padding: 1px 8px; }}")
RECORDED = f"QLabel#targetOutcome {{ font-weight: normal; color: {UI['muted']}; padding: 1px 2px; }}"


def _placeholder(text: str) -> QLabel:
    lab = QLabel(text)
    lab.setAlignment(Qt.AlignmentFlag.AlignCenter)
    lab.setWordWrap(True)
    lab.setStyleSheet(PLACEHOLDER_STYLE)
    return lab


def key_numbers(r: dict[str, Any]) -> list[str]:
    """The few numbers that say how a run went, for the one-line summary (the details tab has the rest)."""
    bits = []
    verdict = r.get("verdict")
    if isinstance(verdict, dict):               # the exact verdict, when the run carries one
        outcome = str(r.get("outcome") or "")
        label = next((str(verdict[k]) for k in ("label", "summary", "text") if verdict.get(k)), "")
        if outcome and label.startswith(outcome):
            label = label[len(outcome):].lstrip(" ,:;—-")      # the badge says the outcome already
        diff = str(verdict.get("quantisation_difference") or "")
        for text in (label, diff if diff not in label else ""):
            if text:
                bits.append(html.escape(text))
    board = r.get("board")
    board_name = board.get("name") if isinstance(board, dict) else board
    where = ", ".join(str(x) for x in (r.get("simulator"), r.get("target")) if x)
    if r.get("model") or board_name:
        bits.append(html.escape(f"{r.get('model') or r.get('variant') or ''} on {board_name or '?'}"
                                + (f" ({where})" if where else "")))
    tests = r.get("tests") or []
    if tests:
        bits.append(f"{sum(1 for t in tests if t.get('passed'))}/{len(tests)} tests passed")
    stats = r.get("error_stats") or []
    if stats and stats[0].get("max_absolute_error") is not None:
        bits.append(f"max abs error {_fmt(stats[0].get('max_absolute_error'))}")
    prof = r.get("profile") or {}
    e = prof.get("estimate") or {}
    if e.get("ms") is not None:               # the cycle estimate (kernels) on the board: before the counts
        bits.append(f"≈ {e['ms']:.3g} ms @ {e.get('clock_mhz') or 0:g} MHz on "
                    f"{html.escape(str(e.get('board') or e.get('core')))}"
                    + ("" if e.get("error_pct") is None else f" (estimate ±{e['error_pct']:.0f} %)"))
    if prof.get("total"):
        unit = prof.get("unit_info") or {}
        bits.append(f"{prof['total']:,} {html.escape(str(unit.get('name') or prof.get('unit') or 'ticks'))}"
                    " per inference")
    elif (r.get("cycles") or {}).get("available"):
        bits.append(f"{r['cycles'].get('total'):,} cycles ({NOT_CYCLE_ACCURATE})")
    gaps = r.get("gaps")
    if gaps:
        first = gaps.get("first_divergence")
        bits.append(f"{gaps.get('identical_layers', 0)}/{len(gaps.get('layers', []))} layers bit-identical"
                    + (f", first divergence {html.escape(first)}" if first else ""))
    faults = r.get("faults") or ([r["fault"]] if r.get("fault") else [])
    if faults:
        f = faults[0]
        bits.append("fault: " + html.escape(f if isinstance(f, str) else str(f.get("kind") or f)))
    if r.get("problem"):
        bits.append(html.escape(str(r["problem"])))
    run_s = (r.get("timings_s") or {}).get("run_s", r.get("run_s"))
    if isinstance(run_s, (int, float)):
        bits.append(f"run {run_s:.2f} s")
    return bits


class ResultView(QWidget):
    """The outcome as one compact line: a small coloured badge (the outcome string as the run reports it)
    and the key numbers beside it; the full details go to `details` (the panel puts it in a tab)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.outcome = QLabel("")
        self.outcome.setObjectName("targetOutcome")
        self.summary = ElidedLabel(NO_RUN)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.outcome)
        lay.addWidget(self.summary, 1)
        self.details = QTextBrowser()
        self.details.setOpenExternalLinks(False)
        self.details.setPlaceholderText(NO_DETAILS)
        self.clear()

    def show_outcome(self, text: str, color: str, summary: str = "") -> None:
        """`text` in a badge of `color`; `summary` (rich text) beside it."""
        self.outcome.setText(text)
        self.outcome.setStyleSheet(BADGE.format(color=color))
        self.outcome.setVisible(bool(text))
        self.summary.setText(summary)

    def show_recorded(self, summary: str) -> None:
        """A run recorded outside this app (an ETDump opened as a file): said in normal type, no badge."""
        self.outcome.setText("recorded run")
        self.outcome.setStyleSheet(RECORDED)
        self.outcome.setVisible(True)
        self.summary.setText(summary)

    def clear(self) -> None:
        self.outcome.setText("")
        self.outcome.hide()
        self.summary.setText(NO_RUN)
        self.details.clear()

    def show_error(self, exit_code: int, message: str, hint: str = "", detail: str = "") -> None:
        self.show_outcome(f"ERROR (exit {exit_code})", OUTCOME_COLORS["ERROR"], html.escape(message))
        parts = [f"<p><b>{html.escape(message)}</b></p>"]
        if hint:
            parts.append(f"<pre>{html.escape(hint)}</pre>")
        if detail:
            parts.append(f"<details><pre>{html.escape(detail[-4000:])}</pre>")
        self.details.setHtml("".join(parts))

    def show_result(self, r: dict[str, Any], exit_code: int) -> None:
        outcome = str(r.get("outcome", "NO RESULT"))
        self.show_outcome(outcome, OUTCOME_COLORS.get(outcome, OUTCOME_COLORS.get("NO RESULT", "#ef6c00")),
                          " · ".join(key_numbers(r)))
        board = r.get("board")
        board_name = board.get("name") if isinstance(board, dict) else board
        rows = [("model", r.get("model") or r.get("variant")), ("target", r.get("target")),
                ("board", f"{board_name} ({r.get('simulator') or (board or {}).get('simulator', '')})"
                 if isinstance(board, dict) or r.get("simulator") else board_name),
                ("exit status", f"firmware {r.get('exit_code')}, cmlens {exit_code}")]
        out = ["<table cellspacing=4>"] + [f"<tr><td><b>{k}</b></td><td>{_fmt(v)}</td></tr>" for k, v in rows]
        out.append("</table>")
        verdict = r.get("verdict")
        if isinstance(verdict, dict) and verdict.get("lines"):
            out.append("<p><b>verdict:</b> " + "<br>".join(html.escape(str(x)) for x in verdict["lines"]) + "</p>")
        if r.get("problem"):
            out.append(f"<p style='color:{UI['bad']}'><b>problem:</b> {html.escape(str(r['problem']))}</p>")
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
            out.append(f"<p style='color:{UI['bad']}'><b>fault:</b> {html.escape(text)}</p>")
        for e in (r.get("errors") or [])[:5]:
            out.append(f"<p style='color:{UI['bad']}'><tt>{html.escape(str(e))}</tt></p>")
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
        parts = [f"<p style='color:{UI['bad']}'><b>{html.escape(headline)}</b></p>"] if headline else []
        if not report:
            parts.append("<p>The doctor did not report (see the console).</p>")
            self.setHtml("".join(parts))
            return
        order = {"missing": 0, "warning": 1, "info": 2, "ok": 3}
        for item in sorted(report.get("items", []), key=lambda i: order.get(i.get("status"), 9)):
            st = item.get("status", "")
            color = {"missing": UI["bad"], "warning": UI["warn"], "ok": UI["ok"]}.get(st, UI["muted"])
            req = "" if item.get("required") else " <i>(optional)</i>"
            parts.append(f"<p><b style='color:{color}'>{html.escape(st.upper())}</b> "
                         f"<b>{html.escape(item.get('name', ''))}</b>{req}: {html.escape(item.get('detail', ''))}")
            if item.get("fix"):
                parts.append(f"<br><tt>{html.escape(item['fix'])}</tt>")
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
        lay.setSpacing(1)
        self.title = ElidedLabel("")
        self.plot = pg.PlotWidget(background="w")
        self.plot.setMinimumHeight(90)
        self.plot.setLabel("bottom", "layer (execution order)")
        self.plot.setLabel("left", "log10 MSE")
        self.plot.getPlotItem().getAxis("left").setToolTip("MSE target vs host, in real units, log10")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.scatter = pg.ScatterPlotItem(size=11, hoverable=True,
                                          tip=lambda x, y, data: f"{data}\nlog10 MSE {y:.2f}")
        self.scatter.sigClicked.connect(self._clicked)
        self.plot.addItem(self.scatter)
        # no label on the line: the identical layers' circles sit on it and a label there covers one
        # (the title names the line; the line's tooltip too)
        self.floor_line = pg.InfiniteLine(pos=-12, angle=0, pen=pg.mkPen("#2e7d32", style=Qt.PenStyle.DashLine))
        self.floor_line.setToolTip("bit-identical floor (MSE 0 drawn at 1e-12)")
        self.plot.addItem(self.floor_line)
        self.with_data = QWidget()
        box = QVBoxLayout(self.with_data)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(1)
        box.addWidget(self.title)
        box.addWidget(self.plot, 1)
        self.placeholder = _placeholder(NO_GAPS)
        self.body = QStackedWidget()           # no empty axes before a run
        self.body.addWidget(self.placeholder)
        self.body.addWidget(self.with_data)
        lay.addWidget(self.body, 1)
        self.layers: list[dict[str, Any]] = []

    def set_gaps(self, gaps: dict[str, Any] | None) -> None:
        import pyqtgraph as pg

        self.layers = list((gaps or {}).get("layers", []))
        spots: list[dict[str, Any]] = []
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
        self.body.setCurrentWidget(self.with_data if spots else self.placeholder)
        if gaps and not spots:
            self.placeholder.setText("The run's ETDump had no per-layer outputs to compare.")
        elif not gaps:
            self.placeholder.setText(NO_GAPS)
        ys = [s["pos"][1] for s in spots]
        if ys:                                         # the floor at the bottom, real gaps above it
            self.plot.setYRange(math.log10(floor) - 0.5, max(max(ys), -2.0) + 0.5)
            self.plot.setXRange(-0.5, len(spots) - 0.5)
        same = sum(1 for g in self.layers if g.get("mismatched", 1) == 0)
        first = (gaps or {}).get("first_divergence")
        self.title.setText(f"{len(self.layers)} layers, {same} bit-identical (green circles on the dashed floor line, 1e-12); "
                           "click a point to select its node"
                           + (f" — first divergence: {first} (red)" if first else ""))

    def _clicked(self, _item: Any, points: Any, *_: Any) -> None:
        for p in points[:1]:
            nid = p.data()
            if nid:
                self.nodeClicked.emit(str(nid))


def recorded_run_summary(overlay: dict[str, Any], name: str) -> str:
    """The one-line summary of a recorded run: the ETDump's name and its key numbers."""
    bits = [f"ETDump {html.escape(name)}"] if name else []
    bits += key_numbers({"gaps": overlay.get("gaps"), "profile": overlay.get("profile")})
    return " · ".join(bits)


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
    out += [f"<p style='color:{UI['muted']}'>note: {html.escape(n)}</p>" for n in (notes or [])]
    return "".join(out)
