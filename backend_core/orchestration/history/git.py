"""The model's git repository, read through `git` (argument lists, never a shell): its root, commits,
ranges, and temporary worktrees outside the user's tree. Nothing here writes to the user's work tree or
index; `git worktree add` only adds an entry under .git/worktrees, removed again with the worktree."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from backend_core.common.errors import BadInputError

_ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def git(repo: str | Path, *args: str, check: bool = True, stdin: str | None = None) -> str:
    """`stdin`: text for git's standard input (`--stdin`, `--batch-check`); none by default."""
    try:
        p = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=_ENV, timeout=120,
                           **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}))
    except FileNotFoundError:
        raise BadInputError("git is not installed.", "Install it (apt-get install git).") from None
    if check and p.returncode != 0:
        raise GitError(p.stderr.strip() or p.stdout.strip() or f"git {' '.join(args)} failed")
    return p.stdout


class GitError(BadInputError):
    """A git command failed on the user's input (unknown commit, bad range)."""


@dataclass(frozen=True)
class ModelInRepo:
    """A model file and the repository it lives in."""
    root: Path                 # the work tree's root
    path: str                  # the model file, relative to root (posix)
    name: str = ""             # `:NAME` of file.py:NAME, if given

    @property
    def key(self) -> str:
        """The model's key in the store: its repo-relative path (plus :NAME)."""
        return f"{self.path}:{self.name}" if self.name else self.path

    def source_in(self, tree: str | Path) -> str:
        """The model source to lower inside another checkout of the same repository (a worktree)."""
        p = str(Path(tree) / self.path)
        return f"{p}:{self.name}" if self.name else p


def split_source(source: str) -> tuple[str, str]:
    """`dir/model.py:Net` -> ("dir/model.py", "Net"); a plain path -> (path, "")."""
    head, sep, tail = source.rpartition(":")
    if sep and head.endswith(".py") and tail and "/" not in tail and "\\" not in tail:
        return head, tail
    return source, ""


def locate(source: str) -> ModelInRepo:
    """BadInputError (exit 2) when the file does not exist or is not inside a git work tree."""
    path, name = split_source(source)
    p = Path(path).expanduser()
    if not p.is_file():
        raise BadInputError(f"Model file not found: {path}",
                            "History follows a model file kept in git: give its path (model.py[:NAME]).")
    p = p.resolve()
    out = _toplevel(str(p.parent))
    if not out:
        raise BadInputError(f"{path} is not inside a git repository.",
                            "History records a model per commit of its repository: `git init` and commit it, "
                            "or give a model file that is in one.")
    root = Path(out).resolve()
    return ModelInRepo(root, p.relative_to(root).as_posix(), name)


_ROOTS: dict[str, str] = {}


def _toplevel(folder: str) -> str:
    """The work tree's root of `folder` ("" outside one). A root found is kept for the process: `--record`
    asks before the job, when it records and for the default store (a git process each, 4 ms). Only a
    repository is kept: a folder that is none may become one later."""
    out = _ROOTS.get(folder) or _nearest_git(folder) or git(folder, "rev-parse", "--show-toplevel",
                                                             check=False).strip()
    if out:
        _ROOTS[folder] = out
    return out


_GIT_LOOKUP_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def _nearest_git(folder: str) -> str:
    """The nearest folder up from `folder` (resolved) with a `.git` (a folder, or a worktree's or a
    submodule's file), as git looks for it; "" when there is none or the environment changes git's
    search (then git answers). A git process less for every `--record` (2-3 ms)."""
    if any(v in os.environ for v in _GIT_LOOKUP_VARS):
        return ""
    here = Path(folder).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return str(d)
    return ""


def resolve_commit(root: Path, rev: str) -> str:
    out = git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
    if not out:
        raise GitError(f"Unknown commit {rev!r} in {root}.", "Give a commit, tag or branch of the repository "
                       "(`git log --oneline` lists them).")
    return out


def commits_in_range(root: Path, spec: str) -> list[str]:
    """`A..B`: the commits after A up to B (git's meaning), oldest first, along first parents."""
    if ".." not in spec or spec.count("..") != 1 or "..." in spec:
        raise BadInputError(f"--range {spec!r} is not A..B.", "Write it like --range v1.0..HEAD or abc123..def456.")
    a, b = spec.split("..")
    a, b = resolve_commit(root, a or "HEAD"), resolve_commit(root, b or "HEAD")
    out = git(root, "rev-list", "--reverse", "--first-parent", f"{a}..{b}").split()
    if not out:
        raise BadInputError(f"The range {spec} has no commits.", "Give A..B with A an ancestor of B (oldest first).")
    return out


def last_commits(root: Path, n: int, rev: str = "HEAD") -> list[str]:
    if n < 1:
        raise BadInputError(f"--last {n}: give 1 or more commits.", "E.g. --last 20.")
    out = git(root, "rev-list", "--reverse", "--first-parent", "-n", str(n), resolve_commit(root, rev)).split()
    if not out:
        raise BadInputError("The repository has no commits.", "Commit the model first.")
    return out


def graph_order(root: Path, commits: list[str]) -> dict[str, int]:
    """commit -> its position in the git graph (oldest 0) among `commits` and their ancestors: a parent
    always before its children, the committer date only between commits the graph leaves unordered
    (`rev-list --date-order`). Commits the repository does not have (a record made in a clone, a rebased
    branch) are left out. Dates cannot order commits on their own: four commits made in one second tie."""
    wanted = list(dict.fromkeys(c for c in commits if c))
    if not wanted:
        return {}
    out = git(root, "cat-file", "--batch-check=%(objectname) %(objecttype)", check=False,
              stdin="".join(f"{c}\n" for c in wanted)).splitlines()
    known = [ln.split()[0] for ln in out if ln.endswith(" commit")]
    if not known:
        return {}
    walk = git(root, "rev-list", "--date-order", "--reverse", "--stdin", check=False,
               stdin="".join(f"{c}\n" for c in known)).split()
    keep = set(wanted)
    return {c: i for i, c in enumerate(c for c in walk if c in keep)}


@dataclass(frozen=True)
class CommitInfo:
    commit: str
    date: str                  # committer date, ISO 8601
    subject: str
    branch: str | None


def commit_info(root: Path, rev: str = "HEAD") -> CommitInfo:
    """One `git show` (a record is made after every `--record`ed lowering: its cost is counted)."""
    out = git(root, "show", "-s", "--format=%H%x00%cI%x00%s", f"{rev}^{{commit}}", "--", check=False).strip()
    if out.count("\x00") < 2:
        resolve_commit(root, rev)                  # raises GitError naming the unknown commit
        raise GitError(f"Cannot read commit {rev!r} in {root}.", "Check the repository with `git log`.")
    sha, date, subject = out.split("\x00", 2)
    return CommitInfo(sha, date, subject, current_branch(root))


def current_branch(root: Path) -> str | None:
    """The branch checked out (CI: $GITHUB_HEAD_REF / $GITHUB_REF_NAME / $CI_COMMIT_REF_NAME on a detached HEAD)."""
    return _branch_or_ci(git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip())


def _branch_or_ci(out: str) -> str | None:
    return out or os.environ.get("GITHUB_HEAD_REF") or os.environ.get("GITHUB_REF_NAME") \
        or os.environ.get("CI_COMMIT_REF_NAME") or None


def default_branch(root: Path) -> str | None:
    """The repository's own default branch: the one origin's HEAD names, else `init.defaultBranch`, `main`,
    `master` or `trunk`, the first that exists here or at origin; None when none does."""
    out = git(root, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False).strip()
    if out:
        return out.split("/", 1)[1] if "/" in out else out
    have = set(git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes/origin",
                   check=False).split())
    configured = git(root, "config", "--get", "init.defaultBranch", check=False).strip()
    return next((b for b in (configured, "main", "master", "trunk") if b and (b in have or f"origin/{b}" in have)),
                None)


def is_dirty(root: Path) -> bool:
    """Tracked files changed against HEAD (untracked files do not count)."""
    return bool(git(root, "status", "--porcelain", "--untracked-files=no", check=False).strip())


class HeadState:
    """HEAD's commit (date, subject), branch and dirty flag, read by two git processes started at once
    (`show`; `status --porcelain=v2 --branch`: the branch and any tracked change) and left running while
    the caller works: `--record` starts them before the job and waits once, not for each in turn (one
    after another, four git calls cost 12-17 ms of a record)."""

    _ARGS = (("show", "-s", "--format=%H%x00%cI%x00%s", "HEAD^{commit}", "--"),
             ("status", "--porcelain=v2", "--branch", "--untracked-files=no"))

    def __init__(self, root: Path) -> None:
        """`root`: the repository's root, or any folder inside its work tree."""
        self.root = root
        try:
            self._procs = [subprocess.Popen(["git", "-C", str(root), *a], stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=_ENV)
                           for a in self._ARGS]
        except FileNotFoundError:
            raise BadInputError("git is not installed.", "Install it (apt-get install git).") from None

    def result(self) -> tuple[CommitInfo, bool]:
        """(HEAD's CommitInfo, whether tracked files differ from it); GitError for a repository without
        a commit. Waits for the processes (each at most 120 s, as every git call here)."""
        outs = []
        for p in self._procs:
            try:
                outs.append(p.communicate(timeout=120)[0])
            except subprocess.TimeoutExpired:
                p.kill()
                outs.append(p.communicate()[0])
        show, status = (o.strip() for o in outs)
        if show.count("\x00") < 2:
            resolve_commit(self.root, "HEAD")          # raises GitError naming the missing commit
            raise GitError(f"Cannot read commit 'HEAD' in {self.root}.", "Check the repository with `git log`.")
        sha, date, subject = show.split("\x00", 2)
        lines = status.splitlines()
        head = next((ln[len("# branch.head "):] for ln in lines if ln.startswith("# branch.head ")), "")
        branch = "" if head == "(detached)" else head
        return CommitInfo(sha, date, subject, _branch_or_ci(branch)), any(not ln.startswith("#") for ln in lines)


    def result_or_none(self) -> tuple[CommitInfo, bool] | None:
        """The result, or None where there is none to read (the processes are waited for either way)."""
        try:
            return self.result()
        except BadInputError:
            return None


def has_path(root: Path, commit: str, path: str) -> bool:
    return subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{commit}:{path}"], env=_ENV,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=120).returncode == 0


def worktree_base(root: Path) -> Path:
    """Where this repository's temporary worktrees go: under the system temp folder, never in the user's
    tree; one stable folder per commit, so a lowering of it hits the lowering cache the next time."""
    tag = hashlib.sha1(str(root).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / "cmlens-worktrees" / tag


def add_worktree(root: Path, commit: str) -> Path:
    """A detached worktree of `commit` (replacing one a killed run left behind)."""
    where = worktree_base(root) / commit[:12]
    remove_worktree(root, where)            # one a killed run left behind, possibly locked mid-`add`
    where.parent.mkdir(parents=True, exist_ok=True)
    git(root, "worktree", "add", "--detach", "--force", "--force", str(where), commit)
    return where


def remove_worktree(root: Path, where: Path) -> None:
    """Remove the worktree and its entry under .git/worktrees (also a locked or half-made one)."""
    git(root, "worktree", "unlock", str(where), check=False)
    git(root, "worktree", "remove", "--force", "--force", str(where), check=False)
    if where.exists():
        shutil.rmtree(where, ignore_errors=True)
    git(root, "worktree", "prune", check=False)
