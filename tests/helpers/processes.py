"""What a GUI test may leave behind: nothing. Background QThreads, worker processes and `cmlens`
child processes of the Run-on-target panel are all counted (like napari's _dangling_qthreads)."""
from __future__ import annotations


def running_target_processes() -> list:
    """The Run-on-target panel's live `cmlens` children (a panel whose window was deleted has none:
    its QProcess went with it)."""
    from app.runtime.cli_process import CliProcess

    out = []
    for p in list(CliProcess._instances):
        try:
            if p.is_running():
                out.append(p)
        except RuntimeError:             # the C++ QProcess is already deleted
            pass
    return out


def leftovers() -> tuple[list, list, list]:
    """(running background threads, worker clients with a process, running cmlens children)."""
    from app.runtime.background import BackgroundRunner
    from app.runtime.worker_client import WorkerClient

    threads = [r for r in BackgroundRunner.instances() if r.is_running()]
    workers = [w for w in WorkerClient.instances() if w.has_processes()]
    return threads, workers, running_target_processes()


def stop_all(threads: list, workers: list, clis: list) -> None:
    for r in threads:
        r.shutdown()
    for w in workers:
        w.cancel()
    for c in clis:
        c.kill()
