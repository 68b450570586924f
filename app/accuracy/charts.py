"""QPainter charts of an evaluation: top-1 and agreement bars per model, confusion matrices side by side,
and an input thumbnail. They draw what they are given (dicts of the evaluate step's JSON) and own nothing
else; every text is measured before it is drawn, so nothing overlaps at any size."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.widgets import theme

MODEL_ORDER = ("float", "fake_quant", "lowered", "target")
MODEL_LABELS = {"float": "float", "fake_quant": "fake-quant", "lowered": "lowered (host)", "target": "target"}
SERIES = (("top1", "top-1 accuracy", "#1e88e5"), ("agreement", "agreement with float", "#fb8c00"))


def models_in(result: dict[str, Any] | None) -> list[str]:
    """The models an evaluation measured, in the order float, fake-quant, lowered, target."""
    if not result:
        return []
    return [k for k in MODEL_ORDER if k in (result.get("models") or {})]


class AccuracyBars(QWidget):
    """One row per model: a top-1 bar and an agreement-with-float bar (0-100 %), the value beside each bar.
    The scale starts at `floor` (the lowest value minus a margin, at most 0 %) so a 0.7-point drop is
    visible; the axis says where it starts."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: dict[str, Any] | None = None
        self.setMinimumSize(260, 150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_result(self, result: dict[str, Any] | None) -> None:
        self.result = result
        tips = []
        models = (result or {}).get("models", {})
        for k in models_in(result):
            m = models[k]
            tips.append(f"{MODEL_LABELS[k]}: " + ", ".join(
                f"{label} {100 * m[key]:.2f} %" for key, label, _ in SERIES if isinstance(m.get(key), (int, float))))
        self.setToolTip("\n".join(tips))
        self.update()

    def values(self) -> dict[str, dict[str, float]]:
        """{model: {"top1": %, "agreement": %}} of what is drawn."""
        out: dict[str, dict[str, float]] = {}
        models = (self.result or {}).get("models", {})
        for k in models_in(self.result):
            m = models[k]
            out[k] = {key: 100 * m[key] for key, _, _ in SERIES if isinstance(m.get(key), (int, float))}
        return out

    @staticmethod
    def name(key: str, result: dict[str, Any] | None) -> str:
        """A row's name; the target's says on how many samples it ran (the first K)."""
        n = ((result or {}).get("models", {}).get(key) or {}).get("n") if key == "target" else None
        return f"target ({n} samples)" if n else MODEL_LABELS[key]

    def floor(self) -> float:
        vals = [v for row in self.values().values() for v in row.values()]
        if not vals:
            return 0.0
        lo = min(vals)
        return max(0.0, float(int((lo - 5) // 10 * 10))) if lo > 20 else 0.0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(380, 200)

    def paintEvent(self, _ev: Any) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        fm = QFontMetrics(self.font())
        vals = self.values()
        text = QColor("#263238")
        if not vals:
            p.end()
            return
        # legend row at the top
        x, y = 6, 4 + fm.ascent()
        for _key, label, color in SERIES:          # wraps to a second row when the widget is narrow
            w = 14 + fm.horizontalAdvance(label)
            if x > 6 and x + w > self.width() - 4:
                x, y = 6, y + fm.height() + 2
            p.fillRect(QRectF(x, y - fm.ascent() + 2, 10, 10), QColor(color))
            p.setPen(text)
            p.drawText(x + 14, y, label)
            x += w + 14
        top = y + fm.descent() + 8
        name_w = max(fm.horizontalAdvance(self.name(k, self.result)) for k in vals) + 10
        val_w = fm.horizontalAdvance("100.00 %") + 8
        left, right = name_w, self.width() - val_w - 6
        bottom = self.height() - fm.height() - 8
        if right - left < 40 or bottom - top < 20:
            p.end()
            return
        lo = self.floor()
        scale = (right - left) / (100.0 - lo)
        rows = len(vals)
        row_h = (bottom - top) / rows
        bar_h = max(4.0, min(18.0, (row_h - 6) / 2))
        for r, (k, row) in enumerate(vals.items()):
            y0 = top + r * row_h + (row_h - 2 * bar_h - 2) / 2
            p.setPen(text)
            p.drawText(QRectF(0, y0, name_w - 6, 2 * bar_h + 2), int(Qt.AlignmentFlag.AlignRight
                                                                    | Qt.AlignmentFlag.AlignVCenter), self.name(k, self.result))
            for i, (key, _label, color) in enumerate(SERIES):
                if key not in row:
                    continue
                v = row[key]
                yb = y0 + i * (bar_h + 2)
                bw = max(1.0, (v - lo) * scale)
                p.fillRect(QRectF(left, yb, bw, bar_h), QColor(color))
                if bar_h >= fm.height() - 6:
                    p.setPen(text)
                    p.drawText(QRectF(left + bw + 4, yb - 2, val_w, bar_h + 4),
                               int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), f"{v:.2f} %")
        # axis
        p.setPen(QPen(QColor("#90a4ae")))
        p.drawLine(int(left), int(bottom), int(right), int(bottom))
        p.setPen(text)
        drawn_right = -1e9
        for tick in (lo, 100.0, (lo + 100) / 2):              # the ends first; the middle only where it fits
            xt = left + (tick - lo) * scale
            s = f"{tick:g} %"
            tw = fm.horizontalAdvance(s)
            x0 = min(max(xt - tw / 2, 0), self.width() - tw - 1)
            if tick not in (lo, 100.0) and not (drawn_right + 6 <= x0
                                                and x0 + tw + 6 <= left + (100 - lo) * scale - fm.horizontalAdvance("100 %") / 2):
                continue
            p.drawLine(int(xt), int(bottom), int(xt), int(bottom) + 3)
            p.drawText(int(x0), int(bottom) + 4 + fm.ascent(), s)
            if tick == lo:
                drawn_right = x0 + tw
        p.end()


class ConfusionMatrices(QWidget):
    """The confusion matrix of each model side by side (rows: true class, columns: predicted), cells shaded
    by their share of the row; an off-diagonal cell that float does not have is outlined in red (the
    quantised model's own mistakes). Counts are written in the cells when they fit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: dict[str, Any] | None = None
        self.setMinimumSize(300, 140)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_result(self, result: dict[str, Any] | None) -> None:
        self.result = result
        self.update()

    def matrices(self) -> list[tuple[str, list[list[int]]]]:
        if not self.result:
            return []
        return [(k, self.result["models"][k]["confusion"]) for k in models_in(self.result)
                if self.result["models"][k].get("confusion")]

    def class_names(self, n: int) -> list[str]:
        names = (self.result or {}).get("classes")
        return [str(c) for c in names[:n]] if names and len(names) >= n else [str(i) for i in range(n)]

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(640, 220)

    def paintEvent(self, _ev: Any) -> None:  # noqa: N802 - Qt API
        mats = self.matrices()
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("white"))
        if not mats:
            p.end()
            return
        fm = QFontMetrics(self.font())
        n = len(mats[0][1])
        names = self.class_names(n)
        label_w = max(fm.horizontalAdvance(s) for s in names) + 4
        gap = 10
        title_h = fm.height() + 2
        each_w = (self.width() - gap * (len(mats) - 1) - 4) / len(mats)
        cell = max(2.0, min((each_w - label_w) / n, (self.height() - title_h - 2 * fm.height() - 8) / n))
        caption = "right/all · rows: true class · columns: predicted · red outline: more of a mistake than float makes"
        p.setPen(QColor(theme.ON_LIGHT["muted"]))
        p.drawText(QRectF(2, title_h + fm.height() + 4 + n * cell, self.width() - 4, fm.height()),
                   int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   fm.elidedText(caption, Qt.TextElideMode.ElideRight, self.width() - 4))
        float_conf = dict(mats).get("float")
        text = QColor("#263238")
        for m, (key, conf) in enumerate(mats):
            x0 = 2 + m * (each_w + gap)
            gx = x0 + label_w
            gy = title_h + fm.height() + 2
            p.setPen(text)
            title = f"{MODEL_LABELS[key]}: {sum(conf[i][i] for i in range(n))}/{sum(map(sum, conf))}"
            p.drawText(QRectF(x0, 0, each_w, title_h), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                       fm.elidedText(title, Qt.TextElideMode.ElideRight, int(each_w)))
            show_names = cell >= max(fm.horizontalAdvance(s) for s in names) + 2 and cell >= fm.height() - 4
            for i in range(n):
                row_sum = sum(conf[i]) or 1
                if show_names:
                    p.setPen(text)
                    p.drawText(QRectF(x0, gy + i * cell, label_w - 3, cell),
                               int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), names[i])
                    p.drawText(QRectF(gx + i * cell, title_h, cell, fm.height()),
                               int(Qt.AlignmentFlag.AlignCenter), names[i])
                for j in range(n):
                    v = conf[i][j]
                    share = v / row_sum
                    base = QColor("#2e7d32") if i == j else QColor("#c62828")
                    c = QColor(255, 255, 255)
                    if v:
                        t = 0.15 + 0.85 * share
                        c = QColor(int(255 + (base.red() - 255) * t), int(255 + (base.green() - 255) * t),
                                   int(255 + (base.blue() - 255) * t))
                    r = QRectF(gx + j * cell, gy + i * cell, cell, cell)
                    p.fillRect(r, c)
                    p.setPen(QPen(QColor("#eceff1")))
                    p.drawRect(r)
                    new = (i != j and v and float_conf is not None and key != "float"
                           and v > float_conf[i][j])
                    if new:
                        p.setPen(QPen(QColor("#b71c1c"), 2))
                        p.drawRect(r.adjusted(1, 1, -1, -1))
                    if v and cell >= fm.horizontalAdvance(str(v)) + 4 and cell >= fm.height():
                        p.setPen(QColor("white") if share > 0.5 else text)
                        p.drawText(r, int(Qt.AlignmentFlag.AlignCenter), str(v))
        p.end()


class Thumbnail(QLabel):
    """A flipped sample's input as a grey image, upscaled without smoothing (an 8x8 digit as 8x8 blocks)."""

    SIZE = 112

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedSize(self.SIZE, self.SIZE)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet(f"border: 1px solid {theme.UI['muted']}")
        self.image: QImage | None = None

    def set_input(self, data: dict[str, Any] | None) -> bool:
        """Draw `data` (evaluate's per-flip "input": shape, min, max, values); False when it is no image."""
        img = to_image(data)
        self.image = img
        if img is None:
            self.clear()
            self.setText("no image")
            return False
        self.setPixmap(QPixmap.fromImage(img).scaled(self.SIZE - 4, self.SIZE - 4, Qt.AspectRatioMode.KeepAspectRatio,
                                                     Qt.TransformationMode.FastTransformation))
        return True


def to_image(data: dict[str, Any] | None) -> QImage | None:
    """A (1, C, H, W) / (C, H, W) / (H, W) input with C = 1 (grey) or 3 (RGB) as a QImage; else None."""
    if not data or not data.get("values"):
        return None
    shape = [d for d in data["shape"]]
    while len(shape) > 3 and shape[0] == 1:
        shape = shape[1:]
    if len(shape) == 2:
        shape = [1, *shape]
    if len(shape) != 3 or shape[0] not in (1, 3) or shape[1] < 2 or shape[2] < 2:
        return None
    c, h, w = shape
    vals = data["values"]
    lo, hi = float(data.get("min", min(vals))), float(data.get("max", max(vals)))
    span = hi - lo or 1.0
    img = QImage(w, h, QImage.Format.Format_RGB32)
    for y in range(h):
        for x in range(w):
            ch = [int(255 * (vals[k * h * w + y * w + x] - lo) / span) for k in range(c)]
            r, g, b = (ch * 3)[:3] if c == 1 else ch
            img.setPixelColor(x, y, QColor(r, g, b))
    return img
