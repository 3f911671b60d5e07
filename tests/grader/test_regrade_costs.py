"""A regrade costs what changed (issue 32, item 6), on a small course graded for real by `make grade`'s command.

A regrade with nothing new rewrites no file at all: not the student versions
(`make student`'s step runs only when a lesson or the settings changed), not
a page, not the report. One learner's new hand-in rewrites that learner's
files and the class's (the CSV files, the report), and nothing of the other
learners': their ``autograded/`` and ``feedback/`` files keep their
modification times. The times themselves are ``benchmarks/bench_regrade.py``'s
(a class of 200), never asserted here.
"""

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from grading_helpers import course_after_make_student
from report_class import answer_in, hand_in_folder

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ("01_attention", "04_add_and_norm")
LEARNERS = ("ada", "bob", "cy")
WRONG = "def softmax(x, axis=-1):\n    e = np.exp(x)\n    return e / e.sum(axis=axis, keepdims=True)\n"


#: `make grade`'s command run as it runs, then what it imported of the packages only grading needs.
SAYS_IMPORTED = ("import runpy, sys\nsys.argv[0] = 'make grade'\ntry:\n    runpy.run_module('course_grader.grade', "
                 "run_name='__main__')\nexcept SystemExit as ended:\n    assert not ended.code, ended.code\n"
                 "print('imported:', sorted({'nbgrader', 'sqlalchemy', 'scipy'} & set(sys.modules)))")


def make_grade(root, imported=False):
    """`make grade`'s command, `make student`'s as its --release, in a fresh process; its output (``imported``: its
    last line says which of nbgrader, SQLAlchemy and SciPy it imported)."""
    release = f"{shlex.quote(sys.executable)} -m tools.student --root {shlex.quote(str(root))}"
    command = ["-c", SAYS_IMPORTED] if imported else ["-m", "course_grader.grade"]
    done = subprocess.run([sys.executable, *command, "--root", str(root),
                           "--seconds", "5", "--release", release], capture_output=True, text=True, timeout=900,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))  # the release runs in the course
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def times(root):
    """``{path: st_mtime_ns}`` of every file the grader and `make student` write."""
    found = {}
    for name in ("release", "student", "autograded", "feedback", "report"):
        found.update({str(p.relative_to(root)): p.stat().st_mtime_ns for p in (root / name).rglob("*") if p.is_file()})
    for name in ("grades.csv", "grades_by_exercise.csv", "grades_lms.csv", "gradebook.db"):
        found[name] = (root / name).stat().st_mtime_ns
    return found


def changed(before, after):
    return sorted(path for path, when in after.items() if before.get(path) != when)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = course_after_make_student(tmp_path_factory, "regrade")
    for student in LEARNERS:
        for lesson in LESSONS:
            notebook = json.loads((root / "notebooks" / lesson / f"{lesson}.ipynb").read_text())
            hand_in_folder(root, student, lesson, notebook)
    make_grade(root)
    return root


@pytest.mark.grading
def test_a_regrade_of_nothing_rewrites_nothing(graded):
    before = times(graded)
    said = make_grade(graded)
    assert changed(before, times(graded)) == []
    assert "student versions: as make student last wrote them" in said
    assert "0 graded now, 6 unchanged since the last run" in said


@pytest.mark.grading
def test_a_regrade_of_nothing_imports_neither_nbgrader_nor_scipy(graded):
    """Nothing changed is decided without them (a second and more of a regrade of nothing, issue 42): the gradebook
    read with sqlite3, grades.csv left as it is, the times read as nbgrader reads them."""
    make_grade(graded)  # whatever another test handed in is graded first
    said = make_grade(graded, imported=True)
    assert "0 graded now" in said and said.splitlines()[-1] == "imported: []"


@pytest.mark.grading
def test_a_due_date_and_an_extension_nobody_missed_import_no_nbgrader(graded):
    """nbgrader's late-penalty plugin (its preprocessors: seconds to import) is made only where a hand-in came
    after its due date (these were copied in by hand, untimed: never late), make extension's times are read
    without nbgrader, and the extension the gradebook holds is read back as nbgrader recorded it."""
    def due(when):
        with sqlite3.connect(graded / "gradebook.db") as db:
            db.execute("UPDATE assignment SET duedate = ? WHERE name = ?", (when, LESSONS[0]))

    due("2026-01-10 17:00:00.000000")
    (graded / "extensions.csv").write_text(f"student_id,lesson,due\nada,{LESSONS[0]},2026-01-12 17:00:00 UTC\n")
    try:
        make_grade(graded)  # the gradebook and grades.csv take them
        said = make_grade(graded, imported=True)
        assert "0 graded now" in said and said.splitlines()[-1] == "imported: []"
    finally:
        due(None)
        (graded / "extensions.csv").unlink()
        make_grade(graded)


@pytest.mark.grading
def test_one_learner_s_regrade_rewrites_nothing_of_the_other_learners(graded):
    notebook = json.loads((graded / "notebooks" / LESSONS[0] / f"{LESSONS[0]}.ipynb").read_text())
    hand_in_folder(graded, "bob", LESSONS[0], answer_in(notebook, "softmax", WRONG))
    before = times(graded)
    said = make_grade(graded)
    rewritten = changed(before, times(graded))
    assert "1 graded now, 5 unchanged since the last run" in said
    others = [p for p in rewritten if p.startswith(("release/", "student/")) or
              p.startswith(("autograded/", "feedback/")) and not p.split("/")[1] == "bob"]
    assert others == [], "the student versions and the other learners' files are as they were"
    assert f"autograded/bob/{LESSONS[0]}/grading.json" in rewritten and "feedback/bob/index.html" in rewritten
    assert f"autograded/bob/{LESSONS[1]}/grading.json" not in rewritten, "bob's other lesson is unchanged too"
    assert {"grades_by_exercise.csv", "report/index.html"} <= set(rewritten)


@pytest.mark.grading
def test_a_changed_lesson_makes_the_student_versions_again(graded):
    lesson = graded / "notebooks" / LESSONS[1] / f"{LESSONS[1]}.ipynb"
    notebook = json.loads(lesson.read_text())
    notebook["cells"][0]["source"] = "".join(notebook["cells"][0]["source"]) + "\n\nA word from your teacher."
    lesson.write_text(json.dumps(notebook, indent=1) + "\n")
    said = make_grade(graded)
    assert "student versions: as make student last wrote them" not in said
    assert "A word from your teacher." in (graded / "release" / LESSONS[1] / f"{LESSONS[1]}.ipynb").read_text()
