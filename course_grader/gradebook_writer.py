"""``gradebook.db`` kept in step with the results through nbgrader's own tables, as ``nbgrader autograde`` records
them (``GradebookWriter``), and ``grades.csv`` exactly as ``nbgrader export`` writes it (``write_grades_csv``).
"""

import datetime
import hashlib
import os
import warnings
from importlib import metadata
from pathlib import Path

from . import files
from .course_config import course_id
from .gradebook import recorded, roster
from .files import _umask, write_csv, write_file
from .submissions import NOTEBOOK

#: What grades.csv was last made from (``grades_csv_inputs``), beside it: a regrade that recorded nothing and finds
#: it unchanged leaves grades.csv as it is without opening nbgrader.
GRADES_CSV_MADE_FROM = ".grades.csv.made-from"


def open_gradebook(root):
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{Path(root) / 'gradebook.db'}", course_id(root))


#: A new grade's columns as nbgrader's model leaves them: no score, to be graded by hand.
_NEW_GRADE = {"auto_score": None, "manual_score": None, "extra_credit": None, "needs_manual_grade": True}


class GradebookWriter:
    """Keeps the gradebook in step with the results, one learner at a time as they come in.

    Every handed-in submission is recorded with its scores as ``nbgrader
    autograde`` records them (auto scores, nothing left for manual grading),
    and its late penalty and the learner's extension as nbgrader's
    ``AssignLatePenalties`` and formgrader record them; what the gradebook
    already holds is not written again. ``close`` commits
    and writes grades.csv from the gradebook: the rows of ``lessons`` (the lessons counted; None: all).
    """

    def __init__(self, root, students, lessons=None):
        self.root, self.lessons = Path(root), lessons
        self.gradebook = None  # nbgrader's, opened only when something is to be written (``_open``)
        self.held, self.submitted = recorded(root)  # read with sqlite3, as nbgrader's models give them
        self._lessons, self._students = {}, {}
        self._rows = {table: [] for table in ("submitted_assignment", "submitted_notebook", "grade", "comment")}
        missing = sorted(set(students) - set(roster(root)))
        if missing:
            self._open()
        for student in missing:
            self.gradebook.update_or_create_student(student)

    def _open(self):
        """nbgrader's gradebook, opened on the first change (importing nbgrader takes a second)."""
        if self.gradebook is not None:
            return
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy warnings
        self.gradebook = open_gradebook(self.root).__enter__()
        # nbgrader's objects stay loaded across commits: only this writer changes them while make grade holds
        # its lock (by default each commit expired them all, to be loaded again for the next learner)
        self.gradebook.db().expire_on_commit = False  # (db is a scoped_session: its session)

    def record(self, student, lesson, notebook, results, late=None, when=None):
        """Record one submission (committed by ``commit``) with its ``late`` penalty and extension (a
        ``deadlines.Lateness``; None: on time, no extension) and its hand-in time (``when``, an
        ``exchange.HandInTime``: the time that counted for lateness; a notebook copied in by hand without one is
        recorded at its file's time, as ever, and is never late)."""
        timestamp = when.when if when is not None and when.when is not None else \
            datetime.datetime.fromtimestamp(os.lstat(notebook).st_mtime, datetime.timezone.utc).replace(tzinfo=None)
        scores = {f"{r.exercise}_tests": r.points for r in results if r.exercise != NOTEBOOK}
        # as AssignLatePenalties leaves it: None unless late with a penalty
        penalty = float(late.penalty) if late and late.penalty else None
        extension = late.extension if late is not None else None
        there = self.held.get((student, lesson))
        if there and there[0] == timestamp and there[2] == extension and there[3] == penalty and \
                all(there[1].get(cell) == (points, False) for cell, points in scores.items()):
            return  # already recorded
        self._open()
        if (student, lesson) not in self.submitted:
            self._add(student, lesson, timestamp, scores, penalty, extension)
            return
        self._insert()  # one added since the last commit is found by nbgrader's query below
        submission = self.gradebook.update_or_create_submission(lesson, student, timestamp=timestamp,
                                                                extension=extension)
        for n, graded in enumerate(submission.notebooks):
            graded.late_submission_penalty = penalty if n == 0 else None
            for grade in graded.grades:
                if grade.name in scores:
                    grade.auto_score = scores[grade.name]
                    grade.needs_manual_grade = False

    def _cells(self, lesson):
        """``(assignment id, [(notebook id, [(grade cell id, name)], [solution cell id], [task cell id])])`` of a
        lesson, read once through nbgrader's models."""
        if lesson not in self._lessons:
            assignment = self.gradebook.find_assignment(lesson)
            self._lessons[lesson] = (assignment.id, [
                (notebook.id, [(cell.id, cell.name) for cell in notebook.grade_cells],
                 [cell.id for cell in notebook.solution_cells], [cell.id for cell in notebook.task_cells])
                for notebook in assignment.notebooks])
        return self._lessons[lesson]

    def _add(self, student, lesson, timestamp, scores, penalty=None, extension=None):
        """A new submission, with the rows nbgrader's ``add_submission`` makes (every notebook, grade and comment
        of the lesson mirrored) and its auto scores set, inserted at the next ``commit`` through nbgrader's own
        tables (SQLAlchemy Core: nbgrader's objects, one per grade and comment, were most of the teacher's
        process's time on a class of 500)."""
        from nbgrader.api import new_uuid

        if student not in self._students:
            self._students[student] = self.gradebook.find_student(student).id
        assignment_id, notebooks = self._cells(lesson)
        submission = new_uuid()
        rows = self._rows
        rows["submitted_assignment"].append({"id": submission, "assignment_id": assignment_id,
                                             "student_id": self._students[student], "timestamp": timestamp,
                                             "extension": extension})
        for n, (notebook, grade_cells, solution_cells, task_cells) in enumerate(notebooks):
            graded = new_uuid()
            # a lesson is one notebook: its penalty is the lesson's
            rows["submitted_notebook"].append({"id": graded, "assignment_id": submission, "notebook_id": notebook,
                                               "flagged": False,
                                               "late_submission_penalty": penalty if n == 0 else None})
            for cell, name in grade_cells:
                rows["grade"].append({**_NEW_GRADE, "id": new_uuid(), "notebook_id": graded, "cell_id": cell,
                                      **({"auto_score": scores[name], "needs_manual_grade": False}
                                         if name in scores else {})})
            for cell in solution_cells + task_cells:
                rows["comment"].append({"id": new_uuid(), "notebook_id": graded, "cell_id": cell,
                                        "auto_comment": None, "manual_comment": None})
            for cell in task_cells:
                rows["grade"].append({**_NEW_GRADE, "id": new_uuid(), "notebook_id": graded, "cell_id": cell})
        self.submitted.add((student, lesson))

    def _insert(self):
        """Insert the new submissions' rows, parents first."""
        from nbgrader.api import Base

        for table in ("submitted_assignment", "submitted_notebook", "grade", "comment"):
            if self._rows[table]:
                self.gradebook.db.execute(Base.metadata.tables[table].insert(), self._rows[table])
                self._rows[table] = []

    def commit(self):
        """Write what was recorded since the last commit (a learner's lessons) to the gradebook."""
        if self.gradebook is not None:
            self._insert()
            self.gradebook.db.commit()

    def close(self):
        """Commit, and write grades.csv, unless nothing was recorded and it holds what it would (``files.made_from``
        ``GRADES_CSV_MADE_FROM``: the gradebook, the lessons and the code that write it are as when it was last
        written)."""
        try:
            if self.gradebook is None:
                made_from = grades_csv_inputs(self.root, self.lessons)
                if made_from is not None and files.made_from(self.root / GRADES_CSV_MADE_FROM) == made_from:
                    return
                self._open()
            self.commit()
            self.gradebook.db.expire_all()  # nbgrader's objects, loaded before the rows inserted beside them
            write_grades_csv(self.gradebook, self.root / "grades.csv", self.lessons)
        finally:
            if self.gradebook is not None:
                self.gradebook.__exit__(None, None, None)
                self._warnings.__exit__(None, None, None)
        made_from = grades_csv_inputs(self.root, self.lessons)
        if made_from is not None:
            write_file(self.root / GRADES_CSV_MADE_FROM, made_from + "\n")


def grades_csv_inputs(root, lessons):
    """A digest of what grades.csv is made from, and of grades.csv itself (its bytes and mode, with the umask's):
    the gradebook's bytes, the lessons counted, nbgrader_config.py, and the code and nbgrader that write it;
    None while the gradebook has a journal (a write not settled)."""
    root = Path(root)
    if any((root / f"gradebook.db{end}").exists() for end in ("-journal", "-wal")):
        return None
    digest = hashlib.sha256(repr((lessons, metadata.version("nbgrader"), _umask())).encode())
    for path in (root / "gradebook.db", root / "grades.csv", root / "nbgrader_config.py", Path(__file__),
                 Path(files.__file__)):
        try:
            info = path.lstat()
            digest.update(f"\0{path.name}:{info.st_mode:o}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(f"\0{path.name}: none\0".encode())
    return digest.hexdigest()


def write_grades_csv(gradebook, path, lessons=None):
    """grades.csv exactly as ``nbgrader export`` writes it (nbgrader's CsvExportPlugin), from a few queries
    instead of two per learner and lesson: one row per lesson and learner, empty timestamp and 0 if not handed in;
    only ``lessons``' rows (the lessons counted; None: every lesson of the gradebook)."""
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
        if lessons is not None and assignment.name not in lessons:
            continue
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

