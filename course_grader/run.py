"""Grading a ``plan.Plan``: every task in parallel workers, each learner recorded as it comes in, then every file.

``grade_class(plan)`` moves the earlier results of changed submissions to ``history/``, grades the tasks (a worker
that dies costs only its learner: NOT GRADED, their earlier results moved to ``history/``, graded on the next run),
stores and records each learner as they come in, then writes the CSV files and the pages for the whole class. This
process is the only writer of every file.
"""

import contextlib
import os
import time

from . import cluster, cluster_tls, deadlines, ids, sandbox
from .feedback_page import write_feedback
from .gradebook_writer import GradebookWriter
from .cases import build_once, share_visible
from .profile import Profile
from .files import make_folder, write_file
from .learner import grade_learner, machine_failure, shipped
from .outputs import by_hand, write_csvs, write_lms_csv
from .refused import Refused
from .stored import keep_history, store
from .submissions import NOTEBOOK, read_hand_in
from .workers import WorkerDied, Workers


def limits_text(session, limits):
    """In words, what bounds each sandbox on this machine."""
    per_exercise = f"{limits.seconds:g} s and {limits.memory_bytes // 2**20} MiB an exercise"
    per_exercise += f"; a scratch /tmp of {sandbox.SCRATCH_BYTES // 2**20} MiB" + (
        f" and {sandbox.SCRATCH_FILES} files" if session.bounded_scratch else
        f" (its files not counted here: {session.scratch_problem})")
    if session.cgroups is not None:
        return (f"{per_exercise}; each sandbox in a cgroup (v{session.cgroups.version}) of its own: at most "
                f"{(limits.memory_bytes + sandbox.SANDBOX_EXTRA_BYTES) // 2**20} MiB and {sandbox.SANDBOX_TASKS} tasks")
    threads = "answers may start threads" if os.geteuid() != 0 else "answers may start no threads"
    return f"{per_exercise}; no cgroups here: limits per process only ({threads})"


def penalties_of(root, due, late=True):
    """nbgrader's late-penalty plugin, made before anything is graded where a lesson has a due date and a hand-in
    came after it (``late``; None otherwise: importing nbgrader's preprocessors takes seconds); ``Refused`` with a
    sentence when the course's setting cannot be used."""
    if not due or not late:
        return None
    try:
        return deadlines.Penalties(root)
    except Exception as exc:  # the course's plugin_class or penalty_method: said before anything is graded
        raise Refused(f"nbgrader's late-penalty setting in nbgrader_config.py (AssignLatePenalties, "
                         f"LateSubmissionPlugin) cannot be used: {type(exc).__name__}: {exc}") from None


class Recorder:
    """Keeps what grading finds: every lesson's results, each hand-in's lateness, and the gradebook in step."""

    def __init__(self, plan):
        self.plan = plan
        self.results = dict(plan.known)  # (student, lesson) -> [Result]
        self.deadlines = deadlines.Deadlines.read(plan.root)  # the gradebook's due dates, extensions.csv
        self.penalties = penalties_of(plan.root, self.deadlines.due, any(
            self.deadlines.seconds_late(student, lesson, when.when) > 0 for (student, lesson), when in
            plan.exchange.items()))  # every lateness below is of a hand-in timed there
        self.late = {}  # (student, lesson) -> deadlines.Lateness
        self.notices, self.machine = list(plan.notices), []  # machine: (student, lesson, why)
        self.notices += [f"{student} {lesson}: {when.flag}" for (student, lesson), when in sorted(plan.exchange.items())
                         if when.flag]
        self.regraded = 0
        self.profile = Profile()  # the workers' stages and this process's (``profile``)

    def lateness(self, student, lesson, rows):
        """The ``deadlines.Lateness`` of a handed-in lesson with these results: by its hand-in time
        (``exchange.HandInTime``; none: never late) against its due date or the learner's extension, the penalty
        nbgrader's setting takes from its grader's points."""
        score = sum(r.points for r in rows if r.exercise != NOTEBOOK)
        when = self.plan.exchange.get((student, lesson))
        return self.deadlines.lateness(student, lesson, when.when if when else None, score, self.penalties,
                                       timed_by=when.by if when else "")

    def record(self, gradebook, student, lesson, rows):
        """Record one graded lesson in the gradebook, with its lateness (kept for the files written after)."""
        late = self.late[student, lesson] = self.lateness(student, lesson, rows)
        gradebook.record(student, lesson, self.plan.handed_in[student, lesson], rows, late,
                         when=self.plan.exchange.get((student, lesson)))

    def take(self, gradebook, task, graded):
        """Keep one worker's results for ``task`` (as shipped): the notebook as graded and its results stored, and
        recorded, unless the machine failed on them."""
        student, notebooks = task.student_id, dict(task.lessons)
        for lesson, lesson_graded in graded.items():
            self.results[student, lesson] = lesson_graded.results
            if lesson_graded.failure:  # its earlier results go to history/: the next run grades it, never reuses them
                self.machine.append((student, lesson, lesson_graded.failure))
                keep_history(self.plan.root / "autograded" / ids.folder(student) / lesson, None, lesson)
                continue
            folder = make_folder(self.plan.root / "autograded" / ids.folder(student) / lesson)
            if lesson_graded.digest is not None:
                write_file(folder / f"{lesson}.ipynb", notebooks[lesson].data)
            store(folder, lesson_graded.digest, self.plan.version, lesson_graded.results)
            self.record(gradebook, student, lesson, lesson_graded.results)
            self.regraded += 1
        gradebook.commit()  # one learner at a time: an interrupted run loses none it recorded

    def every_lateness(self):
        """Every hand-in's lateness (also of one this run did not grade: STUDENT=, LESSON=), from its points."""
        return {key: self.late[key] if key in self.late else self.lateness(*key, self.results[key])
                for key in self.plan.exchange if key in self.results}


def _shipped(plan, profile):
    """The plan's tasks, each read and shipped (``learner.shipped``) only when a worker has room for it."""
    released = {lesson: (plan.root / "release" / lesson / f"{lesson}.ipynb").read_text() for lesson in plan.lessons}
    for task in plan.tasks:
        with profile.timed("dispatch"):
            ready = shipped(task, released, plan.version)
        yield ready


def _pool(plan, jobs, scheduler, out):
    """Where the tasks are graded: ``jobs`` worker processes here (forked before the gradebook opens), or the Dask
    cluster at ``scheduler``."""
    if not plan.tasks:
        return contextlib.nullcontext()
    if scheduler:
        return contextlib.closing(cluster.Cluster(scheduler, out, security=cluster_tls.security(plan.root),
                                                  unencrypted=cluster_tls.unencrypted_allowed(plan.root)))
    return Workers(grade_learner, jobs)


def _grade_tasks(plan, recorder, pool, out):
    """Grade the plan's tasks in ``pool`` (``workers.Workers`` or ``cluster.Cluster``), recording each learner as
    they come in; then grades.csv."""
    started = time.perf_counter()
    results = pool.results(_shipped(plan, recorder.profile)) if plan.tasks else ()
    gradebook = GradebookWriter(plan.root, plan.students, plan.choices.set_lessons and list(plan.lessons))
    try:
        for (student, lesson), rows in sorted(recorder.results.items()):
            if (student, lesson) in plan.handed_in:  # unchanged since the last run: the gradebook has it
                recorder.record(gradebook, student, lesson, rows)
        for done, (task, value) in enumerate(results, 1):
            died = isinstance(value, WorkerDied)  # each of its lessons the machine's failure, graded on the next run
            if not died:
                recorder.profile.merge(value[2])
            with recorder.profile.timed("record"):
                recorder.take(gradebook, task, {lesson: machine_failure(task.student_id, lesson, value.why)
                                                for lesson, _ in task.lessons} if died else value[1])
            if done % max(1, len(plan.tasks) // 10) == 0 or done == len(plan.tasks):
                out(f"  {done} of {len(plan.tasks)} learners graded ({time.perf_counter() - started:.0f} s)")
    finally:
        gradebook.close()


def _write(plan, recorder):
    """Every file for the whole class; returns the results in order, with what was marked by hand, and lateness.
    Where the grader's own machine failed on a learner, nothing a person reads is written (the CSVs, the LMS file,
    the feedback pages keep what the last complete run wrote, which agrees with what is stored): a failure's rows
    are not results, and a teacher who released them would give the class zeros."""
    ordered = [r for student in plan.students for lesson in plan.lessons for r in recorder.results[student, lesson]]
    late = recorder.every_lateness()
    ordered = by_hand(ordered, plan.root)  # what the teacher marked in formgrader
    if recorder.machine:
        return ordered, late
    write_csvs(plan.root, ordered, late)
    write_feedback(plan.root, ordered, late)
    write_lms_csv(plan.root, ordered, list(plan.lessons),
                  {key: lateness.penalty for key, lateness in late.items() if lateness.penalty},
                  points_possible=plan.choices.points_possible)
    return ordered, late


def _summary(plan, recorder, late, **said):
    missing = sum(rows[0].status == "missing" for rows in recorder.results.values())
    choices = plan.choices
    return {"learners": len(plan.students), "lessons": len(plan.lessons),
            "set_lessons": choices.set_lessons and list(plan.lessons), "only_students": choices.only_students,
            "only_lessons": choices.only_lessons, "handed_in": len(plan.students) * len(plan.lessons) - missing,
            "missing": missing, "late": sum(bool(lateness) for lateness in late.values()),
            "untimed": sum(when.when is None and lesson in recorder.deadlines.due
                           for (_, lesson), when in plan.exchange.items()),
            "by_exchange": sum(bool(when.flag) and when.when is not None for when in plan.exchange.values()),
            "regraded": recorder.regraded, "history": said.pop("history"), **plan.counts, "unsafe": plan.unsafe,
            "notices": recorder.notices, "machine": recorder.machine, "written": not recorder.machine, **said}


@contextlib.contextmanager
def _machinery(plan, profile, scheduler):
    """What grading needs on this machine while it runs; yields what bounds the sandboxes, in words. Here: the
    catalogue of the exercises this run grades and the sandbox session, made before the workers fork; on a Dask
    cluster, nothing (each worker makes its own, ``cluster``)."""
    if scheduler:
        yield (f"on the Dask cluster at {scheduler}: each worker's machine bounds its sandboxes as `make grade` "
               f"there says")
        return
    handed_in = {lesson for task in plan.tasks for lesson, _ in task.lessons}
    graded = [name for lesson, names in plan.lessons.items() if lesson in handed_in for name in names]
    if plan.tasks:
        with profile.timed("catalogue"):
            build_once(graded)
    session = sandbox.open_session()
    try:
        if plan.tasks:
            share_visible(session, graded)
        yield limits_text(session, plan.limits)
    finally:
        sandbox.close_session()


def _adopt(plan):
    """Store what the hand-in service graded (``plan.adopted``) as this run's own: the notebook and its results
    in ``autograded/``, the earlier ones moved to ``history/`` first; returns how many were moved."""
    moved = 0
    for student, lesson, digest, path in plan.adopted:
        folder = make_folder(plan.root / "autograded" / ids.folder(student) / lesson)
        moved += bool(keep_history(folder, digest, lesson))
        write_file(folder / f"{lesson}.ipynb", read_hand_in(path)[0])
        store(folder, digest, plan.version, plan.known[student, lesson])
    return moved


def grade_class(plan, *, jobs=None, out=print, scheduler=None):
    """Grade ``plan`` (a ``plan.Plan``) in ``jobs`` worker processes here, or on the Dask cluster whose scheduler
    is at ``scheduler`` (``cluster``); returns ``(results, summary dict)``."""
    started = time.perf_counter()
    recorder = Recorder(plan)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(plan.tasks))) if plan.tasks else 0
    with _machinery(plan, recorder.profile, scheduler) as described, _pool(plan, jobs, scheduler, out) as pool:
        kept = sum(bool(keep_history(plan.root / "autograded" / ids.folder(student) / lesson, digest, lesson))
                   for student, lesson, digest in plan.changed)  # once the workers are there: nothing is lost
        kept += _adopt(plan)
        if plan.tasks:
            where = f"on the Dask cluster at {scheduler}" if scheduler else f"with {jobs} worker{'s' * (jobs > 1)}"
            out(f"grading {sum(len(t.lessons) for t in plan.tasks)} submissions of {len(plan.tasks)} learners "
                f"{where}" + (" WITHOUT a sandbox (--unsafe)" if plan.unsafe else ""))
        _grade_tasks(plan, recorder, pool, out)
    with recorder.profile.timed("files"):
        ordered, late = _write(plan, recorder)
    return ordered, _summary(plan, recorder, late, history=kept, jobs=jobs, limits=described,
                             seconds=time.perf_counter() - started, profile=recorder.profile)
