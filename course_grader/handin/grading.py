"""The hand-in service's grader: each hand-in graded as `make grade` grades it, as soon as a worker is free.

``Dispatcher`` forks its workers once (each runs ``learner.grade_learner``,
the sandbox and every bound of `make grade`), then a thread hands them the
fair queue's hand-ins one by one (``queue.FairQueue``): one learner's
hand-ins never hold more than one worker. Each hand-in is graded with the
course's secret and grader version, so its results are exactly those `make
grade` would store for the same notebook (and `make grade` reuses them:
``reuse``), and with each answer's ``marking.preview``, what the learner may
see before the due date. An answer cell this learner handed in before is not
run again: its marks are taken (``store.marked_answers``), so that no one
reads a hidden case bit by bit by handing in an answer that behaves
differently each time. A worker that dies is replaced, and its hand-in tried
once more; then its verdict says the grader's machine failed. With a Dask
cluster (``cluster.address``, as `make grade`'s), the hand-ins go to it.
"""

import os
import queue
import threading
import traceback
from dataclasses import asdict
from multiprocessing.connection import wait

from encoder_lib.grading.exercises import BY_LESSON

from .. import cluster, cluster_tls, sandbox
from ..cases import build_once, forget_hidden_cases, share_visible
from ..learner import HandIn, Task, grade_learner, shipped
from ..plan import course_secret, grader_version
from ..submissions import file_status
from ..workers import Worker, WorkerDied
from .queue import FairQueue
from .store import utc_now

#: How many times a hand-in is tried when its worker dies under it.
TRIES = 2


def _grade(task):
    try:
        return grade_learner(task)
    finally:
        forget_hidden_cases()


class Dispatcher:
    """Grades the hand-ins put in ``queue`` with ``jobs`` workers; ``store.set_verdict`` keeps each verdict."""

    def __init__(self, root, store, *, jobs=1, limits=sandbox.Limits(), unsafe=False, most_waiting=2000):
        self.root, self.store, self.limits, self.unsafe = root, store, limits, unsafe
        self.secret = course_secret(root)
        self.version = grader_version(self.secret, limits)
        self.queue = FairQueue(most_waiting)
        self.jobs, self.workers, self.tries, self.remote, self.came = jobs, [], {}, None, queue.SimpleQueue()
        self.busy = {}  # worker -> the store.HandIn it grades
        self.graded = 0
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        self._stop = threading.Event()
        self.thread = None

    def start(self, lessons):
        """Build what every worker shares (the visible cases of ``lessons``, the sandbox session), fork the workers
        and start grading; the hand-ins a restart found waiting go first, in their order."""
        where = cluster.address(self.root)
        if where:  # as make grade: the Dask cluster's workers build what they share themselves
            self.remote = cluster.Cluster(where, security=cluster_tls.security(self.root),
                                          unencrypted=cluster_tls.unencrypted_allowed(self.root))
        else:
            names = [name for lesson in lessons for name in BY_LESSON[lesson]]
            build_once(names)
            share_visible(sandbox.open_session(), names)
            self.workers = [Worker(_grade) for _ in range(max(1, self.jobs))]
        for hand_in in self.store.waiting():
            self.queue.add((hand_in.student, hand_in.lesson), hand_in)
        self.thread = threading.Thread(target=self._run, name="hand-in grader", daemon=True)
        self.thread.start()

    def submit(self, hand_in):
        """Queue a stored hand-in (``queue.QueueFull`` when the line is full); returns the one it replaced."""
        replaced = self.queue.add((hand_in.student, hand_in.lesson), hand_in)
        os.write(self._wake_write, b".")
        return replaced

    def grading(self, hand_in):
        return any(h.folder == hand_in.folder for h in list(self.busy.values()))

    def stop(self):
        self._stop.set()
        os.write(self._wake_write, b".")
        if self.thread is not None:
            self.thread.join(30)
        for worker in self.workers:
            worker.stop(5)
        if self.remote is not None:
            self.remote.close()
        sandbox.close_session()

    # ---------------------------------------------------------------- the grading thread

    def _task(self, hand_in):
        info = os.stat(hand_in.notebook, follow_symlinks=False)
        release = self.root / "release" / hand_in.lesson / f"{hand_in.lesson}.ipynb"
        marked = self.store.marked_answers(hand_in.student, hand_in.lesson)
        known = tuple((name, digest, marked[name][digest]) for name, digest in hand_in.answers.items()
                      if digest in marked.get(name, {}))
        task = Task(hand_in.student, ((hand_in.lesson, HandIn(str(hand_in.notebook), hand_in.digest,
                                                                file_status(info))),),
                    str(self.root), self.secret, limits=self.limits, unsafe=self.unsafe, previewed=True, known=known)
        return shipped(task, {hand_in.lesson: release.read_text()}, self.version)

    def _dispatch(self):
        if self.remote is not None:
            return self._dispatch_remote()
        for worker in self.workers:
            if worker in self.busy:
                continue
            hand_in = self.queue.take()
            if hand_in is None:
                return
            try:
                worker.connection.send(self._task(hand_in))
                self.busy[worker] = hand_in
            except Exception as exc:  # its file gone, a pipe broken: this hand-in's failure, no one else's
                self._finish(hand_in, failure=f"it could not be sent to the grader ({type(exc).__name__}: {exc})")

    def _dispatch_remote(self):
        """Hand the Dask cluster the next hand-ins, a few for each of its threads; each result comes back through
        ``came``, and wakes the grading thread."""
        while len(self.busy) < cluster.AHEAD * max(1, self.remote.threads()):
            hand_in = self.queue.take()
            if hand_in is None:
                return
            try:
                self.busy[hand_in.folder] = hand_in
                self.remote.submit(self._task(hand_in), lambda result, h=hand_in: self._came(h, result))
            except Exception as exc:  # its file gone, the scheduler gone: this hand-in's failure
                self.busy.pop(hand_in.folder, None)
                self._finish(hand_in, failure=f"it could not be sent to the grader ({type(exc).__name__}: {exc})")

    def _came(self, hand_in, result):
        self.came.put((hand_in, result))
        os.write(self._wake_write, b".")

    def _run(self):
        while not self._stop.is_set():
            try:
                self._step()
            except Exception:  # the grader's own bug: said in the service's log, and grading goes on
                traceback.print_exc()

    def _step(self):
        """Hand free workers their next hand-ins, then wait (at most 5 s) for a result or a new hand-in."""
        self._dispatch()
        busy = [w for w in self.busy if isinstance(w, Worker)]
        ready = wait([w.connection for w in busy] + [w.process.sentinel for w in busy] + [self._wake_read], timeout=5)
        if self._wake_read in ready:
            self._drain_wakes()
        while not self.came.empty():
            hand_in, result = self.came.get()
            self.busy.pop(hand_in.folder, None)
            self._finish(hand_in, *((None, result.why) if isinstance(result, WorkerDied) else
                                    (result[1][hand_in.lesson], None)))
        for worker in busy:
            if worker.connection in ready or worker.process.sentinel in ready:
                self._collect(worker)

    def _drain_wakes(self):
        try:
            while os.read(self._wake_read, 4096):
                pass
        except BlockingIOError:
            pass

    def _collect(self, worker):
        hand_in = self.busy.pop(worker)
        try:
            result = worker.connection.recv()
        except (EOFError, OSError):
            self._replace(worker)
            self.tries[hand_in.folder] = self.tries.get(hand_in.folder, 1) + 1
            if self.tries[hand_in.folder] <= TRIES:
                self.queue.done(hand_in.student)
                self.queue.add((hand_in.student, hand_in.lesson), hand_in)
                return
            result = WorkerDied("the grader's worker process died while grading it, twice")
        if isinstance(result, WorkerDied):
            self._finish(hand_in, failure=result.why)
        else:
            self._finish(hand_in, graded=result[1][hand_in.lesson])

    def _replace(self, worker):
        worker.process.join(5)
        worker.stop(1)
        self.workers[self.workers.index(worker)] = Worker(_grade)

    def _finish(self, hand_in, graded=None, failure=None):
        failure = failure or (graded.failure if graded is not None else None)
        verdict = {"grader": self.version, "submission_sha256": hand_in.digest, "graded_at": utc_now().isoformat(),
                   "failure": failure, "results": [asdict(r) for r in graded.results] if graded else [],
                   "previews": (graded.previews or {}) if graded else {}}
        try:
            self.store.set_verdict(hand_in, verdict)
            if graded is not None and not failure and graded.marks:
                self.store.remember(hand_in, graded.marks)
        finally:
            self.tries.pop(hand_in.folder, None)
            self.queue.done(hand_in.student)
            self.graded += 1

