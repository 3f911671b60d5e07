"""The hand-in service's grader: each hand-in graded as `make grade` grades it, as soon as there is room.

``Dispatcher`` hands the fair queue's hand-ins (``queue.FairQueue``: one in
flight per learner) to a Dask cluster: the one `make grade` would use
(``cluster.address``), else one inside the service (its HTTP servers on the loopback, with no page),
whose worker's threads hand each to this machine's grader processes, as a
Dask worker elsewhere does (``cluster.HostPool``: the sandbox and every bound
of `make grade`). Each is graded with the course's secret and grader version,
so its results are exactly those `make grade` would store for the same
notebook (and takes: ``store.reused``), with each answer's
``marking.preview`` where it is graded before the learner's due date
(``due``), the only time a preview is shown. An answer cell this learner
handed in before is not run again: its marks are taken
(``store.marked_answers``), so that no one reads a hidden case bit by bit
with an answer that behaves differently each run.
"""

import os
import queue
import threading
import traceback
from dataclasses import asdict

from .. import cluster, cluster_tls, sandbox
from ..exchange import utc_now
from ..learner import NotebookToGrade, Task, shipped
from ..version import course_secret, grader_version
from ..submissions import file_status
from ..workers import WorkerDied
from .queue import FairQueue


class Dispatcher:
    """Grades the hand-ins put in ``queue`` on a Dask cluster (here: ``jobs`` threads); ``store.set_verdict`` keeps
    each verdict."""

    def __init__(self, root, store, *, jobs=1, limits=sandbox.Limits(), unsafe=False, most_waiting=2000, due=None):
        self.root, self.store, self.limits, self.unsafe, self.jobs = root, store, limits, unsafe, jobs
        self.due = due or (lambda student, lesson: None)  # (student, lesson) -> naive UTC due date, or None
        self.secret = course_secret(root)
        self.version = grader_version(self.secret, limits)
        self.queue = FairQueue(most_waiting)
        self.busy, self.events, self.pool, self.thread = {}, queue.SimpleQueue(), None, None

    def start(self):
        """Connect to the cluster and start grading; the hand-ins a restart found waiting go first, in order."""
        where = cluster.address(self.root)
        self.pool = cluster.Cluster(where, security=cluster_tls.security(self.root),
                                    unencrypted=cluster_tls.unencrypted_allowed(self.root)) if where else \
            cluster.Cluster.here(self.jobs)
        self.warming = [self.pool.client.submit(cluster.warm, workers=[address], pure=False, key=f"warm-{address}")
                        for address in self.pool.client.scheduler_info()["workers"]]  # ready before the first hand-in
        for hand_in in self.store.waiting():
            self.queue.add((hand_in.student, hand_in.lesson), hand_in)
        self.thread = threading.Thread(target=self._run, name="hand-in grader", daemon=True)
        self.thread.start()

    def submit(self, hand_in):
        """Queue a stored hand-in (``queue.QueueFull`` when the line is full); returns the one it replaced."""
        replaced = self.queue.add((hand_in.student, hand_in.lesson), hand_in)
        self.events.put(None)
        return replaced

    def grading(self, hand_in):
        return hand_in.folder in self.busy

    def stop(self):
        self.events.put(False)
        if self.thread is not None:
            self.thread.join(30)
        if self.pool is not None:
            self.pool.close()

    def _task(self, hand_in):
        info = os.stat(hand_in.notebook, follow_symlinks=False)
        release = self.root / "release" / hand_in.lesson / f"{hand_in.lesson}.ipynb"
        marked = self.store.marked_answers(hand_in.student, hand_in.lesson)
        known = tuple((name, digest, marked[name][digest]) for name, digest in hand_in.answers.items()
                      if digest in marked.get(name, {}))
        due = self.due(hand_in.student, hand_in.lesson)
        task = Task(hand_in.student, ((hand_in.lesson, NotebookToGrade(str(hand_in.notebook), hand_in.digest,
                                                                file_status(info))),),
                    str(self.root), self.secret, limits=self.limits, unsafe=self.unsafe,
                    previewed=due is None or utc_now() < due, known=known)
        return shipped(task, {hand_in.lesson: release.read_text()}, self.version)

    def _dispatch(self):
        """Hand the cluster the next hand-ins, a few for each of its threads; each result comes back as an event."""
        room = cluster.AHEAD * max(1, self.pool.threads())
        while len(self.busy) < room and (hand_in := self.queue.take()) is not None:
            self.busy[hand_in.folder] = hand_in
            try:
                self.pool.submit(self._task(hand_in), lambda result, h=hand_in: self.events.put((h, result)))
            except Exception as exc:  # its file gone, the scheduler gone: this hand-in's failure, no one else's
                self.events.put((hand_in, WorkerDied(f"it could not be sent to the grader ({type(exc).__name__}: "
                                                     f"{exc})")))

    def _run(self):
        while True:
            try:
                self._dispatch()
                event = self.events.get(timeout=5)  # None: a new hand-in; False: stop; else a result
            except queue.Empty:
                continue
            except Exception:  # the grader's own bug: said in the service's log, and grading goes on
                traceback.print_exc()
                continue
            if event is False:
                return
            if event is not None:
                self._finish(*event)

    def _finish(self, hand_in, result):
        failure = result.why if isinstance(result, WorkerDied) else None
        graded = None if failure else result[1][hand_in.lesson]
        failure = failure or graded.failure
        verdict = {"grader": self.version, "submission_sha256": hand_in.digest, "graded_at": utc_now().isoformat(),
                   "failure": failure, "results": [asdict(r) for r in graded.results] if graded else [],
                   "previews": (graded.previews or {}) if graded else {}}
        try:
            self.store.set_verdict(hand_in, verdict)
            if not failure and graded.marks:
                self.store.remember(hand_in, graded.marks)
        except OSError:
            traceback.print_exc()
        finally:
            self.busy.pop(hand_in.folder, None)
            self.queue.done(hand_in.student)
