"""Shared by the history tests: run the CLI in this process and capture its output; the state of a
repository that must not change."""
from __future__ import annotations

import contextlib
import hashlib
import io
import subprocess
from pathlib import Path


def cli(*argv: str) -> tuple[int, str, str]:
    from app.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def tree_state(repo: Path) -> tuple[str, str, str, str]:
    """`git status`, the index file's bytes (hash), HEAD and the worktree list: what a backfill must leave alone."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, text=True).stdout

    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return git("status", "--porcelain", "--untracked-files=all"), index, git("rev-parse", "HEAD"), \
        git("worktree", "list", "--porcelain")
