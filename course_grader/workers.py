"""Learners graded in parallel worker processes, where a worker that dies costs only the learner it held.

``ProcessPoolExecutor`` breaks the whole pool when one worker dies; here each worker has its own pipe, so a death
is seen for what it is: ``WorkerDied`` is the result of the task it was on (NOT GRADED, graded on the next run;
never tried again silently), and a new worker takes its place. Every worker dies with the process that started
it, and ``Workers.close`` (also on Ctrl+C) ends them all.

    >>> with Workers(abs, jobs=2) as pool:
    ...     sorted(value for _, value in pool.results([-1, -2, 3]))
    [1, 2, 3]
"""

import contextlib
import ctypes
import multiprocessing
import queue
import signal
import threading
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait

PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class WorkerDied:
    """A task's result when its worker died (twice), or raised: ``why`` in words."""

    why: str


def _exit(*_):
    raise SystemExit(1)  # on SIGTERM: the finally blocks run, and close the sandboxes


def _receive_all(connection, tasks):
    """A worker's thread that reads each task as it comes into ``tasks`` (None: stop, or the main process gone)."""
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            task = None
        tasks.put(task)
        if task is None:
            return


def _serve(connection, function):
    """A worker's life: run ``function`` on each task it is sent, send back the result, until told to stop.

    Its tasks are read by a thread of its own as they come (``_receive_all``): a task (a learner's notebooks,
    megabytes) is more than a pipe holds, and the main process, sending it, waited until the worker had finished
    its learner before, while the other workers waited for their next task (on a class of 200: 18 s of 128
    CPU-seconds idle, 8 s with the thread)."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the main process's to handle
    signal.signal(signal.SIGTERM, _exit)
    tasks = queue.SimpleQueue()
    threading.Thread(target=_receive_all, args=(connection, tasks), name="receive-tasks", daemon=True).start()
    while True:
        task = tasks.get()
        if task is None:
            return
        try:
            result = function(task)
        except Exception:  # the grader's own bug on this task: said, and the worker goes on
            result = WorkerDied("the grader failed: " + traceback.format_exc(limit=3)[-600:])
        connection.send(result)


@contextlib.contextmanager
def _may_have_children():
    """Let this process start its grader processes even where it is itself a daemonic one: a Dask worker under its
    nanny is (multiprocessing refuses, "daemonic processes are not allowed to have children"), and so is one that
    ``dask worker --nworkers`` starts. Its children are daemonic and end with it (``PR_SET_PDEATHSIG``)."""
    current = multiprocessing.current_process()
    was = current._config.get("daemon")  # multiprocessing's own flag: no public way to ask for this
    current._config["daemon"] = False
    try:
        yield
    finally:
        current._config["daemon"] = was


class Worker:
    """One worker process with a pipe of its own, forked (or started from a forkserver: ``context``), that runs
    ``function`` on each task it is sent (``_serve``); ``tasks``: those sent and not yet answered."""

    def __init__(self, function, context="fork"):
        self.connection, theirs = multiprocessing.Pipe()
        self.process = multiprocessing.get_context(context).Process(target=_serve, args=(theirs, function), daemon=True)
        with _may_have_children():
            self.process.start()
        theirs.close()
        self.tasks = deque()  # sent, not yet answered: the one it works on first

    def stop(self, seconds):
        try:
            self.connection.send(None)
        except OSError:
            pass
        self.process.join(seconds)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


def _more(source, pending):
    """Move the next task of ``source`` to ``pending``; False when there is none."""
    for task in source:
        pending.append(task)
        return True
    return False


class Workers:
    """``jobs`` forked workers that run ``function``; ``results(tasks)`` yields ``(task, result)`` as they finish.

    Each worker is sent ``DEPTH`` tasks ahead, so that it never waits for the next one while the main process
    is busy with a result or another worker; a worker's thread reads them as they come (``_serve``).
    """

    DEPTH = 2

    def __init__(self, function, jobs):
        self.function = function
        self.workers = [Worker(function) for _ in range(max(1, jobs))]

    def results(self, tasks):
        """``(task, result)`` as the workers finish; ``tasks`` (an iterable) is read only as workers have room, so
        that a task's inputs (a learner's notebooks) are in memory only while it is graded."""
        pending, source = deque(), iter(tasks)
        while True:
            for worker in self.workers:
                while len(worker.tasks) < self.DEPTH and (pending or _more(source, pending)):
                    worker.tasks.append(pending.popleft())
                    try:
                        worker.connection.send(worker.tasks[-1])  # read at once by the worker's own thread
                    except OSError:  # it died since its last result: seen below, and its tasks go back in line
                        break
            busy = [w for w in self.workers if w.tasks]
            if not busy:
                return
            ready = wait([w.connection for w in busy] + [w.process.sentinel for w in busy])
            for worker in busy:
                if worker.connection in ready or worker.process.sentinel in ready:
                    yield self._collect(worker, pending)

    def _collect(self, worker, pending):
        """The task a worker finished and its result; where the worker died, ``WorkerDied`` (those it had not
        started go back in line, for a new worker)."""
        try:
            result = worker.connection.recv()
        except (EOFError, OSError):
            worker.process.join(5)
            code = worker.process.exitcode
            self.workers[self.workers.index(worker)] = Worker(self.function)
            worker.stop(1)
            task, *waiting = worker.tasks
            pending.extendleft(reversed(waiting))
            return task, WorkerDied(f"the grader's worker process died while grading it (exit status {code})")
        return worker.tasks.popleft(), result

    def close(self, seconds=10):
        for worker in self.workers:
            worker.stop(seconds)

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        self.close(0 if kind is not None else 10)
