"""A `make grade` decided before anything runs: ``plan_run`` returns a ``Plan``, which ``run.grade_class`` grades.

For every learner and lesson counted: missing, not readable, unchanged (its stored results reused), kept as stored
(``--student``/``--lesson`` chose others), or graded now (a ``learner.Task`` per learner). The teacher's choices
and the sections are checked first, so that a wrong one stops the run before anything is touched.
"""

import dataclasses
import hashlib
from collections import Counter
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from . import course_config, exchange, gradebook, ids, submissions
from .handin import store as handin_store
from .learner import NotebookToGrade, Task, lesson_rows
from .refused import Refused
from .roster import match as match_roster
from .sandbox import Limits
from .sections import read_sections
from .stored import stored
from .version import course_secret, grader_version
from .submissions import NotebookProblem, read_hand_in

@dataclass(frozen=True)
class Choices:
    """What the teacher asked of this run: the lessons set (``LESSONS=``, None: all), and the learners and lessons
    graded now (``STUDENT=``, ``LESSON=``; None: all), with ``force`` (grade again what is unchanged) and
    ``points_possible`` (`make grade`'s default, ``POINTS_POSSIBLE=0`` turns it off)."""

    set_lessons: list = None
    only_students: list = None
    only_lessons: list = None
    force: bool = False
    points_possible: bool = False  # grades_lms.csv's "Points Possible" row, as Canvas's export has it


@dataclass(frozen=True)
class Plan:
    """One `make grade`, decided: which learners and lessons are counted, what is graded now, what is known without
    grading, and the course's secret and grader version the results are stored with."""

    root: Path
    limits: Limits
    unsafe: bool
    choices: Choices
    _: KW_ONLY
    secret: int
    version: str
    lessons: dict  # {lesson: (exercise names)}: the lessons counted, in course order
    students: tuple
    tasks: tuple  # a learner.Task for each learner with a lesson to grade now
    known: dict  # (student, lesson) -> [Result] decided without grading: missing, unreadable, unchanged, kept
    handed_in: dict  # (student, lesson) -> the notebook of a hand-in the gradebook records (graded now or unchanged)
    exchange: dict  # (student, lesson) -> each hand-in's time (``exchange.HandInTime``)
    changed: tuple  # (student, lesson, SHA-256) of the hand-ins graded now: earlier results go to history/ first
    adopted: tuple  # (student, lesson, SHA-256, notebook) of hand-ins the hand-in service graded, stored as graded now
    notices: tuple  # what was found in submitted/, in words
    counts: dict  # {"reused", "kept", "not_graded", "from_service"}: lessons not graded now, by why


def lessons_to_grade(root, choices):
    """``{lesson: exercise names}`` of the lessons counted, after checking the teacher's choices (``Refused`` with a
    sentence naming the setting otherwise)."""
    for what, names in (("LESSONS", choices.set_lessons), ("LESSON", choices.only_lessons)):
        unknown = [name for name in names or () if name not in BY_LESSON]
        if unknown:
            what += " (or c.EncoderCourse.lessons in nbgrader_config.py)" if what == "LESSONS" else ""
            raise Refused(f"{what} must name lessons of the course ({', '.join(BY_LESSON)}); got "
                             f"{', '.join(map(repr, unknown))}")
    lessons = {lesson: names for lesson, names in BY_LESSON.items()
               if choices.set_lessons is None or lesson in choices.set_lessons}
    unset = [name for name in choices.only_lessons or () if name not in lessons]
    if unset:
        raise Refused(f"LESSON={','.join(unset)} is not among the lessons set (LESSONS={','.join(lessons)})")
    for lesson in lessons:
        if not (Path(root) / "release" / lesson / f"{lesson}.ipynb").is_file():
            raise Refused(f"release/{lesson}/{lesson}.ipynb is missing: run `make student` first")
    return lessons


def _wanted(students, choices):
    """The learners graded now (None: all), each named by their id or by the name of their folders
    (``ids.folder``)."""
    if choices.only_students is None:
        return None
    named = ids.by_folder(students)
    strangers = [s for s in choices.only_students if s not in students and s not in named]
    if strangers:
        raise Refused(f"STUDENT={','.join(strangers)}: no such learner in submitted/ or the gradebook")
    return {named.get(s, s) for s in choices.only_students}


@dataclass(frozen=True)
class Decision:
    """What planning decides of one learner's lesson: ``todo``, ``(lesson, learner.NotebookToGrade)`` where it is
    graded now; else ``known``, its results without grading. ``when`` is its hand-in time, ``handed_in`` the notebook
    the gradebook records, ``changed`` ``(student, lesson, digest)`` of a hand-in graded now, ``count`` why one is not
    graded now (``"reused"``, ``"kept"``, ``"not_graded"``, ``"from_service"``: the hand-in service graded it, and
    ``adopted`` says which, to store as graded)."""

    _: KW_ONLY
    todo: tuple = None
    known: list = None
    when: object = None
    handed_in: object = None
    changed: tuple = None
    count: str = None
    adopted: tuple = None


def decide(handed, student, lesson, *, selected, settings):
    """The ``Decision`` of one learner's lesson (``handed``: ``submissions``' find, None where not handed in):
    ``settings`` is ``(root, version, force, the record make collect keeps of it, the course's grace for a
    learner's stamp)``. The notebook is read and hashed here, once; the worker gets the digest."""
    root, version, force, record, grace = settings
    if handed is None or handed.problem:
        status, note = ("missing", "not handed in") if handed is None else (handed.status, handed.problem)
        return Decision(known=lesson_rows(student, lesson, status, note))
    try:
        data, status = read_hand_in(handed.path)
    except NotebookProblem as problem:
        return Decision(known=lesson_rows(student, lesson, problem.status, problem.note),
                        when=exchange.hand_in_time(handed.path, record, grace=grace))
    digest = hashlib.sha256(data).hexdigest()
    when = exchange.hand_in_time(handed.path, record, digest, grace)
    folder = root / "autograded" / ids.folder(student) / lesson
    if not selected:
        earlier = stored(folder, student)
        return Decision(known=earlier or lesson_rows(
            student, lesson, "error", "not graded yet: this run graded other learners or lessons only; `make grade` "
                                      "grades it"), when=when, count="kept" if earlier else "not_graded")
    previous = None if force else stored(folder, student, digest, version)
    if previous is not None:
        return Decision(known=previous, when=when, handed_in=handed.path, count="reused")
    graded = None if force else handin_store.reused(root, student, lesson, digest, version)
    if graded is not None:  # the hand-in service graded this very notebook with this very grader
        return Decision(known=graded, when=when, handed_in=handed.path, count="from_service",
                        adopted=(student, lesson, digest, handed.path))
    return Decision(todo=(lesson, NotebookToGrade(str(handed.path), digest, status)), when=when,
                    handed_in=handed.path, changed=(student, lesson, digest))


def _gathered(decisions):
    """``plan_run``'s fields from every ``((student, lesson), Decision)``."""
    known = {key: d.known for key, d in decisions if d.known is not None}
    when = {key: d.when for key, d in decisions if d.when is not None}
    handed_in = {key: d.handed_in for key, d in decisions if d.handed_in is not None}
    counts = {**dict.fromkeys(("reused", "kept", "not_graded", "from_service"), 0),
              **Counter(d.count for _, d in decisions if d.count)}
    return known, when, handed_in, tuple(d.changed for _, d in decisions if d.changed), counts, \
        tuple(d.adopted for _, d in decisions if d.adopted)


def _on_the_roster(found, roster):
    """``found`` (``submissions.Class``) with each id set against the roster (``roster.match``): the roster's form
    of an id written in another Unicode form, an id not on it (or looking like another) held, never graded, and
    each said among the notices."""
    matched = match_roster(found.students, roster)
    handed = {(matched.graded[student], lesson): dataclasses.replace(h, student=matched.graded[student])
              for (student, lesson), h in found.handed.items() if student in matched.graded}
    return submissions.Class(handed, list(dict.fromkeys(matched.graded.values())), found.notices + matched.notices)


def _records(root, lessons):
    """``({lesson: make collect's record of each hand-in}, what make collect refused and skipped)``; ``Refused``
    where a record is there but unreadable (taken as empty, every hand-in would be timed by its learner's own
    stamp)."""
    try:
        return ({lesson: exchange.read_record(root / "submitted", lesson)["hand_ins"] for lesson in lessons},
                exchange.collect_notices(root / "submitted", lessons))
    except exchange.RecordUnreadable as exc:
        raise Refused(f"{exc}: run `make collect LESSON=<lesson>` again to write it anew (the hand-ins in the "
                      f"exchange are still there); nothing was graded") from None


def _grace(root):
    """The grace a learner's stamp gets; the sections read too, now rather than after grading the class (the grade
    files and the report need them): ``Refused`` where either setting cannot be used."""
    try:
        read_sections(root)
        return course_config.stamp_grace(root)
    except ValueError as exc:
        raise Refused(str(exc)) from None


def plan_run(root, *, limits=Limits(), unsafe=False, choices=Choices()):
    """The ``Plan`` of grading the course at ``root`` as ``choices`` ask; ``Refused`` with a sentence when a choice
    names no lesson or learner of the course."""
    root = Path(root).resolve()
    grace = _grace(root)
    lessons = lessons_to_grade(root, choices)
    secret = course_secret(root)
    version = grader_version(secret, limits)
    found = submissions.scan(root / "submitted", lessons)
    roster = gradebook.roster(root)
    found = _on_the_roster(found, roster)
    students = tuple(sorted(set(found.students) | set(roster)))
    wanted = _wanted(students, choices)
    collected, notices = _records(root, lessons)
    decisions, tasks = [], []
    for student in students:
        mine = [((student, lesson), decide(found.handed.get((student, lesson)), student, lesson,
                                           selected=(wanted is None or student in wanted) and
                                           (choices.only_lessons is None or lesson in choices.only_lessons),
                                           settings=(root, version, choices.force, collected[lesson].get(student),
                                                     grace)))
                for lesson in lessons]
        decisions += mine
        todo = tuple(d.todo for _, d in mine if d.todo)
        if todo:
            tasks.append(Task(student, todo, str(root), secret, limits=limits, unsafe=unsafe))
    known, when, handed_in, changed, counts, adopted = _gathered(decisions)
    return Plan(root, limits, unsafe, choices, secret=secret, version=version, lessons=lessons, students=students,
                tasks=tuple(tasks), known=known, handed_in=handed_in, exchange=when, changed=changed, adopted=adopted,
                notices=tuple(found.notices + notices), counts=counts)
