"""The log shim (resources/qemu/log_buffer_shim.c, target/simulate/log_buffer.py): preloaded into a program
that fflush()es after every line as QEMU 7.2 does, the file named by CMLENS_QEMU_LOG is no longer written
at each flush (it lags the stream's position) while another file still is, and both are complete at exit."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from backend_core.target.simulate.log_buffer import LOG_ENV, log_buffer_shim, shim_env

WRITER = r"""
#include <stdio.h>
#include <sys/stat.h>
static long on_disk(const char *p) { struct stat st; return stat(p, &st) == 0 ? (long)st.st_size : -1; }
int main(int argc, char **argv) {
    FILE *log = fopen(argv[1], "w"), *other = fopen(argv[2], "w");
    int log_lags = 0, other_lags = 0;
    for (int i = 0; i < 2000; i++) {
        fprintf(log, "Trace 0: line %d\n", i); fflush(log);
        fprintf(other, "other %d\n", i); fflush(other);
        log_lags += on_disk(argv[1]) < ftell(log);
        other_lags += on_disk(argv[2]) < ftell(other);
    }
    printf("%d %d\n", log_lags, other_lags);
    return 0;   /* exit() writes what stdio still holds */
}
"""


@pytest.fixture()
def writer(tmp_path: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no host C compiler")
    (tmp_path / "w.c").write_text(WRITER)
    subprocess.run([cc, "-O1", "-o", str(tmp_path / "w"), str(tmp_path / "w.c")], check=True)
    return tmp_path / "w"


def test_the_log_is_buffered_and_complete_other_files_are_flushed(tmp_path: Path, writer: Path) -> None:
    shim, why = log_buffer_shim(tmp_path / "cache")
    assert shim is not None and why == "" and shim.is_file()
    assert log_buffer_shim(tmp_path / "cache")[0] == shim                  # built once per source
    log, other = tmp_path / "exec.log", tmp_path / "other.txt"
    log.write_bytes(b"")                                                   # TraceReader makes it before QEMU
    env = shim_env(shim, log, dict(os.environ))
    assert env[LOG_ENV] == str(log) and env["LD_PRELOAD"].startswith(str(shim))
    out = subprocess.run([str(writer), str(log), str(other)], env=env, capture_output=True, text=True, check=True)
    log_lags, other_lags = map(int, out.stdout.split())
    assert log_lags > 1900 and other_lags == 0
    assert log.read_text().count("\n") == 2000 and other.read_text().count("\n") == 2000
    plain = subprocess.run([str(writer), str(log), str(other)], capture_output=True, text=True, check=True)
    assert plain.stdout.split() == ["0", "0"]                              # without the shim: written at each flush


def test_an_existing_preload_is_kept_after_the_shim(tmp_path: Path) -> None:
    env = shim_env(tmp_path / "s.so", tmp_path / "l.log", {"LD_PRELOAD": "/x/other.so"})
    assert env["LD_PRELOAD"] == f"{tmp_path / 's.so'}:/x/other.so"
