"""The colour legend of the graph view, drawn as a small overlay in the view's bottom-left
corner: node kinds, the fallback badge, and the diff outlines. It starts folded to a small
"Legend" chip (the graph comes first); a click on the chip or L unfolds it, a click on it folds it."""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QWidget

from app.widgets import theme

ROW_H = 16
SWATCH_W = 20
TEXT = QColor(theme.ON_LIGHT["title_fg"])     # on the box's own light background, whatever the palette


class _OverlayBox(QWidget):
    """A translucent rounded box in the view's bottom-left corner; clicks pass through."""

    BACKGROUND_ALPHA = 225

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)

    def reposition(self) -> None:
        """Bottom-left of the parent view (graphs start at the top, centred)."""
        parent = self.parentWidget()
        if parent is not None:
            self.move(8, max(4, parent.height() - self.height() - 8 - 14))

    def _begin_paint(self) -> QPainter:
        """A painter with the box's frame and background already drawn."""
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(QColor("#cfd8dc"), 1))
        p.setBrush(QColor(255, 255, 255, self.BACKGROUND_ALPHA))
        p.drawRoundedRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1), 5, 5)
        return p


class Legend(_OverlayBox):
    """A translucent box listing what the colours mean, or folded, a small chip that says where it is.
    A click on it asks to fold/unfold (`toggleRequested`: the graph's Legend action does it, so the
    toolbar button, L and the click stay in step)."""

    toggleRequested = Signal()
    CHIP_TEXT = "▸ Legend (L)"
    HEADER_TEXT = "▾ Legend (L)"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.collapsed = False
        self._font = theme.label_font(11)
        self._bold = theme.label_font(11, bold=True)
        self.rows: list[tuple[str, QColor, QColor, str]] = []
        for kind in theme.LEGEND_ORDER:
            fill, border, _ = theme.kind_colors(kind)
            self.rows.append((theme.LEGEND_LABELS[kind], fill, border, "warn" if kind == "portable_fallback" else ""))
        clear = QColor(0, 0, 0, 0)
        self.rows += [("added in this stage", clear, theme.ADDED, "outline"),
                      ("rewritten by this stage", clear, theme.REWRITTEN, "outline"),
                      ("removed (compare view)", clear, theme.REMOVED, "dashed"),
                      ("collapsed module group", QColor(theme.KIND_STYLE["group"][0]),
                       QColor(theme.KIND_STYLE["group"][1]), "dashed"),
                      ("pre-flight: will fail on the target", clear, clear, "will fail"),
                      ("pre-flight: may fail on the target", clear, clear, "may fail")]
        self._fit()

    def set_collapsed(self, on: bool) -> None:
        """Folded: the chip only; unfolded: every row under a header."""
        if on != self.collapsed:
            self.collapsed = on
            self._fit()
            self.update()

    def _fit(self) -> None:
        fm = QFontMetricsF(self._bold)
        if self.collapsed:
            self.resize(int(fm.horizontalAdvance(self.CHIP_TEXT) + 16), ROW_H + 8)
            self.setToolTip("Show the colour legend (L)")
        else:
            w = max(max(QFontMetricsF(self._font).horizontalAdvance(r[0]) for r in self.rows) + SWATCH_W + 22,
                    fm.horizontalAdvance(self.HEADER_TEXT) + 16)
            self.resize(int(w), ROW_H * (len(self.rows) + 1) + 10)
            self.setToolTip("Click to fold the legend (L)")
        self.reposition()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.button() == Qt.MouseButton.LeftButton:
            event.accept()
            self.toggleRequested.emit()
        else:
            event.ignore()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        p = self._begin_paint()
        p.setFont(self._bold)
        p.setPen(TEXT)
        p.drawText(QRectF(8, 4, self.width() - 12, ROW_H), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   self.CHIP_TEXT if self.collapsed else self.HEADER_TEXT)
        if self.collapsed:
            p.end()
            return
        p.setFont(self._font)
        y = 5 + ROW_H
        for text, fill, border, style in self.rows:
            pen = QPen(border, 2 if style in ("outline", "dashed") else 1.2)
            if style == "dashed":
                pen.setStyle(Qt.PenStyle.DashLine)
            p.setPen(pen)
            p.setBrush(fill)
            if style in theme.PREFLIGHT:           # the stop sign the graph puts on a node's corner
                p.setPen(QPen(QColor("#ffffff"), 1.2))
                p.setBrush(theme.PREFLIGHT[style])
                p.drawEllipse(QRectF(SWATCH_W / 2 - 1, y + 1, ROW_H - 3, ROW_H - 3))
                p.setPen(QColor("#ffffff"))
                p.drawText(QRectF(SWATCH_W / 2 - 1, y + 1, ROW_H - 3, ROW_H - 3), Qt.AlignmentFlag.AlignCenter,
                           "✕" if style == "will fail" else "?")
            else:
                p.drawRoundedRect(QRectF(7, y + 2, SWATCH_W - 4, ROW_H - 5), 3, 3)
            if style == "warn":
                p.setPen(QPen(QColor("#5d4037"), 0.8))
                p.setBrush(QColor("#ffca28"))
                p.drawEllipse(QRectF(SWATCH_W - 2, y, 7, 7))
            p.setPen(TEXT)
            p.drawText(QRectF(SWATCH_W + 10, y, self.width() - SWATCH_W - 12, ROW_H),
                       Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
            y += ROW_H
        p.end()


class HeatLegend(_OverlayBox):
    """The heat overlay's colour bar (SQNR in dB, bright = more error), drawn where the kind
    legend goes while the overlay is on; clicks pass through to the view."""

    BAR_W = 200
    BACKGROUND_ALPHA = 235

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._font = theme.label_font(11)
        self._bold = theme.label_font(11, bold=True)
        self.lo, self.hi, self.label = 0.0, 60.0, ""
        self.stops: list[QColor] = []
        self.texts: dict[str, str] = {}      # set_texts(): another quantity than SQNR (a cost overlay)
        fm = QFontMetricsF(self._font)
        self.resize(int(max(self.BAR_W, fm.horizontalAdvance("no numerics for this node") + 30) + 16),
                    4 * ROW_H + 14)
        self.hide()

    def set_range(self, lo: float, hi: float, label: str, stops: list[QColor]) -> None:
        """`stops`: colours from the worst (lo) to the best (hi) value. Resets set_texts()."""
        self.lo, self.hi, self.label, self.stops = lo, hi, label, list(stops)
        self.texts = {}
        fm = QFontMetricsF(self._bold)
        w = max(self.BAR_W + 16, int(fm.horizontalAdvance(f"SQNR: {label}") + 20), self.width())
        self.resize(w, self.height())
        self.update()

    def set_texts(self, title: str, low: str, high: str, none: str) -> None:
        """Wording for another quantity than SQNR, after set_range(): e.g. the profile's cost overlay
        ("share of instructions (QEMU -icount, not cycles)", "0.01 %", "48 %  costliest", "ran no instruction")."""
        self.texts = {"title": title, "low": low, "high": high, "none": none}
        fm = QFontMetricsF(self._bold)
        self.resize(max(self.BAR_W + 16, int(fm.horizontalAdvance(title) + 20)), self.height())
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        from PySide6.QtGui import QLinearGradient

        p = self._begin_paint()
        p.setFont(self._bold)
        p.setPen(TEXT)
        p.drawText(QRectF(8, 4, self.width() - 16, ROW_H), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   self.texts.get("title", f"SQNR: {self.label}"))
        bar = QRectF(8, 6 + ROW_H, self.width() - 16, ROW_H - 2)
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        n = len(self.stops)
        for i, c in enumerate(self.stops):
            grad.setColorAt(i / max(n - 1, 1), c)
        p.setPen(QPen(QColor("#90a4ae"), 0.8))
        p.setBrush(grad)
        p.drawRect(bar)
        p.setFont(self._font)
        p.setPen(TEXT)
        y = bar.bottom() + 1
        p.drawText(QRectF(8, y, bar.width(), ROW_H), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   self.texts.get("low", f"{self.lo:.0f} dB  more error"))
        p.drawText(QRectF(8, y, bar.width(), ROW_H), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   self.texts.get("high", f"{self.hi:.0f} dB"))
        y += ROW_H
        p.setPen(QPen(QColor("#cfd8dc"), 1))
        p.setBrush(theme.HEAT_NONE_FILL)
        p.drawRoundedRect(QRectF(8, y + 2, SWATCH_W - 4, ROW_H - 5), 3, 3)
        p.setPen(QColor("#78909c"))
        p.drawText(QRectF(SWATCH_W + 10, y, self.width() - SWATCH_W - 12, ROW_H),
                   Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                   self.texts.get("none", "no numerics for this node"))
        p.end()
