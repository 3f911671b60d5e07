"""Learners graded in parallel worker processes, where a worker that dies costs only the learner it held.

``concurrent.futures.ProcessPoolExecutor`` breaks the whole pool when one
worker dies (the kernel's out-of-memory killer, a crash): every learner in
flight fails and no later one is graded. Here each worker has its own pipe,
so a death is seen for what it is: that worker's task is run again once in
a new worker, and if its worker dies again, ``WorkerDied`` is its result.
Every worker dies with the process that started it, and ``Workers.close``
(also on Ctrl+C) ends them all.

    >>> with Workers(abs, jobs=2) as pool:
    ...     sorted(value for _, value in pool.results([-1, -2, 3]))
    [1, 2, 3]
"""

import ctypes
import multiprocessing
import signal
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


def _serve(connection, function):
    """A worker's life: run ``function`` on each task it is sent, send back the result, until told to stop."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the main process's to handle
    signal.signal(signal.SIGTERM, _exit)
    while True:
        task = connection.recv()
        if task is None:
            return
        try:
            result = function(task)
        except Exception:  # the grader's own bug on this task: said, and the worker goes on
            result = WorkerDied("the grader failed: " + traceback.format_exc(limit=3)[-600:])
        connection.send(result)


class _Worker:
    def __init__(self, function):
        self.connection, theirs = multiprocessing.Pipe()
        self.process = multiprocessing.get_context("fork").Process(target=_serve, args=(theirs, function), daemon=True)
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


class Workers:
    """``jobs`` forked workers that run ``function``; ``results(tasks)`` yields ``(task, result)`` as they finish.

    Each worker is sent ``DEPTH`` tasks ahead, so that it never waits for the next one while the main process
    is busy with a result (recording a learner in nbgrader's gradebook takes half a second).
    """

    DEPTH = 2

    def __init__(self, function, jobs, retries=1):
        self.function, self.retries = function, retries
        self.workers = [_Worker(function) for _ in range(max(1, jobs))]

    def results(self, tasks):
        pending, tries = deque(tasks), {}
        while pending or any(w.tasks for w in self.workers):
            for worker in self.workers:
                while len(worker.tasks) < self.DEPTH and pending:
                    worker.tasks.append(pending.popleft())
                    worker.connection.send(worker.tasks[-1])
            busy = [w for w in self.workers if w.tasks]
            ready = wait([w.connection for w in busy] + [w.process.sentinel for w in busy])
            for worker in busy:
                if worker.connection in ready or worker.process.sentinel in ready:
                    yield from self._collect(worker, pending, tries)

    def _collect(self, worker, pending, tries):
        try:
            result = worker.connection.recv()
        except (EOFError, OSError):
            yield from self._died(worker, pending, tries)
            return
        yield worker.tasks.popleft(), result

    def _died(self, worker, pending, tries):
        """A worker died: the task it was on is tried again (once), those it had not started go back in line."""
        worker.process.join(5)
        code = worker.process.exitcode
        self.workers[self.workers.index(worker)] = _Worker(self.function)
        worker.stop(1)
        task, *waiting = worker.tasks
        pending.extendleft(reversed(waiting))
        tries[id(task)] = tries.get(id(task), 0) + 1
        if tries[id(task)] <= self.retries:
            pending.append(task)
        else:
            yield task, WorkerDied(f"the grader's worker process died while grading it (exit status {code})")

    def close(self, seconds=10):
        for worker in self.workers:
            worker.stop(seconds)

    def __enter__(self):
        return self

    def __exit__(self, kind, *_):
        self.close(0 if kind is not None else 10)
