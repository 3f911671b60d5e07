"""What the teacher gets from `make grade`: the gradebook, two CSV files, a feedback page per learner, a summary.

- ``gradebook.db``: each graded submission's score, per test cell, as
  ``nbgrader autograde`` would have recorded it; formgrader and
  ``nbgrader export`` read it.
- ``grades.csv``: written by nbgrader's own CSV exporter from the gradebook,
  so it is exactly what ``nbgrader export`` writes.
- ``grades_by_exercise.csv``: ``student_id,lesson,exercise,points,max_points,
  status,note``; ``status`` is one of passed, failed, missing (not handed
  in), error, timeout, memory, tampered.
- ``feedback/<student_id>/index.html``: one self-contained page per learner
  (no scripts, nothing fetched; formulas as MathML), with each exercise's
  points and, where points were lost, why and the likely mistake.
"""

import csv
import datetime
import functools
import html
import warnings
from collections import Counter
from pathlib import Path

from .exercises import EXERCISES
from .submissions import NOTEBOOK

COLUMNS = ("student_id", "lesson", "exercise", "points", "max_points", "status", "note")


# ---------------------------------------------------------------- the gradebook


def _course_id(root):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    return config.CourseDirectory.get("course_id", "default_course")


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


def _timestamp(notebook):
    """When it was handed in: nbgrader collect's timestamp.txt beside it, else the file's time."""
    stamp = Path(notebook).parent / "timestamp.txt"
    if stamp.is_file():
        return stamp.read_text().strip()
    return datetime.datetime.fromtimestamp(Path(notebook).stat().st_mtime, datetime.timezone.utc)


def _held(gradebook):
    """What the gradebook holds now, in one query: {(student, lesson): (timestamp, {grade cell: (score, manual?)})}."""
    from nbgrader.api import Assignment, BaseCell, Grade, Student, SubmittedAssignment, SubmittedNotebook

    query = (gradebook.db.query(Student.id, Assignment.name, SubmittedAssignment.timestamp, BaseCell.name,
                                Grade.auto_score, Grade.needs_manual_grade)
             .select_from(Grade)
             .join(SubmittedNotebook, Grade.notebook_id == SubmittedNotebook.id)
             .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
             .join(Student, SubmittedAssignment.student_id == Student.id)
             .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
             .join(BaseCell, Grade.cell_id == BaseCell.id))
    held = {}
    for student, lesson, timestamp, cell, score, manual in query:
        held.setdefault((student, lesson), (timestamp, {}))[1][cell] = (score, manual)
    return held


class GradebookWriter:
    """Keeps the gradebook in step with the results, one learner at a time as they come in.

    Every handed-in submission is recorded with its scores as ``nbgrader
    autograde`` records them (auto scores, nothing left for manual grading);
    what the gradebook already holds is not written again. ``close`` commits
    and writes grades.csv from the gradebook.
    """

    def __init__(self, root, students):
        self.root = Path(root)
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy warnings
        self.gradebook = _gradebook(root).__enter__()
        known = {student.id for student in self.gradebook.students}
        for student in sorted(set(students) - known):
            self.gradebook.update_or_create_student(student)
        self.held = _held(self.gradebook)

    def record(self, student, lesson, notebook, results):
        from nbgrader import utils

        timestamp = utils.parse_utc(_timestamp(notebook))
        scores = {f"{r.exercise}_tests": r.points for r in results if r.exercise != NOTEBOOK}
        there = self.held.get((student, lesson))
        if there and there[0] == timestamp and all(there[1].get(cell) == (points, False)
                                                   for cell, points in scores.items()):
            return  # already recorded
        submission = self.gradebook.update_or_create_submission(lesson, student, timestamp=timestamp)
        for graded in submission.notebooks:
            for grade in graded.grades:
                if grade.name in scores:
                    grade.auto_score = scores[grade.name]
                    grade.needs_manual_grade = False

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
    lines = [",".join(keys)]
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
            lines.append(",".join("" if row[k] is None else str(row[k]) for k in keys))
    Path(path).write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- the CSV file


def write_csvs(root, results):
    with open(Path(root) / "grades_by_exercise.csv", "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in results:
            writer.writerow([r.student_id, r.lesson, r.exercise, f"{r.points:g}", f"{r.max_points:g}", r.status,
                             r.note])


# ---------------------------------------------------------------- feedback pages

STYLE = """
body { font: 17px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; vertical-align: top; padding: .4rem .6rem; }
th { border-bottom: 2px solid #444; } td { border-bottom: 1px solid #ccc; }
.passed { color: #1b5e20; } .failed, .error, .timeout, .memory, .tampered { color: #b71c1c; } .missing { color: #555; }
.formula { margin-top: .3rem; } math { font-size: 1.25rem; } .why { margin: .2rem 0 0; }
"""


@functools.lru_cache(maxsize=None)
def _formula(latex):
    try:
        from latex2mathml.converter import convert

        return convert(latex)
    except Exception:  # a formula the converter cannot read: show its source
        return f"<code>{html.escape(latex)}</code>"


def feedback_page(student, rows):
    total = sum(r.points for r in rows if r.exercise != NOTEBOOK)
    maximum = sum(r.max_points for r in rows if r.exercise != NOTEBOOK)
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
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
        parts.append(f"<h2>{html.escape(lesson)}: {points:g} of {most:g}</h2>")
        parts.append("<table><thead><tr><th scope=\"col\">exercise</th><th scope=\"col\">points</th>"
                     "<th scope=\"col\">result</th></tr></thead><tbody>")
        for r in lesson_rows:
            if r.exercise == NOTEBOOK:
                parts.append(f"<tr><td>the notebook</td><td></td><td class=\"tampered\">changed where it should not "
                             f"be: {html.escape(r.note)}</td></tr>")
                continue
            exercise = EXERCISES[r.exercise]
            why = f"<p class=\"why\">{html.escape(r.note)}</p>" if r.note else ""
            parts.append(f"<tr><td><code>{html.escape(r.exercise)}</code><div class=\"formula\">"
                         f"{_formula(exercise.formula)}</div></td><td>{r.points:g} of {r.max_points:g}</td>"
                         f"<td class=\"{r.status}\"><strong>{html.escape(r.status)}</strong>{why}</td></tr>")
        parts.append("</tbody></table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_feedback(root, results):
    by_student = {}
    for r in results:
        by_student.setdefault(r.student_id, []).append(r)
    for student, rows in by_student.items():
        folder = Path(root) / "feedback" / student
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(feedback_page(student, rows))


# ---------------------------------------------------------------- the summary


def summary_text(results, summary):
    counts = Counter(r.status for r in results if r.exercise != NOTEBOOK)
    minutes, seconds = divmod(summary["seconds"], 60)
    lines = [f"graded {summary['learners']} learners, {summary['lessons']} lessons each: "
             f"{summary['handed_in']} handed in, {summary['missing']} missing; "
             f"{summary['regraded']} graded now, {summary['reused']} unchanged since the last run; "
             f"{int(minutes)} min {seconds:.0f} s"
             + (f" with {summary['jobs']} worker{'s' * (summary['jobs'] > 1)}" if summary["jobs"] else "")]
    if summary["unsafe"]:
        lines.append("WARNING: graded WITHOUT a sandbox (UNSAFE=1): the learners' code ran under your account")
    lines.append("exercises: " + ", ".join(f"{counts[s]} {s}" for s in ("passed", "failed", "missing", "error",
                                                                          "timeout", "memory", "tampered")))
    for status in ("error", "timeout", "memory", "tampered"):
        named = [r for r in results if r.status == status]
        if named:
            lines.append(f"{status} ({len(named)}):")
            lines += [f"  {r.student_id} {r.lesson} {r.exercise}: {r.note}" for r in named]
    lines.append("scores: grades.csv (as nbgrader export writes it) and grades_by_exercise.csv; "
                 "feedback pages: feedback/<student_id>/index.html")
    return "\n".join(lines)
