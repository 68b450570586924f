"""A real PostgreSQL server for one test session, in a temporary folder: `initdb` + `pg_ctl` on a free
loopback port, trust authentication, stopped and removed afterwards. PostgreSQL refuses to run as root,
so as root it runs as the `postgres` user (`runuser`); `unavailable()` says why none can start."""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    cands = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return cands[-1] if cands else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self) -> None:
        self.initdb, self.pg_ctl = _bin("initdb"), _bin("pg_ctl")
        self.user: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
                self.user = "postgres"
            except KeyError:
                self.user = None
        self.dir: Path | None = None
        self.port = 0

    def unavailable(self) -> str | None:
        if not (self.initdb and self.pg_ctl):
            return "PostgreSQL is not installed (apt-get install -y postgresql: initdb and pg_ctl)"
        if os.geteuid() == 0 and self.user is None:
            return "running as root and there is no `postgres` user to run the server as (PostgreSQL refuses root)"
        if os.geteuid() == 0 and not shutil.which("runuser"):
            return "running as root without `runuser` to start the server as the postgres user"
        return None

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = list(args)
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def start(self) -> str:
        """The server's URL (postgresql://postgres@127.0.0.1:PORT/postgres); RuntimeError with the log."""
        self.dir = Path(tempfile.mkdtemp(prefix="cmlens-pg-"))       # under /tmp: the server user can reach it
        data = self.dir / "data"
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        p = self._run(self.initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        if p.returncode != 0:
            raise RuntimeError(f"initdb failed: {p.stderr[-2000:]}")
        self.port = _free_port()
        opts = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.dir} -c fsync=off"
        p = self._run(self.pg_ctl, "-D", str(data), "-l", str(self.dir / "log"), "-o", opts, "-w", "-t", "60", "start")
        if p.returncode != 0:
            log = (self.dir / "log").read_text() if (self.dir / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {p.stderr[-1000:]} {log[-2000:]}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def stop(self) -> None:
        if self.dir is None:
            return
        self._run(self.pg_ctl, "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop", timeout=60)
        for _ in range(20):
            if not (self.dir / "data" / "postmaster.pid").exists():
                break
            time.sleep(0.2)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None
