"""`make grade`: every learner's lessons, graded in parallel sandboxes, judged outside them.

    python -m encoder_lib.grading.grader [--root .] [--jobs N] [--force] [--unsafe] [--release COMMAND]
        [--lessons a,b] [--student id,...] [--lesson name,...]

Takes the course's lock (``.grading.lock``) first, then runs ``--release``
(``make grade`` passes `make student`'s command, which writes ``release/``),
then reads ``submitted/<student_id>/<lesson>/<lesson>.ipynb`` (the layout
``nbgrader collect`` writes) against ``release/<lesson>/`` and, for every
exercise, runs its answer cell alone in a sandbox (``sandbox``) on the
exercise's visible cases and on hidden ones drawn for this very submission
from the course's secret seed (``.grading-secret`` beside ``gradebook.db``,
created on first use, never released) and the submission's SHA-256. The
results come back as plain arrays and are compared here, where no learner
code runs.

``--lessons`` (else ``c.EncoderCourse.lessons`` in the course's
``nbgrader_config.py``) names the lessons the class is set: the only ones graded and
counted (in the totals, the CSV files, the feedback pages and the report);
a lesson not set is not shown as missing. ``--student`` and ``--lesson``
grade just those learners and lessons: every other one keeps the results
stored in ``autograded/<student_id>/<lesson>/grading.json`` (whichever grader
stored them), and every output file is still written for the whole class.

A submission is graded again only when its content changed (a SHA-256 of the
notebook) or the grader did; ``--force`` grades everything again. Before a
changed submission is graded, the earlier ``grading.json`` and notebook are
moved into ``autograded/<student_id>/<lesson>/history/<time graded, UTC>/``,
never overwriting one kept before. Learners
are graded in parallel, one worker per core unless ``--jobs`` says
(``workers``); a worker that dies costs only its learner, whose lessons are
then reported as not graded and graded again on the next run, as is any
lesson on which the grader's own machinery failed: such a failure is never
stored as the learner's result.

Writes: the scores into ``gradebook.db`` and ``grades.csv`` (as ``nbgrader
export`` writes it), ``grades_by_exercise.csv``, ``grades_lms.csv`` (one row
per learner, for an LMS's gradebook import), one feedback page per learner
(``feedback/<student_id>/index.html``), and, per graded submission,
``autograded/<student_id>/<lesson>/`` (the notebook and ``grading.json``),
all readable by the teacher only (``--group-readable``: by the group too).
Every folder, cgroup and process it makes is gone when it ends, also after
Ctrl+C. The exit status is non-zero only when the grader itself could not
run: 2 when it could not start, 130 when interrupted.
"""

import argparse
import contextlib
import dataclasses
import fcntl
import hashlib
import inspect
import json
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import KW_ONLY, asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import deadlines, report, sandbox, submissions, wire
from .compare import Raised, allowed_names, build_cases, close, hidden_rngs
from .verdict import Outcome, judge
from .report import Result
from .exercises import EXERCISES
from .submissions import NOTEBOOK, NotebookProblem, ReleasedLesson, as_released, read_notebook, read_submission
from .workers import WorkerDied, Workers

SECRET_FILE = ".grading-secret"
LOCK_FILE = ".grading.lock"
STATUSES = ("passed", "failed", "not answered", "missing", "error", "timeout", "memory", "tampered")
#: The longest answer cell run (the course's are a few kilobytes).
MAX_ANSWER_CHARS = 500_000
#: An exercise's time limit is for its visible cases, as the self-check runs them; its hidden cases get time in
#: proportion, up to this many times the limit in all.
MAX_TIME_FACTOR = 3.0
#: A library call from an answer may take arrays up to this many times the largest its exercise's cases hold.
CALL_GROWTH = 4


# ---------------------------------------------------------------- the course


def course_secret(root):
    """The course's secret seed (an int), created beside gradebook.db on first use."""
    path = Path(root) / SECRET_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    return int(path.read_text().strip(), 16)


def lessons_with_exercises():
    """{lesson: [exercise names in course order]}."""
    lessons = {}
    for name, exercise in EXERCISES.items():
        lessons.setdefault(exercise.lesson, []).append(name)
    return lessons


def grader_version(secret, limits):
    """A digest of everything a result depends on besides the submission: the library's code, the secret, the limits."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        if "widgets" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update(hashlib.sha256(str(secret).encode()).digest())
    digest.update(json.dumps(asdict(limits), sort_keys=True).encode())
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------- an exercise's cases


NOT_ANSWERED = "not answered: the answer cell still raises NotImplementedError"

_VISIBLE = {}  # exercise -> [Case]: built once per process, the same for the whole class


def _quietly(build, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return build(*args)


def visible_cases(name):
    """The exercise's visible cases and its diagnosis's probes (``Case.probe``, never graded), with their right
    results and catalogued mistakes (built once)."""
    if name not in _VISIBLE:
        _VISIBLE[name] = _quietly(build_cases, EXERCISES[name], (), True)
    return _VISIBLE[name]


def _hidden_only(cases, rng, hidden):
    return cases(rng, hidden) if hidden else []


def hidden_cases(name, secret, submission, mistakes=False):
    """The hidden cases of one submission (``submission`` its SHA-256): drawn from the secret and its content.
    Without ``mistakes`` the catalogued mistakes' results are left out (they are needed for wrong answers only,
    and all-MiniLM-L6-v2's six mistakes cost a second a submission)."""
    exercise = EXERCISES[name]
    hidden = dataclasses.replace(exercise, cases=partial(_hidden_only, exercise.cases),
                                 mistakes=exercise.mistakes if mistakes else ())
    return _quietly(build_cases, hidden, hidden_rngs(secret, name, submission=submission))


def time_allowed(name, n_cases, limits):
    """The seconds an answer's run may take: the limit for the visible cases, and in proportion for the rest."""
    return limits.seconds * min(MAX_TIME_FACTOR, max(1.0, n_cases / max(1, len(visible_cases(name)))))


# ---------------------------------------------------------------- the library functions an answer calls


def _sizes(value):
    """``(largest dimension, number of elements)`` of the arrays in a value (lists, dicts and ``Call``s too)."""
    dimension, elements, pending = 0, 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, np.ndarray):
            dimension, elements = max(dimension, max(item.shape, default=1)), elements + item.size
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, wire.Call):
            pending.extend(item.args)
    return dimension, elements


@dataclass
class CallBudget:
    """What one exercise's library calls may take: arrays at most ``CALL_GROWTH`` times the largest of its cases
    (in elements and in each dimension), and ``seconds`` of the grader's time in all."""

    dimension: int
    elements: int
    seconds: float
    refused: list = field(default_factory=list)

    @classmethod
    def of(cls, cases, limits):
        sizes = [_sizes([case.args, case.kwargs]) for case in cases]
        return cls(CALL_GROWTH * max(d for d, _ in sizes) + 16, CALL_GROWTH * max(n for _, n in sizes) + 4096,
                   float(limits.seconds))

    def refusal(self, name, args, kwargs):
        """Why the call ``el.<name>(*args, **kwargs)`` is refused, or None."""
        dimension, elements = _sizes([args, kwargs])
        if dimension > self.dimension or elements > self.elements:
            return (f"el.{name} was called on arrays far larger than this exercise's checks use (a dimension of "
                    f"{dimension}, {elements} numbers): the grader refused to compute it")
        if self.seconds <= 0:
            return "its calls to the library took more of the grader's time than the exercise's time limit"
        return None


def _library_value(name, args, kwargs):
    import encoder_lib

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(encoder_lib, name)(*args, **kwargs)


def serve(message, allowed, budget=None):
    """Compute a library function the answer called through its stand-in, if its exercise may call it and the
    call is within ``budget`` (a ``CallBudget``, which records what it refused). The reply is a message for the
    sandbox (``Sandbox.run`` answers a value that cannot cross with an error)."""
    name, args, kwargs = message.get("name"), message.get("args"), message.get("kwargs")
    if name not in allowed or not isinstance(args, list) or not isinstance(kwargs, dict):
        return {"kind": "error", "type": "TypeError", "message": f"el.{name} is not available to this exercise"}
    why = budget.refusal(name, args, kwargs) if budget else None
    if why:
        budget.refused.append(why)
        return {"kind": "error", "type": "RuntimeError", "message": why}
    started = time.monotonic()
    try:
        return {"kind": "value", "value": _library_value(name, args, kwargs)}
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        return {"kind": "error", "type": type(exc).__name__, "message": str(exc)[:2000]}
    except Exception as exc:  # the library refused in another way: the answer's call was wrong
        return {"kind": "error", "type": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"[:2000]}
    finally:
        if budget:
            budget.seconds -= time.monotonic() - started


# ---------------------------------------------------------------- judging


def _ending(exercise, cases, events, ending, limits):
    """``(status, points, note)`` when the run ended before its cases can be judged, else None."""
    refused = next((e for e in events if e.get("kind") == "refused"), None)
    if refused:
        return "error", 0, refused["why"]
    if ending.get("status") == "timeout":
        done = {e.get("case") for e in events if e.get("kind") in ("result", "raised")}
        pending = next((c.description for i, c in enumerate(cases) if i not in done), None)
        seconds = time_allowed(exercise.name, len(cases), limits)
        return "timeout", 0, (f"stopped after {seconds:g} s, the time limit of this exercise's checks (an endless "
                              f"loop?)" + (f", while checking: {pending}" if pending else ""))
    failed = next((e for e in events if e.get("kind") == "cell_failed"), None)
    if failed:
        if failed.get("memory"):
            return "memory", 0, f"the answer cell ran out of memory (the limit is {limits.memory_bytes // 2**20} MiB)"
        return "error", 0, f"the answer cell itself failed: {failed.get('error')}"
    return None


def parameter_names(exercise, changed):
    """The names of the inputs ``changed`` (the runner's positions and keyword names) in the exercise's signature."""
    parameters = list(inspect.signature(exercise.reference).parameters)
    return tuple(parameters[c] if isinstance(c, int) and 0 <= c < len(parameters) else str(c) for c in changed)


def outcome_of(exercise, event):
    """A sandbox's event of one case as the ``verdict.Outcome`` the self-check would have seen."""
    changed = parameter_names(exercise, event.get("changed") or ())
    if event["kind"] == "raised":
        return Outcome(raised=Raised.from_text(event.get("error", "")), changed=changed)
    return Outcome(value=event.get("value"), changed=changed)


class Marked(NamedTuple):
    """How one answer was marked: its status, points and note, and what the feedback named (for the class
    report): the catalogued mistakes (their names joined by `` + ``) or the diagnosis's keys (by `` | ``)."""

    status: str
    points: float
    note: str
    mistake: str = ""
    diagnosis: str = ""


def marked(verdict):
    """The ``Marked`` of a ``verdict.Verdict``: the note is the self-check's paragraph, word for word."""
    if verdict.passed:
        return Marked("passed", verdict.exercise.points, "")
    named = [verdict.mistake] if verdict.mistake else [m for m, _ in verdict.partly or ()]
    keys = ([f"changed:{','.join(verdict.changed)}"] if verdict.changed else []) + \
        [f.key for f in verdict.findings if verdict.mistake is None]
    return Marked("failed", 0, verdict.note(), report.MISTAKE_JOIN.join(m.name for m in named),
                  report.DIAGNOSIS_JOIN.join(keys))


def mark(exercise, cases, events, ending, limits):
    """The ``Marked`` of an answer from what the sandbox reported on ``cases``: how the run ended, else the
    feedback's verdict (``verdict.judge``), the same as the notebook's self-check gives on those cases."""
    ended = _ending(exercise, cases, events, ending, limits)
    if ended:
        return Marked(*ended)
    by_case = {e.get("case"): e for e in events if e.get("kind") in ("result", "raised")}
    for i, case in enumerate(cases):
        event = by_case.get(i)
        if event is None:
            detail = ending.get("detail") or "it stopped"
            return Marked("error", 0, f"the answer's process ended early ({detail}), while checking: "
                                      f"{case.description}")
        if event["kind"] == "raised" and event.get("not_done"):
            return Marked("not answered", 0, NOT_ANSWERED)
        if event["kind"] == "raised" and event.get("memory"):
            return Marked("memory", 0, f"{case.description}: it ran out of memory "
                                       f"(the limit is {limits.memory_bytes // 2**20} MiB)")
    verdict = judge(exercise, cases, [outcome_of(exercise, by_case[i]) for i in range(len(cases))])
    return marked(verdict)


def grade_answer(box, name, source, secret, limits, submission=None):
    """Run one answer in ``box`` (a started Sandbox) on the visible cases, the diagnosis's probes and the hidden
    cases of ``submission`` (its SHA-256), and judge it: a ``Marked``."""
    exercise = EXERCISES[name]
    cases = visible_cases(name) + hidden_cases(name, secret, submission)
    allowed = allowed_names(exercise, cases)
    budget = CallBudget.of(cases, limits)
    events, ending = box.run(name, source, [(c.args, c.kwargs) for c in cases], exercise.uses, exercise.may_call,
                             limits, serve=partial(serve, allowed=allowed, budget=budget), calls=allowed,
                             seconds=time_allowed(name, len(cases), limits))
    events = events + [{"kind": "refused", "why": why} for why in budget.refused[:1]]
    verdict = mark(exercise, cases, events, ending, limits)
    if verdict.status != "failed" or not _fails_a_hidden_case(cases, events):
        return verdict
    # a wrong answer that fails a hidden case: judged again with the mistakes' results on the hidden cases too,
    # so that a mistake is named only when it explains every failing check
    return mark(exercise, visible_cases(name) + hidden_cases(name, secret, submission, mistakes=True), events,
                 ending, limits)


def _fails_a_hidden_case(cases, events):
    by_case = {e.get("case"): e for e in events if e.get("kind") in ("result", "raised")}
    return any(case.hidden and (by_case[i]["kind"] == "raised" or not close(by_case[i].get("value"), case.expected))
               for i, case in enumerate(cases) if i in by_case)


# ---------------------------------------------------------------- one learner


@dataclass(frozen=True)
class Task:
    """One learner's submissions to grade: ``[(lesson, notebook path)]``."""

    student_id: str
    lessons: tuple
    root: str
    secret: int
    limits: sandbox.Limits
    unsafe: bool


@dataclass
class Graded:
    """One lesson as a worker graded it: its results, the SHA-256 of the bytes graded, and ``failure`` (in words)
    when the grader's own machinery failed on it, which is then not stored and is graded again next run."""

    results: list
    digest: str = None
    failure: str = None


def lesson_rows(student, lesson, status, note):
    """Every exercise of a lesson with the same status and note (a lesson that could not be graded)."""
    return [Result(student, lesson, name, 0.0, float(EXERCISES[name].points), status, note=note)
            for name in lessons_with_exercises()[lesson]]


def _tampered(status, note, notes):
    return "tampered", "; ".join(notes) + f". Graded from the answer cell alone: {status}" + (f" ({note})" if note else "")


class Learner:
    """One learner graded in a worker: one sandbox, started when an answer first needs it, restarted if one dies."""

    def __init__(self, task):
        self.task, self.root, self.box = task, Path(task.root), None

    def close(self):
        if self.box is not None:
            self.box.close()
            self.box = None

    def run(self, name, source, digest):
        """The ``Marked`` of one answer; a sandbox that dies while it runs gets a second chance."""
        why = None
        for _ in range(2):
            if self.box is None:
                self.box = sandbox.Sandbox(unsafe=self.task.unsafe, limits=self.task.limits)
            try:
                return grade_answer(self.box, name, source, self.task.secret, self.task.limits, digest)
            except sandbox.SandboxFailed:
                self.box = None
                raise
            except sandbox.SandboxDied as exc:
                self.box, why = None, exc
        return Marked("error", 0, f"the sandbox ended while running this answer, twice ({why})")

    def exercise(self, lesson, name, reading, released, digest):
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
        elif len(source) > MAX_ANSWER_CHARS:
            mark = Marked("error", 0, f"the answer cell has {len(source)} characters: at most {MAX_ANSWER_CHARS} "
                                      f"are run")
        else:
            mark = self.run(name, source, digest)
        status, note = mark.status, mark.note
        if reading.tampering.get(name):
            status, note = _tampered(status, note, reading.tampering[name])
        return Result(self.task.student_id, lesson, name, float(mark.points), float(EXERCISES[name].points), status,
                      note=report.plain_text(note), mistake=mark.mistake, diagnosis=mark.diagnosis)

    def lesson(self, lesson, path):
        """One lesson's ``Graded``; the notebook as graded is kept in autograded/."""
        student = self.task.student_id
        try:
            data = read_notebook(path)
        except NotebookProblem as problem:
            return Graded(lesson_rows(student, lesson, problem.status, problem.note))
        digest = hashlib.sha256(data).hexdigest()
        released = ReleasedLesson.from_text((self.root / "release" / lesson / f"{lesson}.ipynb").read_text())
        reading = read_submission(data, released, lessons_with_exercises()[lesson])
        results = [self.exercise(lesson, name, reading, released, digest) for name in lessons_with_exercises()[lesson]]
        if reading.tampering.get(NOTEBOOK):
            results.append(Result(student, lesson, NOTEBOOK, 0.0, 0.0, "tampered",
                                  note="; ".join(reading.tampering[NOTEBOOK])))
        folder = report.make_folder(self.root / "autograded" / student / lesson)
        report.write_file(folder / f"{lesson}.ipynb", data)
        return Graded(results, digest)


def _machine_failure(student, lesson, why):
    note = f"not graded: the grader's machine failed here, not the answer ({why}); graded again on the next run"
    return Graded(lesson_rows(student, lesson, "error", report.plain_text(note)[:600]), failure=why)


def grade_learner(task):
    """Grade one learner's lessons (in one sandbox, restarted if an answer breaks it); ``(student, {lesson: Graded})``."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # the stand-ins' computations are small; workers share the cores
    learner, graded = Learner(task), {}
    try:
        for lesson, path in task.lessons:
            try:
                graded[lesson] = learner.lesson(lesson, path)
            except sandbox.SandboxFailed as exc:
                graded[lesson] = _machine_failure(task.student_id, lesson, str(exc))
            except Exception as exc:  # the grader's own bug on this file: said, never stored as the learner's result
                graded[lesson] = _machine_failure(task.student_id, lesson, f"{type(exc).__name__}: {exc}"[:300])
    finally:
        learner.close()
    return task.student_id, graded


# ---------------------------------------------------------------- the class


def cached(folder, digest, version):
    """The results stored for this exact submission by this exact grader, or None."""
    try:
        stored = json.loads((folder / "grading.json").read_text())
        if stored.get("submission_sha256") != digest or stored.get("grader") != version:
            return None
        return [Result(**row) for row in stored["results"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def store(folder, digest, version, results):
    payload = {"submission_sha256": digest, "grader": version, "results": [asdict(r) for r in results]}
    report.write_file(report.make_folder(folder) / "grading.json", json.dumps(payload, indent=1, sort_keys=True) + "\n")


def stored(folder):
    """The results stored in ``folder``'s grading.json by any grader, for any submission, or None."""
    try:
        return [Result(**row) for row in json.loads((folder / "grading.json").read_text())["results"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


HISTORY = "history"


def keep_history(folder, digest, lesson):
    """Before a changed submission is graded: the earlier ``grading.json`` and notebook moved into
    ``history/<the time they were graded, UTC>/``, never overwriting one kept before; returns that folder, or
    None when there was nothing earlier or it was this very submission."""
    earlier = folder / "grading.json"
    try:
        if json.loads(earlier.read_text()).get("submission_sha256") == digest:
            return None
    except (OSError, ValueError, AttributeError):
        if not earlier.is_file():
            return None
    stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(earlier.stat().st_mtime))
    kept, n = folder / HISTORY / stamp, 1
    while kept.exists():
        n += 1
        kept = folder / HISTORY / f"{stamp}-{n}"
    report.make_folder(folder / HISTORY)
    report.make_folder(kept)
    for name in (f"{lesson}.ipynb", "grading.json"):
        if (folder / name).is_file():
            os.replace(folder / name, kept / name)
    return kept


def names_list(text):
    """``"a, b"`` as ``["a", "b"]``; None for None or nothing."""
    names = [name.strip() for name in (text or "").split(",") if name.strip()]
    return names or None


@dataclass
class ClassRun:
    """One `make grade` of a class: what it found, what it graded, and what it says at the end."""

    root: Path
    limits: sandbox.Limits
    force: bool
    unsafe: bool
    out: object
    _: KW_ONLY
    results: dict = field(default_factory=dict)  # (student, lesson) -> [Result]
    handed_in: dict = field(default_factory=dict)  # (student, lesson) -> notebook path, for the gradebook
    exchange: dict = field(default_factory=dict)  # (student, lesson) -> the exchange's time of every hand-in, or None
    tasks: list = field(default_factory=list)
    notices: list = field(default_factory=list)
    machine: list = field(default_factory=list)  # (student, lesson, why)
    counts: dict = field(default_factory=lambda: {"regraded": 0, "reused": 0, "kept": 0, "not_graded": 0,
                                                  "history": 0})
    set_lessons: list = None  # the lessons the class is set (LESSONS=): the only ones counted; None: all
    only_students: list = None  # grade just these learners (STUDENT=); the others' results are as stored
    only_lessons: list = None  # grade just these lessons (LESSON=)

    def __post_init__(self):
        self.started = time.perf_counter()
        self.secret = course_secret(self.root)
        self.version = grader_version(self.secret, self.limits)
        self.deadlines = deadlines.Deadlines.read(self.root)  # the gradebook's due dates, extensions.csv
        self.penalties = None  # nbgrader's late-penalty plugin, made before grading where a lesson has a due date
        if self.deadlines.due:
            try:
                self._penalties()
            except Exception as exc:  # the course's plugin_class or penalty_method: said before anything is graded
                raise SystemExit(f"nbgrader's late-penalty setting in nbgrader_config.py (AssignLatePenalties, "
                                 f"LateSubmissionPlugin) cannot be used: {type(exc).__name__}: {exc}") from None
        self.late = {}  # (student, lesson) -> deadlines.Lateness of the results it was computed for
        every = lessons_with_exercises()
        for what, names in (("LESSONS", self.set_lessons), ("LESSON", self.only_lessons)):
            unknown = [name for name in names or () if name not in every]
            if unknown:
                what += " (or c.EncoderCourse.lessons in nbgrader_config.py)" if what == "LESSONS" else ""
                raise SystemExit(f"{what} must name lessons of the course ({', '.join(every)}); got "
                                 f"{', '.join(map(repr, unknown))}")
        self.lessons = {lesson: names for lesson, names in every.items()
                        if self.set_lessons is None or lesson in self.set_lessons}
        unset = [name for name in self.only_lessons or () if name not in self.lessons]
        if unset:
            raise SystemExit(f"LESSON={','.join(unset)} is not among the lessons set (LESSONS={','.join(self.lessons)})")
        for lesson in self.lessons:
            if not (self.root / "release" / lesson / f"{lesson}.ipynb").is_file():
                raise SystemExit(f"release/{lesson}/{lesson}.ipynb is missing: run `make student` first")

    def plan(self):
        """Find every learner's lessons and decide, for each, missing, reported, stored, or to grade."""
        found = submissions.scan(self.root / "submitted", self.lessons)
        self.notices += found.notices
        known = {submissions.safe_name(s) for s in report.gradebook_students(self.root)}
        self.students = sorted(set(found.students) | known)
        # a learner is named by their id or by the safe name the summary gave it
        self.wanted = None if self.only_students is None else \
            set(self.only_students) | {submissions.safe_name(s) for s in self.only_students}
        strangers = [s for s in self.only_students or () if s not in self.students
                     and submissions.safe_name(s) not in self.students]
        if strangers:
            raise SystemExit(f"STUDENT={','.join(strangers)}: no such learner in submitted/ or the gradebook")
        for student in self.students:
            lessons = [self.plan_lesson(found.handed.get((student, lesson)), student, lesson,
                                        self.selected(student, lesson)) for lesson in self.lessons]
            to_grade = tuple(todo for todo in lessons if todo)
            if to_grade:
                self.tasks.append(Task(student, to_grade, str(self.root), self.secret, self.limits, self.unsafe))

    def selected(self, student, lesson):
        """Whether this run grades ``student``'s ``lesson`` (STUDENT= and LESSON= choose; by default, all)."""
        return (self.wanted is None or student in self.wanted) and \
            (self.only_lessons is None or lesson in self.only_lessons)

    def plan_lesson(self, handed, student, lesson, selected=True):
        """``(lesson, path)`` if it is to be graded now; otherwise its results are set here. One not ``selected``
        keeps the results stored in autograded/ (by whichever grader, for whichever submission)."""
        if handed is None or handed.problem:
            status, note = ("missing", "not handed in") if handed is None else (handed.status, handed.problem)
            self.results[student, lesson] = lesson_rows(student, lesson, status, note)
            return None
        self.exchange[student, lesson] = submissions.exchange_time(handed.path)
        try:
            digest = hashlib.sha256(read_notebook(handed.path)).hexdigest()
        except NotebookProblem as problem:
            self.results[student, lesson] = lesson_rows(student, lesson, problem.status, problem.note)
            return None
        folder = self.root / "autograded" / student / lesson
        if not selected:
            return self.keep_stored(student, lesson, folder)
        self.handed_in[student, lesson] = handed.path
        previous = None if self.force else cached(folder, digest, self.version)
        if previous is not None:
            self.results[student, lesson] = previous
            self.counts["reused"] += 1
            return None
        if keep_history(folder, digest, lesson):
            self.counts["history"] += 1
        return lesson, str(handed.path)

    def keep_stored(self, student, lesson, folder):
        """A lesson this run does not grade (STUDENT=, LESSON=) keeps its stored results; None."""
        earlier = stored(folder)
        self.counts["kept" if earlier else "not_graded"] += 1
        self.results[student, lesson] = earlier or lesson_rows(
            student, lesson, "error", "not graded yet: this run graded other learners or lessons only; "
                                      "`make grade` grades it")
        return None

    def take(self, student, graded, gradebook):
        """Keep one worker's results: stored and recorded, unless the machine failed on them."""
        for lesson, lesson_graded in graded.items():
            self.results[student, lesson] = lesson_graded.results
            if lesson_graded.failure:
                self.machine.append((student, lesson, lesson_graded.failure))
                continue
            store(self.root / "autograded" / student / lesson, lesson_graded.digest, self.version, lesson_graded.results)
            self.record(gradebook, student, lesson, lesson_graded.results)
            self.counts["regraded"] += 1
        gradebook.commit()  # one learner at a time: an interrupted run loses none it recorded

    def _penalties(self):
        if self.penalties is None:
            self.penalties = deadlines.Penalties(self.root)
        return self.penalties

    def lateness(self, student, lesson, rows):
        """The ``deadlines.Lateness`` of a handed-in lesson with these results: by the exchange's time (none: never
        late) against its due date or the learner's extension, the penalty nbgrader's setting takes from its
        grader's points."""
        score = sum(r.points for r in rows if r.exercise != NOTEBOOK)
        late = self.deadlines.lateness(student, lesson, self.exchange.get((student, lesson)), score, self._penalties)
        self.late[student, lesson] = late
        return late

    def record(self, gradebook, student, lesson, rows):
        problem = gradebook.record(student, lesson, self.handed_in[student, lesson], rows,
                                   self.lateness(student, lesson, rows))
        if problem:
            self.notices.append(f"{student} {lesson}: {problem}")

    def grade(self, jobs):
        """Grade the tasks in ``jobs`` workers, recording each learner as they come in; then grades.csv."""
        with Workers(grade_learner, jobs) if self.tasks else contextlib.nullcontext() as pool:
            results = pool.results(self.tasks) if self.tasks else ()  # forked before the gradebook opens
            gradebook = report.GradebookWriter(self.root, self.students)
            try:
                for (student, lesson), rows in sorted(self.results.items()):
                    if (student, lesson) in self.handed_in:  # unchanged since the last run: make sure the gradebook has it
                        self.record(gradebook, student, lesson, rows)
                for done, (task, value) in enumerate(results, 1):
                    self.take(task.student_id, self.worker_died(task, value) if isinstance(value, WorkerDied)
                              else value[1], gradebook)
                    self.progress(done)
            finally:
                gradebook.close()

    def worker_died(self, task, died):
        return {lesson: _machine_failure(task.student_id, lesson, died.why) for lesson, _ in task.lessons}

    def progress(self, done):
        if done % max(1, len(self.tasks) // 10) == 0 or done == len(self.tasks):
            self.out(f"  {done} of {len(self.tasks)} learners graded ({time.perf_counter() - self.started:.0f} s)")

    def write(self, jobs, limits_text):
        ordered = [r for student in self.students for lesson in self.lessons for r in self.results[student, lesson]]
        # every hand-in's lateness (also of one this run did not grade: STUDENT=, LESSON=), from the grader's points
        late = {key: self.late[key] if key in self.late else self.lateness(*key, self.results[key])
                for key in self.exchange if key in self.results}
        ordered = report.by_hand(ordered, self.root)  # what the teacher marked in formgrader
        report.write_csvs(self.root, ordered, late)
        report.write_feedback(self.root, ordered, late)
        report.write_lms_csv(self.root, ordered, list(self.lessons),
                             {key: lateness.penalty for key, lateness in late.items() if lateness.penalty})
        missing = sum(rows[0].status == "missing" for rows in self.results.values())
        summary = {"learners": len(self.students), "lessons": len(self.lessons),
                   "set_lessons": self.set_lessons and list(self.lessons), "only_students": self.only_students,
                   "only_lessons": self.only_lessons,
                   "handed_in": len(self.students) * len(self.lessons) - missing, "missing": missing,
                   "late": sum(bool(lateness) for lateness in late.values()),
                   "untimed": sum(when is None and lesson in self.deadlines.due
                                  for (_, lesson), when in self.exchange.items()),
                   **self.counts, "seconds": time.perf_counter() - self.started, "jobs": jobs, "unsafe": self.unsafe,
                   "notices": self.notices, "machine": self.machine, "limits": limits_text}
        return ordered, summary


def limits_text(session, limits):
    """In words, what bounds each sandbox on this machine."""
    per_exercise = f"{limits.seconds:g} s and {limits.memory_bytes // 2**20} MiB an exercise"
    if session.cgroups is not None:
        return (f"{per_exercise}; each sandbox in a cgroup (v{session.cgroups.version}) of its own: at most "
                f"{(limits.memory_bytes + sandbox.SANDBOX_EXTRA_BYTES) // 2**20} MiB and {sandbox.SANDBOX_TASKS} tasks")
    threads = "answers may start threads" if os.geteuid() != 0 else "answers may start no threads"
    return f"{per_exercise}; no cgroups here: limits per process only ({threads})"


def grade_class(root, *, jobs=None, force=False, unsafe=False, limits=sandbox.Limits(), out=print, lessons=None,
                students=None, only_lessons=None):
    """Grade every submission in ``root``/submitted (of ``lessons``, the lessons set, default all; only
    ``students``' and ``only_lessons``' if given, the others' results as stored); returns ``(results, summary
    dict)``."""
    run = ClassRun(Path(root).resolve(), limits, force, unsafe, out, set_lessons=lessons, only_students=students,
                   only_lessons=only_lessons)
    run.plan()
    for name in EXERCISES:  # built once here; the workers inherit them
        visible_cases(name)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(run.tasks))) if run.tasks else 0
    session = sandbox.open_session()
    try:
        described = limits_text(session, limits)
        if run.tasks:
            out(f"grading {sum(len(t.lessons) for t in run.tasks)} submissions of {len(run.tasks)} learners "
                f"with {jobs} worker{'s' * (jobs > 1)}" + (" WITHOUT a sandbox (--unsafe)" if unsafe else ""))
        run.grade(jobs)
    finally:
        sandbox.close_session()
    return run.write(jobs, described)


# ---------------------------------------------------------------- the command


class Lock:
    """The course's lock (``.grading.lock``), taken before anything is touched; ``holder`` names who has it."""

    def __init__(self, root):
        self.fd = os.open(Path(root) / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.holder = os.pread(self.fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(self.fd)
            self.fd = None
            return
        self.holder = None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"process {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode(), 0)

    def release(self):
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="make grade", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--jobs", type=int, default=None, help="learners graded at once (default: one per core)")
    parser.add_argument("--force", action="store_true", help="grade every submission again")
    parser.add_argument("--unsafe", action="store_true",
                        help="grade without a sandbox: the answers run with your account's rights")
    parser.add_argument("--seconds", type=float, default=sandbox.Limits.seconds, help="time limit per exercise")
    parser.add_argument("--memory-mib", type=int, default=sandbox.Limits.memory_bytes // 2**20,
                        help="memory limit per exercise, MiB")
    parser.add_argument("--release", default=None,
                        help="a command that writes release/ (make student's), run once the lock is held")
    parser.add_argument("--group-readable", action="store_true",
                        help="make what the grader writes readable by your group too (default: by you only)")
    parser.add_argument("--lessons", type=names_list, default=None,
                        help="the lessons the class is set, separated by commas: the only ones graded and counted "
                             "(default: every lesson)")
    parser.add_argument("--student", type=names_list, default=None,
                        help="grade just these learners (ids separated by commas); the others keep their stored "
                             "results")
    parser.add_argument("--lesson", type=names_list, default=None,
                        help="grade just these lessons (separated by commas); the others keep their stored results")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.seconds <= 0 or args.memory_mib < 64:
        parser.error(f"--seconds must be above 0 and --memory-mib at least 64, got {args.seconds} and {args.memory_mib}")
    return args


def _cannot_start(root, args):
    """Why grading cannot start (a sentence), or None."""
    if not (root / "gradebook.db").is_file():
        return f"{root / 'gradebook.db'} is missing: run `make student` first"
    if not (root / "submitted").is_dir() or not any((root / "submitted").iterdir()):
        return ("nothing to grade: put submissions in submitted/<student_id>/<lesson>/<lesson>.ipynb "
                "(nbgrader collect does)")
    problem = None if args.unsafe else sandbox.sandbox_problem()
    if problem:
        return (f"make grade runs learners' code in a sandbox, and cannot make one here: {problem}.\n"
                f"To grade anyway, with the learners' code running under your account and able to read and "
                f"change your files: make grade UNSAFE=1")
    return None


def _grade_locked(root, args):
    if args.release:
        made = subprocess.run(shlex.split(args.release), cwd=root)
        if made.returncode != 0:
            print(f"{args.release} failed (exit status {made.returncode}): nothing graded", file=sys.stderr)
            return 2
    problem = _cannot_start(root, args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    limits = sandbox.Limits(seconds=args.seconds, memory_bytes=args.memory_mib * 2**20)
    try:
        lessons = args.lessons or report.lessons_set(root)  # LESSONS=, else the course's setting
        results, summary = grade_class(root, jobs=args.jobs, force=args.force, unsafe=args.unsafe, limits=limits, lessons=lessons,
                                       students=args.student, only_lessons=args.lesson)
    except ValueError as exc:
        print(f"make grade: {exc}: nothing graded", file=sys.stderr)
        return 2
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(f"make grade: {exc.code}: nothing graded", file=sys.stderr)
            return 2
        raise
    print(report.summary_text(results, summary))
    write_class_report(root, summary["set_lessons"])
    return 0


def write_class_report(root, lessons=None):
    """``report/index.html``, what the class got wrong (``class_report``), from what was just written; a report
    that fails costs no grade (``make report`` writes it again)."""
    from . import class_report

    started = time.perf_counter()
    try:
        written = class_report.build(root, lessons=lessons)
    except Exception as exc:  # the grades are written: say so, and how to try again
        print(f"the class report could not be written ({type(exc).__name__}: {exc}); the grades are; "
              f"`make report` writes it from them", file=sys.stderr)
        return None
    print(f"what the class got wrong and what to re-teach: {written} ({time.perf_counter() - started:.1f} s)")
    return written


def _interrupted(*_):
    raise KeyboardInterrupt


def main(argv=None):
    args = _arguments(argv)
    root = args.root.resolve()
    if not root.is_dir():
        print(f"{root} is not a folder: --root must be the course folder", file=sys.stderr)
        return 2
    lock = Lock(root)
    if lock.holder:
        print(f"another `make grade` is running in this course ({lock.holder}); wait for it to finish: "
              f"nothing was changed", file=sys.stderr)
        return 2
    mask = os.umask(0o027 if args.group_readable else 0o077)
    terminate = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return _grade_locked(root, args)
    except KeyboardInterrupt:
        print("make grade was interrupted: what it graded so far is kept, the rest is graded on the next run; "
              "its sandboxes, workers and scratch folders are gone", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, terminate)
        os.umask(mask)
        lock.release()


if __name__ == "__main__":
    sys.exit(main())
