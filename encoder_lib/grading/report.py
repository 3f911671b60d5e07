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


def write_gradebook(root, results, submissions):
    """Record every handed-in submission's scores; ``submissions``: {(student, lesson): (notebook, digest)}."""
    from nbgrader.api import MissingEntry
    from nbgrader.plugins.export import CsvExportPlugin

    rows = {}
    for r in results:
        rows.setdefault((r.student_id, r.lesson), []).append(r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _gradebook(root) as gradebook:
            known = {student.id for student in gradebook.students}
            for student in sorted({r.student_id for r in results} - known):
                gradebook.update_or_create_student(student)
            for (student, lesson), (notebook, _) in sorted(submissions.items()):
                gradebook.update_or_create_submission(lesson, student, timestamp=_timestamp(notebook))
                for r in rows.get((student, lesson), []):
                    if r.exercise == NOTEBOOK:
                        continue
                    try:
                        grade = gradebook.find_grade(f"{r.exercise}_tests", lesson, lesson, student)
                    except MissingEntry:
                        continue  # a lesson whose gradebook entry predates this exercise: make student adds it
                    grade.auto_score = r.points
                gradebook.db.commit()
            CsvExportPlugin(to=str(Path(root) / "grades.csv")).export(gradebook)


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
.formula { font-size: 1.05rem; } .why { margin: .2rem 0 0; }
"""


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
             + (f" with {summary['jobs']} workers" if summary["jobs"] else "")]
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
