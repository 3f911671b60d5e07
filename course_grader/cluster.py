"""Grading on several machines: the teacher's process hands each learner to a Dask distributed cluster.

``make grade`` grades here (``workers``) unless it is given a Dask scheduler (``address``: ``DASK_SCHEDULER`` or
``c.EncoderCourse.scheduler``). Then ``Cluster.results`` submits each learner's shipped ``learner.Task`` (the
workers read nothing of the course) and yields the results as they come back. On each Dask worker
``grade_remote`` hands the learner to one of the host's grader processes (``HostPool``, from a forkserver: a
Dask worker has threads), which grades exactly as a worker here does, sandbox and all; a worker whose grader is
not the teacher's version grades nothing; the teacher's process stays the only writer of every file. A Dask
worker that dies has its learners graded again elsewhere by the scheduler; past its retries, or where a grader
process died twice, the lessons are NOT GRADED this run. The hand-in service grades on the same cluster, or on
one inside its own process (``Cluster.here``). docs/teaching/several-machines.md shows how to start one.
"""

import atexit
import functools
import multiprocessing
import multiprocessing.util
import os
import queue
import re
import socket
import threading
import uuid

from . import sandbox
from .cases import build_once, forget_hidden_cases, share_visible
from .learner import grade_learner
from .refused import Refused
from .version import grader_version
from .workers import Worker, WorkerDied

#: A Dask scheduler's address: its protocol, host and port.
ADDRESS = re.compile(r"(tcp|tls)://[^\s/:]+(:\d{1,5})?|(tcp|tls)://\[[0-9a-fA-F:]+\](:\d{1,5})?")
#: Where the scheduler's address may come from, as the error says.
ADDRESS_FROM = "DASK_SCHEDULER (or c.EncoderCourse.scheduler in nbgrader_config.py)"
#: How long the teacher's process waits for the scheduler, and for a first worker to join it.
CONNECT_SECONDS, WORKERS_SECONDS = 30.0, 300.0
#: Learners sent ahead for each worker thread, so that no thread waits for the next while one is recorded.
AHEAD = 2


def address(root=None, given=None):
    """The Dask scheduler to grade on: ``given``, else ``DASK_SCHEDULER``, else the course's
    ``c.EncoderCourse.scheduler``; None to grade on this machine. ``Refused`` with a sentence for a value that is
    not a scheduler's address."""
    value = given if given is not None else os.environ.get("DASK_SCHEDULER")
    if value is None and root is not None:
        from .course_config import course_config

        value = course_config(root).EncoderCourse.get("scheduler")
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not ADDRESS.fullmatch(value.strip()):
        raise Refused(f"{ADDRESS_FROM} must be a Dask scheduler's address, tcp://host:8786 or tls://host:8786 "
                         f"(empty: grade on this machine); got {value!r}")
    return value.strip()


# ---------------------------------------------------------------- the teacher's side


def _refuse_unprotected(where, security, unencrypted):
    """``Refused`` for a scheduler the course's certificates do not protect: a ``tcp://`` one unless the course
    took the risk in its setting (``cluster_tls.UNENCRYPTED``), a ``tls://`` one without the certificates."""
    from .cluster_tls import UNENCRYPTED

    if where.startswith("tcp://") and not unencrypted:
        raise Refused(f"the Dask scheduler at {where} has no TLS: anyone who reaches it can read the course's "
                      f"secret from a worker and change grades. Run `make dask-certificates`, start the scheduler "
                      f"and its workers with them at a tls:// address (docs/teaching/several-machines.md), or set "
                      f"c.EncoderCourse.{UNENCRYPTED} = True in nbgrader_config.py")
    if where.startswith("tls://") and security is None:
        raise Refused(f"the Dask scheduler at {where} is a tls:// one, and the course has no certificates: run "
                      f"`make dask-certificates` (docs/teaching/several-machines.md)")


class Cluster:
    """The Dask cluster whose scheduler is at ``where``, as the grader's pool: ``results(tasks)`` yields
    ``(task, result)`` as its workers finish, ``WorkerDied`` where one could not be graded."""

    def __init__(self, where, out=print, *, security=None, unencrypted=False):
        from distributed import Client

        self.address = where
        _refuse_unprotected(where, security, unencrypted)
        try:
            self.client = Client(where, timeout=CONNECT_SECONDS, set_as_default=False, security=security)
        except (OSError, TimeoutError) as exc:
            raise Refused(f"the Dask scheduler at {where} ({ADDRESS_FROM}) could not be reached ({exc}): start "
                             f"it and its workers (README: grading on several machines), or leave DASK_SCHEDULER "
                             f"unset to grade on this machine") from None
        if not self.threads():
            out(f"waiting for a worker to join the Dask scheduler at {where} (at most {WORKERS_SECONDS:g} s)")
            try:
                self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
            except TimeoutError:
                self.close()
                raise Refused(f"no worker joined the Dask scheduler at {where} in {WORKERS_SECONDS:g} s: start "
                                 f"one (README: grading on several machines)") from None

    @classmethod
    def here(cls, threads):
        """A cluster inside this process: its worker's ``threads`` hand each learner to this machine's grader
        processes (``HostPool``), as a Dask worker elsewhere does (the hand-in service's). Its scheduler and worker
        talk in memory, but distributed 2026.8.0 starts an HTTP server for each all the same (with
        ``dashboard_address=None``, the scheduler's on 0.0.0.0:8787): both listen on the loopback and serve no
        page at all, so that no account or machine learns what is graded."""
        import dask
        from distributed import Client, LocalCluster

        here, loopback = cls.__new__(cls), "127.0.0.1:0"
        here.address = "this process"
        with dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}):
            here.client = Client(LocalCluster(n_workers=1, threads_per_worker=max(1, threads), processes=False,
                                              worker_dashboard_address=loopback, scheduler_kwargs={
                                                  "dashboard": False, "dashboard_address": loopback}),
                                 set_as_default=False)
        return here

    def threads(self):
        """The threads of the cluster's workers now: the learners it grades at once."""
        return sum(worker.get("nthreads", 0) for worker in self.client.scheduler_info()["workers"].values())

    def results(self, tasks):
        from distributed import as_completed

        source, futures, ongoing = iter(tasks), {}, as_completed(loop=self.client.loop)
        for _ in range(AHEAD * max(1, self.threads())):
            if not self._submit(source, futures, ongoing):
                break
        for future in ongoing:
            task = futures.pop(future.key)
            yield task, _value(future, task)
            self._submit(source, futures, ongoing)

    def submit(self, task, done=None):
        """Send ``task`` to the cluster; ``done(results or WorkerDied)`` is called when they come (the hand-in
        service's way)."""
        future = self.client.submit(grade_remote, task, key=f"grade-learner-{uuid.uuid4().hex}", pure=False)
        if done is not None:
            future.add_done_callback(lambda finished: done(_value(finished, task)))
        return future

    def _submit(self, source, futures, ongoing):
        """Send the next task of ``source`` to the cluster; False when there is none."""
        for task in source:
            future = self.submit(task)
            futures[future.key] = task
            ongoing.add(future)
            return True
        return False

    def close(self):
        inside = getattr(self.client, "cluster", None) if self.address == "this process" else None
        self.client.close()
        if inside is not None:
            inside.close()


def _value(future, task):
    """What a finished future brought back for ``task``: its results, or ``WorkerDied`` saying why there are none."""
    from distributed import KilledWorker

    try:
        value = future.result()
    except KilledWorker:
        return WorkerDied("the Dask workers that took it died, one after the other, while grading it")
    except Exception as exc:  # the worker's failure, not the learner's: never stored, graded again next run
        return WorkerDied(f"a Dask worker failed on it ({type(exc).__name__}: {exc})"[:300])
    finally:
        future.release()
    if isinstance(value, WorkerDied):
        return value
    lessons = {lesson for lesson, _ in task.lessons}
    if not (isinstance(value, tuple) and len(value) == 3 and value[0] == task.student_id
            and isinstance(value[1], dict) and set(value[1]) == lessons and isinstance(value[2], dict)):
        return WorkerDied("a Dask worker sent back something other than this learner's results")
    return value


# ---------------------------------------------------------------- a Dask worker's side


@functools.lru_cache(maxsize=4)
def _own_version(secret, limits):
    return grader_version(secret, limits)


def grade_remote(task):
    """What a Dask worker runs for one learner: ``(student, {lesson: Graded}, profile)``, graded by one of its host's
    grader processes, or ``WorkerDied`` where its grader is not the teacher's version."""
    try:
        if task.version != _own_version(task.secret, task.limits):
            return WorkerDied(f"the Dask worker on {socket.gethostname()} runs another version of the course's "
                              f"grader than the teacher's: install the same commit of the course there")
        return host_pool().grade(task)
    finally:
        _own_version.cache_clear()  # the secret is not kept by the worker once its task is done


class HostPool:
    """A Dask worker's grader processes, at most ``size`` (its threads), each started from a forkserver when first
    needed and grading one learner at a time; one that dies is started again and its learner graded once more."""

    def __init__(self, size):
        self.idle, self.size = queue.LifoQueue(), max(1, size)
        for _ in range(max(1, size)):
            self.idle.put(None)  # a place for a process, started when first needed

    def grade(self, task):
        process, why = self.idle.get(), None
        try:
            for _ in range(2):
                process = process or Worker(grade_on_host, context="forkserver")
                try:
                    process.connection.send(task)
                    return process.connection.recv()
                except (EOFError, OSError):
                    process.process.join(5)
                    why = f"exit status {process.process.exitcode}"
                    process.stop(1)
                    process = None
            return WorkerDied(f"the grader's process on a Dask worker died while grading it, twice ({why})")
        finally:
            self.idle.put(process)

    def close(self):
        """End the processes not grading now (when the Dask worker ends: those grading end with it)."""
        while True:
            try:
                process = self.idle.get_nowait()
            except queue.Empty:
                return
            if process is not None:
                process.stop(10)


_POOL, _POOL_LOCK = None, threading.Lock()


def host_pool():
    """This Dask worker's ``HostPool``, one process for each of its threads (made once)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from distributed import get_worker

            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__])  # numpy, the library and the exercises, imported once
            _POOL = HostPool(get_worker().state.nthreads)
            atexit.register(_POOL.close)  # a worker stopped politely: its grader processes remove their sessions
    return _POOL


_PREPARED, WARM = [], "warm"


def warm():
    """Start a Dask worker's grader processes and let each make what it shares now, not on its first learner
    (the hand-in service's, at its start: a class's first hand-ins would wait seconds for it)."""
    pool = host_pool()
    started = [pool.idle.get() or Worker(grade_on_host, context="forkserver") for _ in range(pool.size)]
    for process in started:
        process.connection.send(WARM)
    for process in started:
        process.connection.recv()
        pool.idle.put(process)


def grade_on_host(task):
    """In a grader process of a Dask worker: what a worker of ``make grade`` inherits here is made on its first
    learner (the catalogue, its sandbox session, the shared arrays), and the session removed when it ends."""
    if not _PREPARED:
        build_once()
        share_visible(sandbox.open_session())
        multiprocessing.util.Finalize(None, sandbox.close_session, exitpriority=10)
        _PREPARED.append(True)
    if task == WARM:
        return None
    try:
        return grade_learner(task)
    finally:
        forget_hidden_cases()  # keyed by the secret: nothing of it stays in the grader process after the learner
