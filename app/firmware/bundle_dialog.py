"""File > Export > Firmware bundle…: one dialog that asks for everything the export needs up front (the
ExecuTorch checkout, CMSIS-NN, a board, the bundle folder by its own name, --check), says what is wrong
in the window's words before anything runs, exports in the job worker (the Job `cmlens export` submits:
Exporter.export_bundle) and ends with what was written and a link that opens the folder.

Why (issue 44, item 14): the menu entry asked for an existing folder first (a new name got Qt's
"Directory not found"), said only afterwards that no checkout was set, answered "Pass --et-root PATH"
(command-line advice in a window), wrote into a subfolder the user had not named, and confirmed nothing."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl, Qt, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout,
                               QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget)

from app.lowering.exporter import Exporter, window_words


def _with_browse(edit: QLineEdit, on_browse: Any) -> QWidget:
    w = QWidget()
    h = QHBoxLayout(w)
    h.setContentsMargins(0, 0, 0, 0)
    h.addWidget(edit, 1)
    b = QPushButton("Browse…")
    b.clicked.connect(on_browse)
    h.addWidget(b)
    return w


def boards_for(target: str) -> list[tuple[str, str]]:
    """(label, board name) of every board whose core is `target`, for the board list."""
    from backend_core.common.boards.specs import all_boards
    from backend_core.common.cpus import normalise_target
    from backend_core.target.memory.fit import kib

    out = []
    for b in all_boards().values():
        try:
            same = bool(b.core) and normalise_target(b.core) == target
        except Exception:  # noqa: BLE001  a row whose core is not a CPU we lower for: not offered
            same = False
        if same:
            ram = sum(r.size for r in b.ram)
            flash = sum(r.size for r in b.flash)
            out.append((f"{b.name}  ({kib(ram)} RAM" + (f", {kib(flash)} flash)" if flash else ")"), b.name))
    return sorted(out)


class BundleDialog(QDialog):
    """Widgets (for tests): et_root, cmsis, board, folder, check, replace, problem, result, export_button.
    Signal written(str folder): a bundle was written there."""

    written = Signal(str)

    def __init__(self, exporter: Exporter, model_name: str, target: str, et_root: str, cmsis: str,
                 start_dir: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.exporter, self.target = exporter, target
        self.setWindowTitle("Export a firmware bundle")
        self.setMinimumWidth(640)
        self.resize(860, 520)
        self.et_root = QLineEdit(et_root)
        self.et_root.setPlaceholderText("the ExecuTorch checkout (a folder named executorch)")
        self.cmsis = QLineEdit(cmsis)
        self.cmsis.setPlaceholderText("optional: else ExecuTorch's CMake downloads it")
        self.board = QComboBox()
        self.board.addItem(f"No board: the CPU only ({target}), no fit verdict", None)
        for label, name in boards_for(target):
            self.board.addItem(label, name)
        self.folder = QLineEdit(str(Path(start_dir or Path.home()) / f"{model_name}_bundle"))
        self.folder.setToolTip("The bundle folder itself: made if it does not exist (its parent must exist)")
        self.check = QCheckBox("Prove it on QEMU: build an example firmware and compare its outputs bit for bit "
                               "(a minute or more)")
        self.replace = QCheckBox("Replace what the folder holds (it is not an earlier bundle)")
        self.replace.setVisible(False)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00020;")
        self.result_text = QLabel()
        self.result_text.setWordWrap(True)
        self.result_text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.result_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.result_text.linkActivated.connect(lambda url: QDesktopServices.openUrl(QUrl(url)))
        self._lay_out()
        exporter.message.connect(self._on_message)
        exporter.exported.connect(self._on_exported)
        self.finished.connect(self._detach)

    def _detach(self) -> None:
        """A closed dialog hears no more exports (the exporter outlives it)."""
        self.exporter.message.disconnect(self._on_message)
        self.exporter.exported.disconnect(self._on_exported)

    def _lay_out(self) -> None:
        form = QFormLayout()
        form.addRow("ExecuTorch checkout", _with_browse(self.et_root, lambda: self._pick_dir(self.et_root)))
        form.addRow("CMSIS-NN", _with_browse(self.cmsis, lambda: self._pick_dir(self.cmsis)))
        form.addRow("Board", self.board)
        form.addRow("Bundle folder", _with_browse(self.folder, self._pick_folder))
        v = QVBoxLayout(self)
        v.addLayout(form)
        v.addWidget(self.check)
        v.addWidget(self.replace)
        v.addWidget(self.problem)
        v.addWidget(self.result_text, 1)
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.export_button.setDefault(True)
        self.export_button.clicked.connect(self.start)
        self.close_button.clicked.connect(self._close_or_cancel)
        v.addWidget(self.buttons)

    def _pick_dir(self, edit: QLineEdit) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a folder", edit.text() or os.getcwd())
        if path:
            edit.setText(path)

    def _pick_folder(self) -> None:
        """A folder to put the bundle in; the bundle's own name stays the one typed (a new name is fine)."""
        current = Path(self.folder.text().strip() or Path.home())
        path = QFileDialog.getExistingDirectory(self, "Put the bundle folder in…", str(current.parent))
        if path:
            self.folder.setText(str(Path(path) / (current.name or "bundle")))

    # -- what is wrong, before anything runs -------------------------------------------------------
    def problems(self) -> list[str]:
        """What stops the export, checkout first, in the window's words ([] when it can start)."""
        from backend_core.common.errors import BadInputError
        from backend_core.target.export import check_destination
        from backend_core.target.toolchain.checkout import inspect_checkout

        out = []
        root = self.et_root.text().strip()
        if not root:
            out.append("Set the ExecuTorch checkout: the bundle's CMake and kernel list are made against it.")
        else:
            try:
                inspect_checkout(root, source="the checkout field").require_buildable()
            except BadInputError as e:
                out.append(window_words(f"{e.message} {e.hint}".strip()))
        cmsis = self.cmsis.text().strip()
        if cmsis and not Path(cmsis).expanduser().is_dir():
            out.append(f"CMSIS-NN: {cmsis} is not a folder (leave it empty to let ExecuTorch's CMake download it).")
        text = self.folder.text().strip()
        if not text:
            out.append("Name the bundle folder.")
            return out
        folder = Path(text).expanduser().absolute()
        self.replace.setVisible(False)
        try:
            check_destination(folder, self.replace.isChecked())
        except BadInputError as e:
            if "not an earlier bundle" in e.message:
                self.replace.setVisible(True)
                out.append(f"{folder} holds files that are not a bundle: pick another folder, or tick Replace.")
            elif "parent folder" in e.message:
                out.append(f"{folder.parent} does not exist: the bundle folder is made inside an existing folder.")
            else:
                out.append(window_words(f"{e.message} {e.hint}".strip()))
        return out

    def start(self) -> None:
        """Export when nothing is wrong; else say what is."""
        if self.exporter.bundle_job.is_running():
            return
        found = self.problems()
        self.problem.setText("\n".join(found))
        if found:
            return
        self.result_text.setText("")
        self.folder_written = str(Path(self.folder.text().strip()).expanduser().absolute())
        self.exporter.export_bundle(self.folder_written, self.et_root.text().strip(), self.cmsis.text().strip(),
                                    check=self.check.isChecked(), force=self.replace.isChecked(),
                                    board=self.board.currentData())
        self.export_button.setEnabled(False)
        self.close_button.setText("Cancel export")

    def _close_or_cancel(self) -> None:
        if self.exporter.bundle_job.is_running():
            self.exporter.cancel_bundle()
        else:
            self.reject()

    def _on_message(self, text: str) -> None:
        if self.exporter.bundle_job.is_running():
            self.result_text.setText(text)

    def _on_exported(self, kind: str, folder: str, error: str) -> None:
        if kind != "bundle":
            return
        self.export_button.setEnabled(True)
        self.close_button.setText("Close")
        if error:
            cancelled = error == "cancelled"
            self.problem.setText("" if cancelled else window_words(error))
            self.result_text.setText(self._cancelled_text(folder) if cancelled else "")
            return
        self.problem.setText("")
        self.result_text.setText(written_text(folder, (self.exporter.bundle_result or {}).get("steps", {}).get("export")))
        self.written.emit(folder)

    def _cancelled_text(self, folder: str) -> str:
        from backend_core.target.export import is_bundle

        if folder and is_bundle(Path(folder)):
            return f"{_link(folder)}: bundle written, not checked (export again with the QEMU proof ticked)."
        return "Cancelled: nothing was written."


def _link(folder: str) -> str:
    return f'<a href="{QUrl.fromLocalFile(folder).toString()}">{folder}</a>'


def written_text(folder: str, section: dict[str, Any] | None) -> str:
    """The end of the dialog: what was written, with a link that opens the folder."""
    section = section or {}
    files = section.get("files") or []
    mem, pools = section.get("memory") or {}, section.get("pools") or {}
    lines = [f"<b>Wrote {len(files)} files to {Path(folder).name}</b> &nbsp; "
             f"<a href=\"{QUrl.fromLocalFile(folder).toString()}\">open the folder</a>",
             f"Folder: {_link(folder)}", "Files: " + ", ".join(files) + ".",
             f"Flash: model.pte {mem.get('model_flash_bytes', 0):,} B; RAM pools {pools.get('ram_bytes', 0):,} B."]
    fit = section.get("board_fit")
    if fit:
        lines.append(f"Board fit: {'fits' if fit['fits'] else 'DOES NOT FIT'} (RAM free {fit['ram_free_bytes']:,} B).")
    if section.get("fallbacks"):
        lines.append(f"{len(section['fallbacks'])} op(s) run on portable kernels (see README.md).")
    check = section.get("check")
    if check:
        lines.append(f"Proof on QEMU: <b>{check['verdict']}</b>: {check['summary']}")
        lines += [f"warning: {w}" for w in check.get("warnings") or []]
    lines.append("README.md there says how to build it into your firmware and run it.")
    return "<br>".join(lines)
