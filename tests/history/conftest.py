"""A model kept in git, made here: 8 commits of a small model file. Commit 5 adds a LayerNorm (no
CMSIS-NN kernel: it falls back to a portable kernel), commit 7 widens the first layer (the arena grows);
the others change comments or another file only, so their figures equal their parent's."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

HEAD = '''"""A small MLP kept in git for the history tests."""
import torch
from torch import nn

WIDTH = {width}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, WIDTH)
        {norm_init}
        self.fc2 = nn.Linear(WIDTH, 8)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        {norm_call}
        return self.fc2(x)


def get_model():
    torch.manual_seed(0)          # fixed weights, as a trained model's: equal commits lower to equal programs
    return Net().eval()


def get_example_inputs():
    return (torch.randn(1, 16),)
# {note}
'''

# (subject, width, layer norm, note)
COMMITS = [
    ("Add the model", 32, False, "v1"),
    ("Document the model", 32, False, "documented"),
    ("Add a README", 32, False, "documented"),          # only README.md changes
    ("Reword a comment", 32, False, "reworded"),
    ("Add a LayerNorm after fc1", 32, True, "reworded"),
    ("Tidy comments", 32, True, "tidied"),
    ("Widen fc1 to 96", 96, True, "tidied"),
    ("Final touches", 96, True, "final"),
]


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com"}
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def model_text(width: int, norm: bool, note: str) -> str:
    return HEAD.format(width=width, note=note,
                       norm_init="self.ln = nn.LayerNorm(WIDTH)" if norm else "# no normalisation",
                       norm_call="x = self.ln(x)" if norm else "# no normalisation")


def make_repo(root: Path) -> tuple[Path, list[str]]:
    """The repository and its 8 commits, oldest first."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    commits = []
    for i, (subject, width, norm, note) in enumerate(COMMITS):
        (root / "model.py").write_text(model_text(width, norm, note))
        if subject == "Add a README":
            (root / "README.md").write_text("A small model.\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", subject, date=f"2026-11-{i + 1:02d}T12:00:00+00:00")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return root, commits


@pytest.fixture(scope="session")
def model_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One repository for the session (its worktree paths repeat, so later tests hit the lowering cache)."""
    return make_repo(tmp_path_factory.mktemp("history") / "repo")
