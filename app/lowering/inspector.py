"""Node inspector: op, target, schema, arguments with decoded quant params, tensor, source
line, nn.Module path, the node's history across stages, and for a fallback: why."""
from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from backend_core.analyses.graph_layout import tensor_text
from backend_core.analyses.preflight.dim_order import describe as describe_dim_order
from backend_core.common.finding import Finding
from backend_core.common.snapshot.model import KIND_LABELS, GraphSnapshot, NodeSnapshot, QParam
from backend_core.stages.fallback.fixes import fix_for

from app.widgets import theme
from app.lowering.session import LoweringSession
from app.lowering.view_state import ViewState
from app.lowering.verify_job import RUNNING, SuggestionVerifier

CSS = """
body { font-family: 'DejaVu Sans'; font-size: 12px; color: #263238; }
h2 { font-size: 13px; margin: 2px 0 2px 0; }
h3 { font-size: 12px; margin: 10px 0 3px 0; color: #37474f; border-bottom: 1px solid #cfd8dc; }
td { padding: 1px 6px 1px 0; vertical-align: top; }
.k { color: #607d8b; white-space: nowrap; }
.mono { font-family: 'DejaVu Sans Mono'; font-size: 11px; }
.fb { background: #ffebee; border: 1px solid #e57373; padding: 6px; }
.q { color: #4527a0; }
.dim { color: #90a4ae; }
"""


def _e(x: object) -> str:
    return html.escape(str(x))


def qparam_html(q: QParam) -> str:
    base = f"{_e(q.dtype)} zp={q.zero_point} range=[{q.qmin}, {q.qmax}]"
    if q.per_channel and q.scales:
        return (f"<span class='q'>{base}, per-channel axis={q.axis}: {len(q.scales)} scales in "
                f"[{min(q.scales):.4g}, {max(q.scales):.4g}], mean {q.scale:.4g}</span>"
                f" <span class='dim'>({_e(q.source)})</span>")
    return f"<span class='q'>{base}, scale={q.scale:.6g}</span> <span class='dim'>({_e(q.source)})</span>"


class NodeInspector(QWidget):
    """Shows the selected node of the current stage (or a node another view asked for)."""

    def __init__(self, session: LoweringSession, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session, self.state = session, state
        # html of other features for a node (profile cost, memory bytes), added by the shell
        self.sections: list[Callable[[GraphSnapshot, NodeSnapshot], str]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._on_link)
        self.browser.document().setDefaultStyleSheet(CSS)
        theme.keep_light(self.browser)           # its HTML is coloured for a light background
        lay.addWidget(self.browser)
        row = QHBoxLayout()
        self.verify_btn = QPushButton("Verify suggestion", self)
        self.verify_btn.setToolTip("Re-lower a modified copy of the model (in a worker process) with the "
                                   "suggested change and check that the fallback goes away")
        self.verify_btn.clicked.connect(self.verify_selected)
        row.addWidget(self.verify_btn)
        self.verify_label = QLabel("", self)
        self.verify_label.setWordWrap(True)
        row.addWidget(self.verify_label, 1)
        lay.addLayout(row)
        self.verifier = SuggestionVerifier(self)
        self.verifier.changed.connect(lambda *_: self.refresh())
        state.selectionChanged.connect(lambda *_: self.refresh())
        state.stageChanged.connect(lambda *_: self.refresh())
        session.started.connect(self.verifier.reset)
        session.started.connect(self.refresh)
        session.finished.connect(lambda *_: self.refresh())
        self.refresh()

    # ------------------------------------------------------------------ verify
    def _selected_fallback(self) -> NodeSnapshot | None:
        final = self.session.final()
        if final is None or self.state.selected is None or self.state.stage != final.index:
            return None
        n = final.node(self.state.selected)
        return n if n is not None and n.fallback is not None else None

    def verify_selected(self) -> None:
        n = self._selected_fallback()
        if n is not None and self.session.lowering_job is not None and not self.verifier.is_running():
            self.verifier.verify(self.session.lowering_job, n.id)

    def shutdown(self) -> None:
        self.verifier.shutdown()

    def _update_verify(self) -> None:
        n = self._selected_fallback()
        if n is None or self.session.lowering_job is None or self.session.is_running():
            self.verify_btn.setVisible(n is not None)
            self.verify_btn.setEnabled(False)
            self.verify_label.setText("")
            return
        self.verify_btn.setVisible(True)
        fb = n.fallback
        assert fb is not None                   # _selected_fallback: a node with a fallback
        verdict = self.verifier.verdict(n.id) or ((fb.verified, fb.verification) if fb.verified else None)
        req = self.session.lowering_job.lower
        can_try = fix_for(fb, req.flow, req.channels_last) is not None or fb.verified
        self.verify_btn.setEnabled(bool(can_try) and not self.verifier.is_running())
        if verdict is not None:
            state, text = verdict
            color = {"verified": "#2e7d32", RUNNING: "#546e7a"}.get(state, "#c62828")
            self.verify_label.setText(f"<span style='color:{color}'><b>{_e(text.split(' — ')[0])}</b></span>"
                                      + (f"<br><span style='color:#607d8b'>{_e(text.split(' — ', 1)[1])}</span>"
                                         if " — " in text else ""))
        elif not can_try:
            self.verify_label.setText("<span style='color:#90a4ae'>no automatic change to try for this "
                                      "fallback</span>")
        else:
            self.verify_label.setText("")

    def refresh(self) -> None:
        self._update_verify()
        snaps = self.session.snapshots
        st = self.state.stage
        if st < 0 or st >= len(snaps) or self.state.selected is None:
            self.browser.setHtml("<p class='dim'>Select a node in the graph, the fallback table or "
                                 "with search to see its details here.</p>")
            return
        self.show_node(st, self.state.selected)

    def add_section(self, section: Callable[[GraphSnapshot, NodeSnapshot], str]) -> None:
        """Another feature's lines for the node shown ("" when it has none); shown from the next update."""
        self.sections.append(section)

    def show_node(self, stage: int, node_id: str) -> None:
        snap = self.session.snapshots[stage]
        n = snap.node(node_id)
        if n is None:
            self.browser.setHtml(f"<p class='dim'>{_e(node_id)} is not in stage {_e(snap.stage)}.</p>")
            return
        self.browser.setHtml(self.node_html(snap, n))

    # ------------------------------------------------------------------ html
    def node_html(self, snap: GraphSnapshot, n: NodeSnapshot) -> str:
        fill, border, text = (c.name() for c in theme.kind_colors(n.kind))
        out = [f"<h2>{_e(n.name).replace('_', '_&#8203;')}</h2>",
               f"<p><span style='background:{fill}; color:{text}; border:1px solid {border}'>"
               f"&nbsp;{_e(KIND_LABELS.get(n.kind, n.kind))}&nbsp;</span> "
               f"<span class='dim'>in stage {snap.index}: {_e(snap.stage)}</span></p>"]
        out.extend(self._preflight_html(snap, n))
        if n.fallback is not None:
            out.append(self._fallback_html(n))
        for section in self.sections:            # each its own block: inline lines ran into each other
            part = section(snap, n)
            if part:
                out.append(f"<div style='margin-top:4px'>{part}</div>")
        rows = [("op", f"<span class='mono'>{_e(n.target)}</span>"), ("fx op", _e(n.fx_op)),
                ("output", _e(tensor_text(n.dtype, n.shape)) or "—")]
        if n.dim_order is not None and len(n.dim_order) > 1:
            rows.append(("dim order", _e(describe_dim_order(n.dim_order))))
        if n.module_path or n.module_type:
            rows.append(("module", f"{_e(n.module_path or '(top level)')} <span class='dim'>"
                                   f"{_e(n.module_type)}</span>"))
        if n.source is not None:
            src = n.source
            link = QUrl.fromLocalFile(src.file).toString()
            rows.append(("source", f"<a href='{_e(link)}'>{_e(Path(src.file).name)}:{src.line}</a>"
                                   f" in {_e(src.function)}<br><span class='mono'>{_e(src.code)}</span>"))
            if src.chain:          # the calls from the user's own line down to the line that made the op
                rows.append(("called from", "<br>".join(
                    f"<span class='dim'>{'' if i == 0 else 'via '}</span><span class='mono'>{_e(_short_frame(c))}</span>"
                    for i, c in enumerate(src.chain))))
        if n.debug_handle is not None:
            rows.append(("debug handle", str(n.debug_handle)))
        if n.origin:
            rows.append(("from", _e(", ".join(n.origin))))
        if n.flags:
            rows.append(("flags", "<br>".join(f"{_e(k)} = {_e(v)}" for k, v in n.flags)))
        out.append(self._table(rows))
        if n.schema:
            out.append(f"<h3>Schema</h3><p class='mono'>{_e(n.schema)}</p>")
        out.append(self._args_html(snap, n))
        out.append(self._qparams_html(n))
        out.append(self._history_html(snap, n))
        return "".join(out)

    @staticmethod
    def _table(rows: list[tuple[str, str]]) -> str:
        return "<table>" + "".join(f"<tr><td class='k'>{k}</td><td>{v}</td></tr>" for k, v in rows) + "</table>"

    def _fallback_html(self, n: NodeSnapshot) -> str:
        fb = n.fallback
        assert fb is not None
        ev = "".join(f"<li>{_e(e)}</li>" for e in fb.evidence)
        return (f"<div class='fb'><b>⚠ Portable fallback — {_e(fb.category)}</b><br>{_e(fb.message)}"
                + (f"<br><b>Evidence</b><ul>{ev}</ul>" if ev else "")
                + (f"<b>The op you wrote</b><br><span class='mono'>{_e(fb.user_op.target)}</span> "
                   f"<span class='dim'>`{_e(fb.user_op.name)}` at quantization time"
                   + (f", {_e(fb.user_op.source)}" if fb.user_op.source else "") + "</span><br>"
                   if fb.user_op else "")
                + (f"<b>Suggested change</b><br>{_e(fb.suggestion)}<br>" if fb.suggestion else "")
                + (f"<span class='dim'>last touched by: {_e(fb.stage)}</span>" if fb.stage else "")
                + "</div>")

    @staticmethod
    def _preflight_html(snap: GraphSnapshot, n: NodeSnapshot) -> list[str]:
        """The pre-flight findings on this node (the final snapshot carries them in `extra`)."""
        out = []
        for d in snap.extra.get("preflight", ()):
            if d.get("node") != n.id:
                continue
            f = Finding.from_dict(d)
            color = "#c62828" if f.certain else "#ef6c00"
            ev = "".join(f"<li class='mono'>{_e(e)}</li>" for e in f.evidence)
            out.append(f"<div class='fb' style='border-color:{color}'><b style='color:{color}'>"
                       f"✕ Pre-flight: {_e(f.certainty)} on the target — {_e(f.rule)}</b><br>{_e(f.message)}"
                       + (f"<br><b>Fix</b><br>{_e(f.fix)}" if f.fix else "")
                       + (f"<br><b>Evidence</b><ul>{ev}</ul>" if ev else "")
                       + (f"<span class='dim'>rule read from ExecuTorch {_e(f.source)}</span>" if f.source else "")
                       + "</div>")
        return out

    def _args_html(self, snap: GraphSnapshot, n: NodeSnapshot) -> str:
        if not n.args:
            return ""
        qin = dict(n.input_qparams)
        nm = snap.node_map()
        input_pos = {nid: k for k, nid in enumerate(n.inputs)}
        rows = []
        for i, a in enumerate(n.args):
            desc = _e(a)
            ref = a[1:] if a.startswith("%") else None
            if ref and ref in nm:
                src = nm[ref]
                desc = (f"<a href='node:{_e(ref)}'>{_e(a)}</a> <span class='dim'>"
                        f"{_e(tensor_text(src.dtype, src.shape))}</span>")
                k = input_pos.get(ref)
                q = qin.get(i, qin.get(k) if k is not None else None)
                if q is not None:
                    desc += "<br>" + qparam_html(q)
            rows.append((f"[{i}]", desc))
        return "<h3>Arguments</h3>" + self._table(rows)

    def _qparams_html(self, n: NodeSnapshot) -> str:
        rows = []
        if n.output_qparams is not None:
            rows.append(("output", qparam_html(n.output_qparams)))
        rq = n.requant
        if rq is not None:
            if rq.effective_scales:
                sc = rq.effective_scales
                rows.append(("requantize", f"{len(sc)} multiplier/shift pair(s); effective scale "
                                           f"{min(sc):.5g}" + (f" … {max(sc):.5g}" if len(sc) > 1 else "")))
                rows.append(("", f"<span class='mono dim'>mult={_e(list(rq.multipliers[:4]))}"
                                 f"{'…' if len(rq.multipliers) > 4 else ''} shift={_e(list(rq.shifts[:4]))}"
                                 f"{'…' if len(rq.shifts) > 4 else ''}</span>"))
            for k in ("input_offset", "output_offset", "activation_min", "activation_max"):
                v = getattr(rq, k)
                if v is not None:
                    rows.append((k, str(v)))
        if not rows:
            return ""
        return "<h3>Quantization</h3>" + self._table(rows)

    def _history_html(self, snap: GraphSnapshot, n: NodeSnapshot) -> str:
        if len(self.session.snapshots) < 2:
            return ""
        prov = self.session.provenance()
        rows = []
        for i, nid in prov.history(n.id, snap.index):
            s = self.session.snapshots[i]
            if nid is None:
                cell = "<span class='dim'>— not in this stage</span>"
            else:
                other = s.node(nid)
                tgt = other.target if other else ""
                cell = (f"<a href='stage:{i}:{_e(nid)}'>{_e(nid)}</a><br>"
                        f"<span class='dim mono'>{_e(tgt)}</span>")
            name = f"<b>{_e(s.stage)}</b>" if i == snap.index else _e(s.stage)
            rows.append((str(i), f"{name}<br>{cell}"))
        return "<h3>History across stages</h3>" + self._table(rows)

    def _on_link(self, url: QUrl) -> None:
        s = url.toString()
        if s.startswith("stage:"):
            _, idx, nid = s.split(":", 2)
            self.state.focus(int(idx), nid)
        elif s.startswith("node:"):
            self.state.select(s[5:], center=True)
        else:
            QDesktopServices.openUrl(url)


def _short_frame(frame: str) -> str:
    """`/long/path/model.py:61 in forward: code` as `model.py:61 in forward: code`."""
    path, sep, rest = frame.partition(":")
    return f"{Path(path).name}{sep}{rest}"
