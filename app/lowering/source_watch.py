"""Notice when the model on screen changed on disk: the model file and every file the lowering recorded
(helpers it imported, data it read), watched with QFileSystemWatcher.

An event alone is not a change: editors save by writing a new file and renaming it over the old one
(the watch on the old inode ends: the path is watched again), and a `touch` changes nothing. After a
short quiet period the recorded content hashes are compared, so only a real edit (or a deletion) is
reported, once per distinct change."""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from backend_core.stages.models.dependencies import Dependency, describe_changes, file_digest

QUIET_MS = 300          # editors write in bursts (write, fsync, rename): look once they are done


class SourceWatch(QObject):
    """Signals:
        changed(str): what changed, as the cache says it ("helper.py changed", "... was deleted").
    """

    changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._poke)
        self._watcher.directoryChanged.connect(self._poke)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QUIET_MS)
        self._timer.timeout.connect(self.check)
        self._deps: list[Dependency] = []
        self._reported = ""
        self.any_event_is_a_change = False     # the last lowering failed: whatever happens may fix it

    @property
    def paths(self) -> list[str]:
        return [d.path for d in self._deps]

    def watch(self, deps: list[dict[str, Any]] | list[Dependency]) -> None:
        """Watch these files (Dependency or its dict) and their folders; replaces the previous set."""
        self.clear()
        self._deps = [d if isinstance(d, Dependency) else Dependency.from_dict(d) for d in deps]
        self._rewatch()
        self.check()                 # a file may have changed while the lowering ran

    def watch_file(self, path: str, name: str | None = None) -> None:
        """Watch one file by its current content (an artefact, or the model file of a failed load)."""
        try:
            digest = file_digest(path)
        except OSError:
            digest = ""
        self.watch([Dependency(os.path.realpath(path), name or os.path.basename(path), "model", digest)])

    def clear(self) -> None:
        self._timer.stop()
        for group in (self._watcher.files(), self._watcher.directories()):
            if group:
                self._watcher.removePaths(group)
        self._deps = []
        self._reported = ""
        self.any_event_is_a_change = False

    def _rewatch(self) -> None:
        """(Re)add every existing file and folder: a rename-over or a delete ends a file's watch."""
        files = set(self._watcher.files())
        dirs = set(self._watcher.directories())
        want_files = [p for p in self.paths if os.path.isfile(p) and p not in files]
        want_dirs = sorted({os.path.dirname(p) for p in self.paths} - dirs)
        want_dirs = [d for d in want_dirs if os.path.isdir(d)]
        if want_files or want_dirs:
            self._watcher.addPaths(want_files + want_dirs)

    def _poke(self, _path: str) -> None:
        if self._deps:
            self._timer.start()

    def check(self) -> str:
        """Compare the files with their recorded hashes now; emit changed() for a new difference."""
        self._rewatch()
        reasons = [r for r in (d.change() for d in self._deps) if r]
        reason = describe_changes(reasons)
        if not reason and self.any_event_is_a_change and self._timer_fired_by_event():
            reason = "the model's files changed on disk"
        if reason and reason != self._reported:
            self._reported = reason
            self.changed.emit(reason)
        elif not reason:
            self._reported = ""        # back to the recorded content: the next edit is news again
        return reason

    def _timer_fired_by_event(self) -> bool:
        return self.sender() is self._timer
