"""A Dask scheduler and its workers on 127.0.0.1, started as docs/teaching/several-machines.md tells a teacher to start them by hand
(``dask scheduler``, ``dask worker``, with the course's TLS certificates: ``cluster_tls``), for
tests/grader/test_grading_cluster.py and ``bench_grading --scheduler``.

    with LocalCluster(folder, workers=2) as cluster:
        grade_class(plan_run(cluster.certify(root)), scheduler=cluster.address)
        cluster.kill(0)   # a worker that dies, as its machine would

Each process writes its log into ``folder``; every wait is sized for a loaded 2-core machine (a worker imports
numpy, the course and Dask: seconds), and ``close`` ends every process it started, and theirs.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from course_grader import cluster_tls

#: How long the scheduler may take to write its address, and the workers to join it, on a loaded machine.
START_SECONDS = 180.0
#: A scheduler idle this long, or a worker without its scheduler this long, ends itself: what a killed test run
#: leaves behind (they run in sessions of their own) does not outlive it by much.
ORPHAN_SECONDS = 600

DASK = str(Path(sys.executable).parent / "dask")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "teaching" / "several-machines.md"


def documented_dashboard(command):
    """The ``--dashboard-address`` that docs/teaching/several-machines.md gives ``dask <command>`` (``scheduler`` or
    ``worker``): the cluster here is started with it (``--no-dashboard`` still opened one on every interface)."""
    line = next(line for line in GUIDE.read_text().splitlines() if line.startswith(f".venv/bin/dask {command} "))
    words = line.split()
    return ["--dashboard-address", words[words.index("--dashboard-address") + 1]]


def _started(command, log):
    with open(log, "w") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


class LocalCluster:
    """``workers`` Dask workers of ``threads`` threads each (without a nanny: one that is killed stays dead; with
    ``nanny``, each started as docs/teaching/several-machines.md gives it, ``--nworkers 1``) and their scheduler,
    on 127.0.0.1 with ports the system chooses; ``address`` is the scheduler's."""

    def __init__(self, folder, workers=2, threads=1, nanny=False):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.workers, self.scheduler = folder, [], None
        file = folder / "scheduler.json"
        self.certificates = cluster_tls.make_certificates(folder)  # the course's TLS, as make dask-certificates
        tls = [f"--tls-{flag}={folder / cluster_tls.FOLDER / name}" for flag, name in
               zip(("ca-file", "cert", "key"), cluster_tls.FILES)]
        try:
            self.scheduler = _started([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                       *documented_dashboard("scheduler"),
                                       "--protocol", "tls", *tls, "--scheduler-file", str(file), "--idle-timeout",
                                       str(ORPHAN_SECONDS)], folder / "scheduler.log")
            self.address = self._address(file)
            for i in range(workers):
                how = ["--nworkers", "1"] if nanny else ["--name", f"worker-{i}", "--no-nanny"]  # nanny: as documented
                self.workers.append(_started([DASK, "worker", self.address, *how, "--nthreads", str(threads),
                                              *tls, *documented_dashboard("worker"), "--host", "127.0.0.1",
                                              "--death-timeout", str(ORPHAN_SECONDS)],
                                             folder / f"worker-{i}.log"))
            self.wait_for_workers(workers)
        except BaseException:
            self.close()
            raise

    def _address(self, file):
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"the Dask scheduler ended: {self.log('scheduler')}")
            try:
                return json.loads(file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        raise TimeoutError(f"the Dask scheduler wrote no address in {START_SECONDS:g} s: {self.log('scheduler')}")

    def wait_for_workers(self, count):
        from distributed import Client

        with Client(self.address, timeout=START_SECONDS, set_as_default=False,
                    security=cluster_tls.security(self.folder)) as client:
            client.wait_for_workers(count, timeout=START_SECONDS)

    def certify(self, root):
        """Give the course at ``root`` this cluster's certificates (its ``.dask-tls/``), as a teacher copies them."""
        target = Path(root) / cluster_tls.FOLDER
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(self.certificates, target)
        return root

    def log(self, name):
        try:
            return (self.folder / f"{name}.log").read_text()[-2000:]
        except OSError:
            return ""

    def listening(self):
        """``{(address, port)}`` every process of the cluster (the scheduler, the workers, their nannies' children)
        listens on."""
        import psutil

        found = set()
        for started in [self.scheduler, *self.workers]:
            process = psutil.Process(started.pid)
            for each in [process, *process.children(recursive=True)]:
                found |= {tuple(c.laddr) for c in each.net_connections("inet") if c.status == psutil.CONN_LISTEN}
        return found

    def kill(self, index):
        """Kill worker ``index`` at once (SIGKILL), as a machine that goes away would; returns its pid."""
        self.workers[index].kill()
        self.workers[index].wait()
        return self.workers[index].pid

    def close(self):
        """SIGTERM to every process (a worker ends its grader processes, which remove their sandboxes' sessions),
        then SIGKILL to the group of any still there after 30 s."""
        started = [process for process in [*self.workers, self.scheduler] if process is not None]
        for process in started:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + 30
        while any(process.poll() is None for process in started) and time.monotonic() < deadline:
            time.sleep(0.2)
        for process in started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()
