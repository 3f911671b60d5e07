"""What the teacher gets from `make grade`: the gradebook, two CSV files, a feedback page per learner, a summary.

- ``gradebook.db``: each graded submission's score, per test cell, as
  ``nbgrader autograde`` would have recorded it; formgrader and
  ``nbgrader export`` read it.
- ``grades.csv``: written by nbgrader's own CSV exporter from the gradebook,
  so it is exactly what ``nbgrader export`` writes.
- ``grades_by_exercise.csv``: ``student_id,lesson,exercise,points,max_points,
  status,note,mistake,diagnosis``; ``status`` is one of passed, failed, not
  answered (the answer cell as released), missing (not handed in), error,
  timeout, memory, tampered; ``mistake`` names the catalogued mistakes the
  note names (joined by `` + ``), ``diagnosis`` the keys of what the note
  measured where no mistake explains the failure (joined by `` | ``);
  where the teacher marked an exercise by hand in formgrader, ``points``
  is theirs (their score, else the grader's, plus extra credit), the note
  says so with their comment, and ``grader_points`` holds the grader's own;
  ``late`` is the seconds after its due date (or the learner's extension,
  ``deadlines``) the lesson was handed in, by the exchange's time, on each of
  its rows (empty: on time, no due date, or no exchange time).
- ``feedback/<student_id>/index.html``: one self-contained page per learner
  (no scripts, nothing fetched; formulas as MathML), with each exercise's
  points and, where points were lost, why and the likely mistake, and for
  a lesson handed in late, how late and nbgrader's penalty; it reads
  on a phone (375 px wide) without sideways scrolling, and a formula too
  long for the screen scrolls within its own line.
- ``grades_lms.csv``: one row per learner for a learning platform's
  gradebook import (``LMS_COLUMNS``, then one column per lesson set, then
  ``Final Points``): Canvas matches a row by ``SIS User ID`` or ``SIS
  Login ID`` and ignores ``Final Points`` (a column of its own exports);
  Moodle maps ``Email address`` or ``SIS Login ID`` (as the username) to
  its users and each lesson's column to a grade item.

Nothing a learner wrote reaches the teacher's terminal, spreadsheet or
browser as anything but text: ``plain_text`` removes control characters
(ANSI escapes, carriage returns, bidirectional overrides) from every
learner-derived text printed or written, every CSV is written by the ``csv``
module through ``csv_field`` (which also neutralises what a spreadsheet
would read as a formula), and the pages escape everything. The files are
written whole (a temporary file renamed over the old one) with the
grader's umask: readable by the teacher only unless ``make grade
GROUP_READABLE=1``.
"""

import csv
import functools
import html
import os
import re
import tempfile
import unicodedata
import warnings
from collections import Counter
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from .exercises import EXERCISES
from .submissions import NOTEBOOK, handed_in_at

COLUMNS = ("student_id", "lesson", "exercise", "points", "max_points", "status", "note")
#: Written after ``COLUMNS`` (an older grader did not): what the feedback named, for ``make report``.
FEEDBACK_COLUMNS = ("mistake", "diagnosis")
#: Written last: the grader's own points, where the teacher marked the exercise by hand (``by_hand``), else empty.
GRADER_POINTS = "grader_points"
#: Written after ``GRADER_POINTS``: the seconds the lesson came late (``deadlines``), else empty.
LATE = "late"
#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: How the ``mistake`` column joins the names of several mistakes, and ``diagnosis`` several keys.
MISTAKE_JOIN, DIAGNOSIS_JOIN = " + ", " | "


@dataclass(frozen=True)
class Result:
    """One row of grades_by_exercise.csv: what the grader gives it, and what ``make report`` reads back."""

    student_id: str
    lesson: str
    exercise: str
    points: float
    max_points: float
    status: str
    _: KW_ONLY
    note: str = ""
    mistake: str = ""  # the catalogued mistakes the feedback named, joined by MISTAKE_JOIN
    diagnosis: str = ""  # else the keys of what its diagnosis measured, joined by DIAGNOSIS_JOIN
    grader_points: float = None  # the grader's own points where the teacher marked it by hand (``by_hand``)
    late: float = None  # read back from the CSV: the seconds the lesson came late (0: on time; None: no column)

    @property
    def mistakes(self):
        """The names in ``mistake``, in order."""
        return tuple(m.strip() for m in self.mistake.split(MISTAKE_JOIN.strip()) if m.strip())

    @property
    def auto_points(self):
        """The grader's points, before anything marked by hand."""
        return self.points if self.grader_points is None else self.grader_points

    @property
    def lost_points(self):
        return self.points < self.max_points


# ---------------------------------------------------------------- text a teacher reads


def plain_text(text):
    r"""``text`` without control or formatting characters: a control character or a line break becomes a space,
    a formatting one (a bidirectional override, a zero-width joiner) goes, so that no learner's text can move
    a terminal's cursor, colour or clear it, or reorder what it shows.

    >>> plain_text("ok\x1b[2J\x1b[Hall passed\r\nand \u202eevil")
    'ok [2J [Hall passed  and evil'
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else " " if unicodedata.category(c) in ("Cc", "Zs", "Zl", "Zp") else ""
                   for c in text)


def csv_field(value):
    """One field of a CSV file the grader writes: plain text, and a leading ``'`` before anything a spreadsheet
    would read as a formula. A later class report writes its CSVs through this too.

    >>> csv_field("=HYPERLINK(1)"), csv_field("-1"), csv_field(2.0), csv_field("alice")
    ("'=HYPERLINK(1)", "'-1", '2', 'alice')
    """
    raw = value if isinstance(value, str) else format(value, "g") if isinstance(value, float) else str(value)
    text = plain_text(raw)
    risky = raw.startswith(FORMULA_STARTS) or text.lstrip().startswith(FORMULA_STARTS)  # " =1+1" is one too
    return "'" + text if risky else text


def write_csv(path, columns, rows):
    """Write ``rows`` (sequences of values, in the order of ``columns``) as a CSV file, every field ``csv_field``."""
    lines = _CsvLines()
    writer = csv.writer(lines, lineterminator="\n")
    writer.writerow([csv_field(c) for c in columns])
    writer.writerows([csv_field(v) for v in row] for row in rows)
    write_file(path, "".join(lines.parts))


class _CsvLines:
    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)


def write_file(path, content):
    """Write ``content`` (text or bytes) to ``path`` whole: a temporary file beside it, renamed over it, with the
    umask's mode (also where the old file had another)."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def make_folder(path):
    """``path`` as a folder with the umask's mode (also when it was there with another)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o777 & ~_umask())
    return path


def _umask():
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


# ---------------------------------------------------------------- the gradebook


def _course_config(root):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()


def _course_id(root):
    return _course_config(root).CourseDirectory.get("course_id", "default_course")


def lessons_set(root):
    """The lessons the class is set, as the course's ``nbgrader_config.py`` says
    (``c.EncoderCourse.lessons = ["01_attention", ...]``), or None (every lesson; also without the file).
    ValueError when it is not a list of names."""
    if not (Path(root) / "nbgrader_config.py").is_file():
        return None
    lessons = _course_config(root).EncoderCourse.get("lessons")
    if lessons is None:
        return None
    if isinstance(lessons, str) or not all(isinstance(name, str) for name in lessons):
        raise ValueError(f"c.EncoderCourse.lessons in nbgrader_config.py must be a list of lesson names, got "
                         f"{lessons!r}")
    return list(lessons) or None


def _gradebook(root):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}", _course_id(root))


def gradebook_students(root):
    """The learners the gradebook knows (so that one who handed nothing in shows as missing)."""
    if not (Path(root) / "gradebook.db").is_file():
        return []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy warnings
        with _gradebook(root) as gradebook:
            return [student.id for student in gradebook.students]


def _held(gradebook):
    """What the gradebook holds now, in one query: {(student, lesson): (timestamp, {grade cell: (score, manual?)},
    extension, late penalty)}."""
    from nbgrader.api import Assignment, BaseCell, Grade, Student, SubmittedAssignment, SubmittedNotebook

    query = (gradebook.db.query(Student.id, Assignment.name, SubmittedAssignment.timestamp, BaseCell.name,
                                Grade.auto_score, Grade.needs_manual_grade, SubmittedAssignment.extension,
                                SubmittedNotebook.late_submission_penalty)
             .select_from(Grade)
             .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
             .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
             .join(Student, SubmittedAssignment.student_id == Student.id)
             .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
             .join(BaseCell, Grade.cell_id == BaseCell.id))
    held = {}
    for student, lesson, timestamp, cell, score, manual, extension, penalty in query:
        held.setdefault((student, lesson), (timestamp, {}, extension, penalty))[1][cell] = (score, manual)
    return held


def _submitted(gradebook):
    """Every (student, lesson) the gradebook has a submission of, in one query."""
    from nbgrader.api import Assignment, Student, SubmittedAssignment

    return set(gradebook.db.query(Student.id, Assignment.name).select_from(SubmittedAssignment)
               .join(Student, SubmittedAssignment.student_id == Student.id)
               .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id))


class GradebookWriter:
    """Keeps the gradebook in step with the results, one learner at a time as they come in.

    Every handed-in submission is recorded with its scores as ``nbgrader
    autograde`` records them (auto scores, nothing left for manual grading),
    and its late penalty and the learner's extension as nbgrader's
    ``AssignLatePenalties`` and formgrader record them; what the gradebook
    already holds is not written again. ``close`` commits
    and writes grades.csv from the gradebook.
    """

    def __init__(self, root, students):
        self.root = Path(root)
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy warnings
        self.gradebook = _gradebook(root).__enter__()
        # nbgrader's objects stay loaded across commits: only this writer changes them while make grade holds
        # its lock (by default each commit expired them all, to be loaded again for the next learner)
        self.gradebook.db().expire_on_commit = False  # (db is a scoped_session: its session)
        known = {student.id for student in self.gradebook.students}
        for student in sorted(set(students) - known):
            self.gradebook.update_or_create_student(student)
        self.held = _held(self.gradebook)
        self.submitted = _submitted(self.gradebook)
        self._lessons, self._students = {}, {}

    def record(self, student, lesson, notebook, results, late=None):
        """Record one submission (committed by ``commit``) with its ``late`` penalty and extension (a
        ``deadlines.Lateness``; None: on time, no extension); returns a note on its timestamp when that was
        ignored, else None."""
        from nbgrader import utils

        when, problem = handed_in_at(notebook)
        timestamp = utils.parse_utc(when)
        scores = {f"{r.exercise}_tests": r.points for r in results if r.exercise != NOTEBOOK}
        # as AssignLatePenalties leaves it: None unless late with a penalty
        penalty = float(late.penalty) if late and late.penalty else None
        extension = late.extension if late is not None else None
        there = self.held.get((student, lesson))
        if there and there[0] == timestamp and there[2] == extension and there[3] == penalty and \
                all(there[1].get(cell) == (points, False) for cell, points in scores.items()):
            return problem  # already recorded
        if (student, lesson) not in self.submitted:
            self._add(student, lesson, timestamp, scores, penalty, extension)
            return problem
        submission = self.gradebook.update_or_create_submission(lesson, student, timestamp=timestamp,
                                                                extension=extension)
        for n, graded in enumerate(submission.notebooks):
            graded.late_submission_penalty = penalty if n == 0 else None
            for grade in graded.grades:
                if grade.name in scores:
                    grade.auto_score = scores[grade.name]
                    grade.needs_manual_grade = False
        return problem

    def _add(self, student, lesson, timestamp, scores, penalty=None, extension=None):
        """A new submission, as nbgrader's ``add_submission`` makes it (every notebook, grade and comment of the
        lesson mirrored) with its auto scores set, added without a commit of its own (nbgrader's commits per
        submission were most of the grader's time on a class of 500)."""
        from nbgrader.api import Comment, Grade, SubmittedAssignment, SubmittedNotebook

        if lesson not in self._lessons:
            self._lessons[lesson] = self.gradebook.find_assignment(lesson)
        if student not in self._students:
            self._students[student] = self.gradebook.find_student(student)
        submission = SubmittedAssignment(assignment=self._lessons[lesson], student=self._students[student],
                                         timestamp=timestamp, extension=extension)
        for n, notebook in enumerate(self._lessons[lesson].notebooks):
            # a lesson is one notebook: its penalty is the lesson's
            graded = SubmittedNotebook(notebook=notebook, assignment=submission,
                                       late_submission_penalty=penalty if n == 0 else None)
            for cell in notebook.grade_cells:
                grade = Grade(cell_id=cell.id, notebook=graded)
                if cell.name in scores:
                    grade.auto_score, grade.needs_manual_grade = scores[cell.name], False
            for cell in notebook.solution_cells:
                Comment(cell_id=cell.id, notebook=graded)
            for cell in notebook.task_cells:
                Comment(cell_id=cell.id, notebook=graded)
                Grade(cell_id=cell.id, notebook=graded)
        self.gradebook.db.add(submission)
        self.submitted.add((student, lesson))

    def commit(self):
        """Write what was recorded since the last commit (a learner's lessons) to the gradebook."""
        self.gradebook.db.commit()

    def close(self):
        try:
            self.gradebook.db.commit()
            write_grades_csv(self.gradebook, self.root / "grades.csv")
        finally:
            self.gradebook.__exit__(None, None, None)
            self._warnings.__exit__(None, None, None)


def write_grades_csv(gradebook, path):
    """grades.csv exactly as ``nbgrader export`` writes it (nbgrader's CsvExportPlugin), from a few queries
    instead of two per learner and lesson: one row per lesson and learner, empty timestamp and 0 if not handed in."""
    from nbgrader.api import SubmittedAssignment, SubmittedNotebook
    from sqlalchemy import func

    keys = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
            "late_submission_penalty", "score", "max_score")
    penalties = dict(gradebook.db.query(SubmittedAssignment.id, func.sum(SubmittedNotebook.late_submission_penalty))
                     .join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
                     .group_by(SubmittedAssignment.id))
    students = list(gradebook.students)
    rows = []
    for assignment in gradebook.assignments:
        handed_in = {d["student"]: d for d in gradebook.submission_dicts(assignment.name)}
        for student in students:
            row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                   "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                   "max_score": assignment.max_score}
            submission = handed_in.get(student.id)
            if submission is None:
                row.update(timestamp="", raw_score=0.0, late_submission_penalty=0.0, score=0.0)
            else:
                penalty = penalties.get(submission["id"]) or 0.0
                row.update(timestamp=submission["timestamp"], raw_score=submission["score"],
                           late_submission_penalty=penalty, score=max(0.0, submission["score"] - penalty))
            rows.append(["" if row[k] is None else str(row[k]) for k in keys])
    write_csv(path, keys, rows)


# ---------------------------------------------------------------- the CSV file


def write_csvs(root, results, late=None):
    """grades_by_exercise.csv, with ``late`` (``{(student, lesson): deadlines.Lateness}``) as its last column."""
    late = late or {}

    def seconds(r):
        lateness = late.get((r.student_id, r.lesson))
        return int(round(lateness.seconds)) if lateness else ""

    write_csv(Path(root) / "grades_by_exercise.csv", COLUMNS + FEEDBACK_COLUMNS + (GRADER_POINTS, LATE),
              [(r.student_id, r.lesson, r.exercise, r.points, r.max_points, r.status, r.note, r.mistake, r.diagnosis,
                "" if r.grader_points is None else r.grader_points, seconds(r)) for r in results])


def by_hand(results, root):
    """``results`` with what the teacher marked by hand in formgrader (``gradebook.manual_marks``): their score
    (else the grader's) plus extra credit as the points, the grader's own kept in ``grader_points``, and a note
    that says so, with their comment, for the CSV and the feedback page."""
    import dataclasses

    from . import gradebook

    marks = gradebook.manual_marks(root)
    if not marks:
        return results
    marked = []
    for r in results:
        manual = marks.get((r.student_id, r.lesson, r.exercise))
        if manual:
            points = (r.points if manual.points is None else manual.points) + (manual.extra_credit or 0.0)
            said = []
            if manual.points is not None or manual.extra_credit:
                extra = f", with {manual.extra_credit:g} extra credit" if manual.extra_credit else ""
                said.append(f"marked by hand: {points:g} of {r.max_points:g} points{extra} (the grader gave "
                            f"{r.points:g})")
            if manual.comment:
                said.append(f"your teacher's comment: {plain_text(manual.comment)}")
            note = "; ".join(said) + (f". {r.note}" if r.note else "")
            r = dataclasses.replace(r, points=float(points), note=note, grader_points=r.points)
        marked.append(r)
    return marked


#: grades_lms.csv's first columns, as Canvas's gradebook export has them (its import needs them, in any order;
#: ``ID`` is Canvas's own number, left empty, so that Canvas matches by ``SIS User ID`` or ``SIS Login ID``),
#: then the e-mail Moodle can match by.
LMS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Email address")
#: The total's column: read-only in Canvas (ignored by its import), a grade item to map or skip in Moodle's.
LMS_TOTAL = "Final Points"


def lms_rows(results, lessons, roster, penalties=None):
    """grades_lms.csv's rows: one per learner (in the order of ``results``), with the roster's name ("Last,
    First" as Canvas writes it; the id where the roster has no name) and e-mail, each lesson's points (less the
    late penalty the gradebook recorded, at least 0) and the total."""
    points, learners = {}, {}
    for r in results:
        learners.setdefault(r.student_id, None)
        if r.exercise != NOTEBOOK and r.lesson in lessons:
            points[r.student_id, r.lesson] = points.get((r.student_id, r.lesson), 0.0) + r.points
    rows = []
    for student in learners:
        known = roster.get(student)
        name = ", ".join(p for p in (known.last_name, known.first_name) if p) if known else ""
        scores = [max(0.0, points.get((student, lesson), 0.0) - (penalties or {}).get((student, lesson), 0.0))
                  for lesson in lessons]
        rows.append((name or student, "", student, student, "", known.email if known else "", *scores, sum(scores)))
    return rows


def write_lms_csv(root, results, lessons, penalties=None):
    """``grades_lms.csv``, for a learning platform's gradebook import (``lms_rows``), with the gradebook's roster
    and ``penalties`` (``{(student, lesson): points}``; by default the late penalties the gradebook recorded)."""
    from . import gradebook

    if penalties is None:
        penalties = {key: late.penalty for key, late in gradebook.late(root).items() if late.penalty}
    write_csv(Path(root) / "grades_lms.csv", LMS_COLUMNS + tuple(lessons) + (LMS_TOTAL,),
              lms_rows(results, list(lessons), gradebook.students(root), penalties))


# ---------------------------------------------------------------- feedback pages

STYLE = """
body { font: 17px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a;
       overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { text-align: left; vertical-align: top; padding: .4rem .6rem; }
th { border-bottom: 2px solid #444; } td { border-bottom: 1px solid #ccc; }
col.exercise { width: 45%; } col.points { width: 7rem; }
.passed { color: #1b5e20; } .failed, .error, .timeout, .memory, .tampered { color: #b71c1c; } .missing, .not-answered { color: #555; }
.formula { margin-top: .3rem; display: flex; flex-wrap: wrap; column-gap: 1em; row-gap: .2rem; }
.formula .part { max-width: 100%; overflow-x: auto; overflow-y: hidden; padding-bottom: .1rem; }
math { font-size: 1.25rem; } .why { margin: .2rem 0 0; } .late { color: #b71c1c; }
@media (max-width: 40rem) {
  body { margin: 1rem auto; padding: 0 .75rem; }
  table, tbody, tr, td { display: block; width: auto; } thead, colgroup { display: none; }
  tr { border-bottom: 1px solid #ccc; padding: .4rem 0; } td { border: 0; padding: .15rem 0; }
  td.points::before { content: "points: "; color: #555; }
  math { font-size: 1.1rem; }
}
"""


#: Where a formula may wrap: after a comma or semicolon followed by a space (``\quad``, ``\qquad``, ``\ ``,
#: ``\,``), outside any braces.
_BREAKS = ("\\qquad", "\\quad", "\\ ", "\\,")


def formula_parts(latex):
    r"""``latex`` cut where it may wrap (MathML does not wrap in a browser): after a ``,`` or ``;`` followed by a
    space, outside any braces (so never inside a subscript or a fraction). A part that opens a ``\left`` the
    next closes has its ``\left`` and ``\right`` as plain delimiters.

    >>> formula_parts(r"a = 1,\quad b = \frac{f(1,\ 2)}{2};\quad c_{i,\,j}")
    ['a = 1,', 'b = \\frac{f(1,\\ 2)}{2};', 'c_{i,\\,j}']
    >>> formula_parts(r"g\!\left(x,\, y\right) z")
    ['g\\!(x,', 'y) z']
    """
    parts, depth, start, i = [], 0, 0, 0
    while i < len(latex):
        c = latex[i]
        if c == "\\" and latex[i + 1:i + 2] and latex[i + 1] in "{}":
            i += 2  # an escaped brace is text
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif c in ",;" and depth == 0:
            space = next((b for b in _BREAKS if latex.startswith(b, i + 1)), None)
            if space:
                parts.append(latex[start:i + 1].strip())
                start = i = i + 1 + len(space)
                continue
        i += 1
    parts.append(latex[start:].strip())
    parts = [part for part in parts if part]
    if len(parts) > 1 and any(part.count("\\left") != part.count("\\right") for part in parts):
        parts = [re.sub(r"\\(?:left|right)(?![a-zA-Z])\s*", "", part) for part in parts]
    return parts


@functools.lru_cache(maxsize=None)
def _formula(latex):
    try:
        from latex2mathml.converter import convert

        return "".join(f"<span class=\"part\">{convert(part)}</span>" for part in formula_parts(latex))
    except Exception:  # a formula the converter cannot read: show its source
        return f"<code>{html.escape(latex)}</code>"


def feedback_page(student, rows, late=None):
    """One learner's page; ``late`` (``{lesson: deadlines.Lateness}``) says which lessons came late, how late and
    the penalty, which the lesson's points and the total are less."""
    late = late or {}
    by_lesson = {}
    for r in rows:
        if r.exercise != NOTEBOOK:
            by_lesson[r.lesson] = by_lesson.get(r.lesson, 0.0) + r.points
    total = sum(max(0.0, points - (late[lesson].penalty if late.get(lesson) else 0.0))
                for lesson, points in by_lesson.items())
    maximum = sum(r.max_points for r in rows if r.exercise != NOTEBOOK)
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
             f"<title>Feedback for {html.escape(student)}</title><style>{STYLE}</style></head><body>",
             f"<h1>Your exercises, {html.escape(student)}: {total:g} of {maximum:g} points</h1>",
             "<p>Each exercise was graded on its own: its answer cell ran alone, on the checks its self-check shows "
             "and on hidden ones with other shapes and values.</p>"]
    lessons = {}
    for r in rows:
        lessons.setdefault(r.lesson, []).append(r)
    for lesson, lesson_rows in lessons.items():
        points = sum(r.points for r in lesson_rows)
        most = sum(r.max_points for r in lesson_rows)
        lateness = late.get(lesson)
        if lateness:
            counted = max(0.0, points - lateness.penalty)
            parts.append(f"<h2>{html.escape(lesson)}: {counted:g} of {most:g}</h2>")
            said = lateness.words()
            parts.append(f"<p class=\"late\"><strong>{html.escape(said[:1].upper() + said[1:])}</strong>"
                         + (f": {points:g} points before it" if lateness.penalty else "")
                         + " (by the time the exchange recorded; the penalty is nbgrader's late-penalty setting's)."
                         + "</p>")
        else:
            parts.append(f"<h2>{html.escape(lesson)}: {points:g} of {most:g}</h2>")
        parts.append("<table><colgroup><col class=\"exercise\"><col class=\"points\"><col></colgroup>"
                     "<thead><tr><th scope=\"col\">exercise</th><th scope=\"col\">points</th>"
                     "<th scope=\"col\">result</th></tr></thead><tbody>")
        for r in lesson_rows:
            if r.exercise == NOTEBOOK:
                parts.append(f"<tr><td>the notebook</td><td></td><td class=\"tampered\">changed where it should not "
                             f"be: {html.escape(plain_text(r.note))}</td></tr>")
                continue
            exercise = EXERCISES[r.exercise]
            why = f"<p class=\"why\">{html.escape(plain_text(r.note))}</p>" if r.note else ""
            parts.append(f"<tr><td><code>{html.escape(r.exercise)}</code><div class=\"formula\">"
                         f"{_formula(exercise.formula)}</div></td><td class=\"points\">{r.points:g} of {r.max_points:g}</td>"
                         f"<td class=\"{r.status.replace(' ', '-')}\"><strong>{html.escape(r.status)}</strong>{why}</td></tr>")
        parts.append("</tbody></table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_feedback(root, results, late=None):
    """One page per learner; ``late``: ``{(student, lesson): deadlines.Lateness}``."""
    by_student, own = {}, {}
    for r in results:
        by_student.setdefault(r.student_id, []).append(r)
    for (student, lesson), lateness in (late or {}).items():
        if lateness:
            own.setdefault(student, {})[lesson] = lateness
    make_folder(Path(root) / "feedback")
    for student, rows in by_student.items():
        write_file(make_folder(Path(root) / "feedback" / student) / "index.html",
                   feedback_page(student, rows, own.get(student)))


# ---------------------------------------------------------------- the summary


def summary_text(results, summary):
    """What ``make grade`` prints: the counts, then every error, timeout, memory and tampering by learner, lesson
    and exercise, what was found in submitted/, and what the machine (not a learner) failed on."""
    counts = Counter(r.status for r in results if r.exercise != NOTEBOOK)
    minutes, seconds = divmod(summary["seconds"], 60)
    lines = [f"graded {summary['learners']} learners, {summary['lessons']} lessons each: "
             f"{summary['handed_in']} handed in, {summary['missing']} missing; "
             f"{summary['regraded']} graded now, {summary['reused']} unchanged since the last run; "
             f"{int(minutes)} min {seconds:.0f} s"
             + (f" with {summary['jobs']} worker{'s' * (summary['jobs'] > 1)}" if summary["jobs"] else "")]
    if summary.get("set_lessons"):
        lines.append(f"lessons set: {', '.join(summary['set_lessons'])} (LESSONS=, else c.EncoderCourse.lessons in "
                     f"nbgrader_config.py): the only ones graded and counted in the totals, the CSV files, the "
                     f"feedback pages and the report")
    if summary.get("only_students") or summary.get("only_lessons"):
        chosen = ([f"learner{'s' * (len(summary['only_students']) > 1)} {', '.join(summary['only_students'])}"]
                  if summary.get("only_students") else []) + \
            ([f"lesson{'s' * (len(summary['only_lessons']) > 1)} {', '.join(summary['only_lessons'])}"]
             if summary.get("only_lessons") else [])
        lines.append(plain_text(
            f"graded now: only {', '.join(chosen)} (STUDENT=, LESSON=); every other learner's and lesson's "
            f"results are as stored in autograded/ ({summary.get('kept', 0)} kept"
            + (f", {summary['not_graded']} never graded, shown as not graded yet" if summary.get("not_graded") else "")
            + "); every file below is written for the whole class"))
    if summary.get("late"):
        lines.append(f"{summary['late']} hand-in{'s' * (summary['late'] > 1)} came after the due date (or the "
                     f"learner's extension, extensions.csv), by the exchange's time: flagged in the late column of "
                     f"grades_by_exercise.csv, penalised as nbgrader's late-penalty setting says (grades.csv, "
                     f"grades_lms.csv) and said on the feedback pages")
    if summary.get("untimed"):
        lines.append(f"{summary['untimed']} hand-in{'s' * (summary['untimed'] > 1)} of a lesson with a due date "
                     f"had no timestamp.txt (copied in by hand, not collected by nbgrader): never counted late")
    if summary.get("history"):
        lines.append(f"{summary['history']} earlier result{'s' * (summary['history'] > 1)} of changed submissions "
                     f"kept in autograded/<student_id>/<lesson>/history/")
    if summary["unsafe"]:
        lines.append("WARNING: graded WITHOUT a sandbox (UNSAFE=1): the learners' code ran under your account")
    if summary.get("limits"):
        lines.append(f"limits: {summary['limits']}")
    lines.append("exercises: " + ", ".join(f"{counts[s]} {s}" for s in ("passed", "failed", "not answered",
                                                                          "missing", "error", "timeout", "memory",
                                                                          "tampered")))
    for status in ("error", "timeout", "memory", "tampered"):
        named = [r for r in results if r.status == status]
        if named:
            lines.append(f"{status} ({len(named)}):")
            lines += [plain_text(f"  {r.student_id} {r.lesson} {r.exercise}: {r.note}") for r in named]
    if summary.get("notices"):
        lines.append(f"in submitted/ ({len(summary['notices'])}):")
        lines += [plain_text(f"  {notice}") for notice in summary["notices"]]
    if summary.get("machine"):
        lines.append(f"NOT GRADED because the grader's machine failed, not the learners "
                     f"({len(summary['machine'])}; graded again on the next run):")
        lines += [plain_text(f"  {student} {lesson}: {why}") for student, lesson, why in summary["machine"]]
    lines.append("scores: grades.csv (as nbgrader export writes it), grades_by_exercise.csv and grades_lms.csv "
                 "(one row per learner, for Canvas's or Moodle's gradebook import); "
                 "feedback pages: feedback/<student_id>/index.html")
    return "\n".join(lines)
