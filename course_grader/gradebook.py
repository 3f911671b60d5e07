"""What the course reads back from nbgrader's ``gradebook.db``, read-only with sqlite3 (importing nbgrader takes
seconds, and these need a few of its tables, whose layout nbgrader 0.9 fixes): the roster (``students``), due
dates, each hand-in's time and late penalty, and what the teacher marked by hand in formgrader. A course without a
gradebook reads as empty; a file that is not one is a ValueError that names it.
"""

import contextlib
import datetime
import sqlite3
from dataclasses import dataclass
from pathlib import Path


@contextlib.contextmanager
def _reading(root):
    """A read-only connection to ``root``'s gradebook.db, or None when there is none."""
    path = Path(root) / "gradebook.db"
    if not path.is_file():
        yield None
        return
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            yield db
    except sqlite3.Error as exc:
        raise ValueError(f"{path} could not be read as nbgrader's gradebook ({exc})") from None


def _rows(root, query):
    with _reading(root) as db:
        return [] if db is None else db.execute(query).fetchall()


def stored_time(value):
    """A DATETIME of nbgrader's SQLite gradebook (naive UTC text) as a ``datetime``, or None."""
    if value is None or value == "":
        return None
    return value if isinstance(value, datetime.datetime) else datetime.datetime.fromisoformat(str(value))


@dataclass(frozen=True)
class Student:
    first_name: str = ""
    last_name: str = ""
    email: str = ""

    @property
    def name(self):
        """``Ada Lovelace``, or empty."""
        return " ".join(part for part in (self.first_name, self.last_name) if part)


def students(root):
    """``{student_id: Student}``: the learners the gradebook knows, with the roster's names and e-mails."""
    return {str(sid): Student(first or "", last or "", email or "")
            for sid, first, last, email in _rows(root, "SELECT id, first_name, last_name, email FROM student")}


def due_dates(root):
    """``{lesson: due date}`` of the lessons that have one."""
    return {str(name): stored_time(due)
            for name, due in _rows(root, "SELECT name, duedate FROM assignment WHERE duedate IS NOT NULL")}


@dataclass(frozen=True)
class Late:
    """A hand-in as the gradebook has it: when (None: unknown, a notebook copied in by hand), and the late
    penalty ``make grade`` recorded (points)."""

    handed_in: datetime.datetime = None
    penalty: float = 0.0


def late(root):
    """``{(student_id, lesson): Late}`` of every hand-in the gradebook holds."""
    query = ("SELECT sa.student_id, a.name, sa.timestamp, SUM(COALESCE(sn.late_submission_penalty, 0)) "
             "FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id "
             "LEFT JOIN submitted_notebook sn ON sn.assignment_id = sa.id GROUP BY sa.id")
    return {(str(s), str(l)): Late(stored_time(when), float(penalty or 0.0)) for s, l, when, penalty in
            _rows(root, query)}


@dataclass(frozen=True)
class Manual:
    """What the teacher gave one exercise by hand in formgrader: a score (None: the grader's stands), extra
    credit (None: none) and a comment (empty: none)."""

    points: float = None
    extra_credit: float = None
    comment: str = ""

    def __bool__(self):
        return self.points is not None or bool(self.extra_credit) or bool(self.comment)


_CELLS = ("FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id "
          "JOIN submitted_notebook sn ON sn.assignment_id = sa.id JOIN {table} g ON g.notebook_id = sn.id "
          "JOIN base_cell c ON g.cell_id = c.id")


def manual_marks(root):
    """``{(student_id, lesson, exercise): Manual}`` of the exercises the teacher marked by hand: a score or extra
    credit on ``<exercise>_tests``, a comment on ``<exercise>_answer``."""
    found = {}
    grades = _rows(root, "SELECT sa.student_id, a.name, c.name, g.manual_score, g.extra_credit "
                         + _CELLS.format(table="grade")
                         + " WHERE g.manual_score IS NOT NULL OR COALESCE(g.extra_credit, 0) != 0")
    for student, lesson, cell, score, extra in grades:
        if str(cell).endswith("_tests"):
            key = (str(student), str(lesson), str(cell)[:-len("_tests")])
            found[key] = Manual(None if score is None else float(score), float(extra) if extra else None)
    comments = _rows(root, "SELECT sa.student_id, a.name, c.name, g.manual_comment "
                           + _CELLS.format(table="comment") + " WHERE COALESCE(g.manual_comment, '') != ''")
    for student, lesson, cell, comment in comments:
        if str(cell).endswith("_answer"):
            key = (str(student), str(lesson), str(cell)[:-len("_answer")])
            had = found.get(key, Manual())
            found[key] = Manual(had.points, had.extra_credit, str(comment))
    return found


def roster(root):
    """The learners' ids, in the order nbgrader's ``Gradebook.students`` gives them (by last and first name)."""
    return [str(sid) for (sid,) in _rows(root, "SELECT id FROM student ORDER BY last_name, first_name")]


#: SQLAlchemy's ``Interval`` on SQLite: a time after this one (``gradebook_writer`` compares extensions).
_EPOCH = datetime.datetime(1970, 1, 1)


def recorded(root):
    """``({(student, lesson): (timestamp, {grade cell: (auto score, needs manual grade)}, extension, penalty)}
    of the graded hand-ins, every (student, lesson) with a submission)``, read as nbgrader's models give them
    (``gradebook_writer.GradebookWriter`` compares what it would record with them)."""
    query = ("SELECT sa.student_id, a.name, sa.timestamp, c.name, g.auto_score, g.needs_manual_grade, sa.extension, "
             "sn.late_submission_penalty FROM grade g JOIN submitted_notebook sn ON g.notebook_id = sn.id "
             "JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN assignment a ON sa.assignment_id = a.id "
             "JOIN base_cell c ON g.cell_id = c.id")
    held = {}
    for student, lesson, when, cell, score, manual, extension, penalty in _rows(root, query):
        extension = None if extension is None else stored_time(extension) - _EPOCH
        entry = held.setdefault((str(student), str(lesson)), (stored_time(when), {}, extension, penalty))
        entry[1][str(cell)] = (score, None if manual is None else bool(manual))
    submitted = {(str(s), str(l)) for s, l in _rows(root, "SELECT sa.student_id, a.name FROM submitted_assignment sa "
                                                         "JOIN assignment a ON sa.assignment_id = a.id")}
    return held, submitted
