""""N random samples, or a folder of .pt / .npy files": the one picker for calibration inputs (model
bar) and numerics inputs (Numerics tab)."""
from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QSpinBox, QToolButton, QWidget


class SamplesPicker(QWidget):
    """A spin box of random samples and a checkable Folder… button. `value()` is the folder, or the
    count as a string, or None when `minimum` is 0 and the box shows `zero_text` (the default)."""

    def __init__(self, label: str, purpose: str, *, default: int = 0, minimum: int = 0,
                 zero_text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.purpose = purpose                    # "Calibrate" / "Compare": the tooltips say what for
        self.folder: str | None = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel(label))
        self.count = QSpinBox(self)
        self.count.setRange(minimum, 10000)
        if zero_text:
            self.count.setSpecialValueText(zero_text)
        self.count.setValue(default)
        self.count.setSuffix(" random")
        self.count.setToolTip("Number of random input samples (seeded, reproducible)"
                              + (f"; {zero_text}: the pipeline's" if zero_text else ""))
        lay.addWidget(self.count)
        self.folder_btn = QToolButton(self)
        self.folder_btn.setText("Folder…")
        self.folder_btn.setCheckable(True)
        self.folder_btn.clicked.connect(self._pick)
        lay.addWidget(self.folder_btn)
        self.set_folder(None)

    def _pick(self) -> None:
        if not self.folder_btn.isChecked():
            self.set_folder(None)
            return
        d = QFileDialog.getExistingDirectory(self, f"{self.purpose}: a folder of .pt / .npy inputs")
        self.set_folder(d or None)

    def set_folder(self, folder: str | None) -> None:
        self.folder = folder
        self.folder_btn.setChecked(bool(folder))
        self.count.setEnabled(not folder)
        self.folder_btn.setToolTip(f"{self.purpose} with {folder} (click to go back to random inputs)" if folder
                                   else f"{self.purpose} with a folder of .pt / .npy inputs instead")

    def set_count(self, n: int) -> None:
        self.set_folder(None)
        self.count.setValue(n)

    def set_value(self, value: str | None) -> None:
        """A count ("16") or a folder path, as the CLI takes it."""
        if value is None or value == "":
            self.set_count(self.count.minimum())
        elif value.isdigit():
            self.set_count(int(value))
        else:
            self.set_folder(value)

    def value(self) -> str | None:
        if self.folder:
            return self.folder
        n = self.count.value()
        return str(n) if n > 0 else None
