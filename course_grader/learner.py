"""One learner graded in a worker: their lessons' answers run in one sandbox (restarted if an answer breaks it),
marked one by one (``marking``).

A worker reads nothing of the course: its ``Task`` brings the learner's notebooks and each lesson's released version
(``shipped``, in the teacher's process), and it sends back results, never writing a file: a worker on another
machine (``cluster``) grades as one on this machine does."""

import dataclasses
import time
from dataclasses import KW_ONLY, dataclass

from encoder_lib.grading.exercises import BY_LESSON, EXERCISES

from . import sandbox
from .files import plain_text
from .marking import NOT_ANSWERED, Marked, grade_answer
from .outputs import Result
from .profile import PROFILE, timed
from .submissions import (NOTEBOOK, NotebookProblem, ReleasedLesson, answer_digest, as_released, read_hand_in,
                          read_submission)

#: The longest answer cell run (the course's are a few kilobytes).
MAX_ANSWER_CHARS = 500_000

@dataclass(frozen=True)
class NotebookToGrade:
    """One notebook to grade, as the plan read it: its path, the SHA-256 of its bytes (hashed there, once) and its
    file's status then (``submissions.file_status``); once ``shipped``, its bytes too."""

    path: str
    digest: str
    status: tuple
    data: bytes = None


@dataclass(frozen=True)
class Task:
    """One learner's submissions to grade: ``((lesson, NotebookToGrade), ...)`` as the plan found them, and once
    ``shipped`` with their bytes (``Unreadable`` where they could not be read again, or changed), with the lessons'
    released versions (``released``) and the grader's version the teacher runs (``version``, which a worker
    elsewhere checks against its own)."""

    student_id: str
    lessons: tuple
    root: str
    secret: int
    _: KW_ONLY
    limits: sandbox.Limits
    unsafe: bool
    released: tuple = ()  # ((lesson, the released notebook's text), ...), once shipped
    version: str = ""
    previewed: bool = False  # each answer's ``marking.preview`` too (the hand-in service's, before the due date)
    known: tuple = ()  # ((exercise, answer's SHA-256, its Marked as a dict), ...): marked before, not run again


@dataclass(frozen=True)
class Unreadable:
    """A notebook that could not be read when it was shipped (``submissions.NotebookProblem``'s status and note)."""

    status: str
    note: str


def shipped(task, released, version):
    """``task`` with its notebooks read (here, in the teacher's process, without following links, refused where the
    file changed since the plan read and hashed it) and their lessons' released texts (``released``: ``{lesson:
    text}``) and ``version`` in it: all a worker needs. The plan's bytes are not kept until now: a class's hand-ins
    may be many megabytes each."""
    lessons = []
    for lesson, hand_in in task.lessons:
        try:
            data, _ = read_hand_in(hand_in.path, expect=hand_in.status)
            lessons.append((lesson, dataclasses.replace(hand_in, data=data)))
        except NotebookProblem as problem:
            lessons.append((lesson, Unreadable(problem.status, problem.note)))
    return dataclasses.replace(task, lessons=tuple(lessons), version=version,
                               released=tuple((lesson, released[lesson]) for lesson, _ in lessons))


@dataclass
class Graded:
    """One lesson as a worker graded it: its results, the SHA-256 of the bytes graded, and ``failure`` (in words)
    when the grader's own machinery failed on it, which is then not stored and is graded again next run."""

    results: list
    digest: str = None
    failure: str = None
    previews: dict = None  # {exercise: ``marking.preview``}, where the task asked for them
    marks: dict = None  # {exercise: {answer's SHA-256: its Marked as a dict}}


def lesson_rows(student, lesson, status, note):
    """Every exercise of a lesson with the same status and note (a lesson that could not be graded)."""
    return [Result(student, lesson, name, 0.0, float(EXERCISES[name].points), status, note=note)
            for name in BY_LESSON[lesson]]


def not_text(source):
    """Why ``source`` cannot be run (a sentence: a lone surrogate, which JSON's ``\\ud800`` can write), or ""."""
    try:
        source.encode("utf-8")
        return ""
    except UnicodeEncodeError as exc:
        return (f"the answer cell holds a character that is not text ({source[exc.start]!a}, a lone surrogate) on "
                f"line {source.count(chr(10), 0, exc.start) + 1}: Python cannot run it; delete it and hand in again")


class Learner:
    """One learner graded in a worker: one sandbox, started when an answer first needs it, restarted if one dies."""

    def __init__(self, task):
        self.task, self.released, self.box = task, dict(task.released), None
        self.previews, self.marks = {}, {}
        self.known = {name: (digest, mark) for name, digest, mark in task.known}

    def close(self):
        if self.box is not None:
            self.box.close()
            self.box = None

    def run(self, name, source):
        """The ``Marked`` of one answer; a sandbox that dies while it runs gets a second chance."""
        why = None
        for _ in range(2):
            if self.box is None:
                self.box = sandbox.Sandbox(unsafe=self.task.unsafe, limits=self.task.limits)
            try:
                return grade_answer(self.box, name, source, self.task.secret, self.task.limits,
                                    previewed=self.task.previewed)
            except sandbox.SandboxFailed:
                self.box = None
                raise
            except sandbox.SandboxDied as exc:
                self.box, why = None, exc
        return Marked("error", 0, f"the sandbox ended while running this answer, twice ({why})")

    def exercise(self, lesson, name, reading, released):
        """The ``Result`` of one exercise of a submission read as ``reading``."""
        source = reading.answers.get(name)
        if reading.unreadable:
            mark = Marked("error", 0, reading.unreadable)
        elif source is None:
            mark = Marked("failed", 0, "no answer cell")
        elif as_released(source, released, name):
            # the stub as released raises NotImplementedError: known without a sandbox, or the cases
            # (lesson 08's hold 14 MB of a model's weights) crossing into it for nothing
            mark = Marked("not answered", 0, NOT_ANSWERED)
        elif not_text(source):
            mark = Marked("error", 0, not_text(source))
        elif len(source) > MAX_ANSWER_CHARS:
            mark = Marked("error", 0, f"the answer cell has {len(source)} characters: at most {MAX_ANSWER_CHARS} "
                                      f"are run")
        elif self.known.get(name, ("",))[0] == answer_digest(source):
            mark = Marked(**self.known[name][1])  # the very answer marked before: never run again (issue 51)
        else:
            mark = self.run(name, source)
        if source is not None:
            self.marks[name] = {answer_digest(source): {**mark._asdict(), "points": float(mark.points)}}
        status, note = mark.status, mark.note
        self.previews[name] = mark.preview or {"status": status, "note": plain_text(note)}
        if reading.tampering.get(name):
            status, note = "tampered", "; ".join(reading.tampering[name]) + (
                f". Graded from the answer cell alone: {status}" + (f" ({note})" if note else ""))
        return Result(self.task.student_id, lesson, name, float(mark.points), float(EXERCISES[name].points), status,
                      note=plain_text(note), mistake=mark.mistake, diagnosis=mark.diagnosis)

    def lesson(self, lesson, hand_in):
        """One lesson's ``Graded``, from its shipped ``NotebookToGrade`` (or ``Unreadable``)."""
        student = self.task.student_id
        if isinstance(hand_in, Unreadable):
            return Graded(lesson_rows(student, lesson, hand_in.status, hand_in.note))
        with timed("read"):
            released = ReleasedLesson.from_text(self.released[lesson])
            reading = read_submission(hand_in.data, released, BY_LESSON[lesson])
        results = [self.exercise(lesson, name, reading, released) for name in BY_LESSON[lesson]]
        if reading.tampering.get(NOTEBOOK):
            results.append(Result(student, lesson, NOTEBOOK, 0.0, 0.0, "tampered",
                                  note="; ".join(reading.tampering[NOTEBOOK])))
        return Graded(results, hand_in.digest, previews=dict(self.previews) if self.task.previewed else None,
                      marks=dict(self.marks))


def machine_failure(student, lesson, why):
    note = f"not graded: the grader's machine failed here, not the answer ({why}); graded again on the next run"
    return Graded(lesson_rows(student, lesson, "error", plain_text(note)[:600]), failure=why)


def grade_learner(task):
    """Grade one learner's lessons (in one sandbox, restarted if an answer breaks it): ``(student, {lesson: Graded},
    profile)``, the profile's entries what this learner cost, stage by stage (``profile``)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # the stand-ins' computations are small; workers share the cores
    PROFILE.take()
    started, learner, graded = time.perf_counter(), Learner(task), {}
    try:
        for lesson, hand_in in task.lessons:
            try:
                graded[lesson] = learner.lesson(lesson, hand_in)
            except sandbox.SandboxFailed as exc:
                graded[lesson] = machine_failure(task.student_id, lesson, str(exc))
            except Exception as exc:  # the grader's own bug on this file: said, never stored as the learner's result
                graded[lesson] = machine_failure(task.student_id, lesson, f"{type(exc).__name__}: {exc}"[:300])
    finally:
        learner.close()
    PROFILE.add("learner", time.perf_counter() - started)
    return task.student_id, graded, PROFILE.take()

