"""What the graph area says while there is no graph: how to start, what is running, or why nothing
arrived (bad input, a crash, a cancel) — never a "Lowering…" left under an error."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from backend_core.stages.models.sniff import is_artefact_path

from app.widgets.theme import PLACEHOLDER_STYLE

IDLE = "Choose a model and press Lower.\nStages appear here as they complete."


class GraphPlaceholder(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(IDLE, parent)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet(PLACEHOLDER_STYLE)

    def starting(self, source: str | None) -> None:
        if source is not None and is_artefact_path(source):
            self.setText(f"Reading {Path(source).name}…\nIts graphs appear here.")
        else:
            self.setText("Lowering…\nStages appear here as they complete.")

    def nothing_arrived(self, status: str, error: dict[str, Any] | None) -> None:
        """The job ended without a single stage: say why."""
        err = error or {}
        why = {"cancelled": "Cancelled before the first stage."}.get(
            status, err.get("message") or f"The worker ended ({status}) without a stage.")
        self.setText(f"Nothing to show.\n{why}\nSee the error above; choose a model or open a file.")
