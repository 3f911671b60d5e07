"""A class whose every learner handed every lesson in through nbgrader's exchange, graded without grading: for
`make release-feedback`'s tests of what it sends again (``test_release_changes.py``) and its benchmark
(``benchmarks/bench_release.py``).

``build(scratch, learners, lessons)`` makes, in ``scratch``: the course
folder (``course/``, its ``nbgrader_config.py`` the course's with the
exchange below), nbgrader's exchange (``exchange/``) and each learner's
home (``homes/<id>/``, their nbgrader settings as `make hub-install` writes
them), each lesson handed in as ``nbgrader submit`` leaves it in their cache
and ``make collect`` in ``submitted/`` (the notebook, ``timestamp.txt``,
``submission_secret.txt``). ``grade`` writes ``grades_by_exercise.csv`` and
the pages as ``make grade`` does; ``release`` runs `make release-feedback`'s
command and says which files it wrote; ``fetch`` is a learner's
``nbgrader fetch_feedback``. Free of pytest.
"""

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from course_grader.class_report.rows import read_rows
from course_grader.feedback_page import write_feedback
from course_grader.files import write_csv
from course_grader.outputs import COLUMNS
from encoder_lib.grading.exercises import EXERCISES

ROOT = Path(__file__).resolve().parents[2]
STAMP = "2026-12-10 16:00:00.000000 UTC"
COURSE = "encoder-course"


def lessons_of(count):
    """``{lesson: [its exercises]}`` of the course's first ``count`` lessons with exercises."""
    found = {}
    for name, exercise in EXERCISES.items():
        found.setdefault(exercise.lesson, []).append(name)
    return {lesson: found[lesson] for lesson in sorted(found)[:count]}


def run(command, cwd, **env):
    """``command`` in ``cwd`` with this environment's commands first on the PATH; its output (it must succeed)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ, PATH=path, PYTHONPATH=str(ROOT), **env))
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{(done.stdout + done.stderr)[-3000:]}")
    return done.stdout + done.stderr


def hand_in(scratch, student, lesson, secret=None):
    """``student``'s hand-in of ``lesson``, in their cache and in submitted/ (a new one replaces the last)."""
    root, home = scratch / "course", scratch / "homes" / student
    secret = secret or secrets.token_hex(64)
    for folder in (root / "submitted" / student / lesson, home / "cache" / COURSE / f"{student}+{lesson}+{STAMP}"):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / f"{lesson}.ipynb").write_text("{}")
        (folder / "timestamp.txt").write_text(STAMP)
        (folder / "submission_secret.txt").write_text(secret)


def build(scratch, learners, lessons):
    """The course folder, the exchange and each learner's home, every lesson handed in; ``(course, exchange)``."""
    root, exchange = scratch / "course", scratch / "exchange"
    exchange.mkdir(mode=0o1777, parents=True)
    exchange.chmod(0o1777)
    root.mkdir()
    config = (ROOT / "nbgrader_config.py").read_text()
    (root / "nbgrader_config.py").write_text(config.replace('EXCHANGE = "/srv/nbgrader/exchange"',
                                                            f"EXCHANGE = {str(exchange)!r}"))
    for student in learners:
        home = scratch / "homes" / student
        home.mkdir(parents=True)
        (home / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\nc.Exchange.root = {str(exchange)!r}\n"
            f"c.CourseDirectory.student_id = {student!r}\nc.Exchange.cache = {str(home / 'cache')!r}\n")
        for lesson in lessons:
            hand_in(scratch, student, lesson)
    return root, exchange


def grade(root, learners, lessons, failing=(), note="it differs"):
    """grades_by_exercise.csv and the pages, as make grade writes them (its umask); the exercises of each
    ``(learner, lesson)`` in ``failing`` fail, with ``note``."""
    rows = [(s, lesson, e, 0.0 if (s, lesson) in failing else 2.0, 2.0,
             "failed" if (s, lesson) in failing else "passed", note if (s, lesson) in failing else "", "", "")
            for s in learners for lesson, exercises in lessons.items() for e in exercises]
    write_csv(root / "grades_by_exercise.csv", COLUMNS + ("mistake", "diagnosis"), rows)
    mask = os.umask(0o077)
    try:
        write_feedback(root, read_rows(root / "grades_by_exercise.csv")[0])
    finally:
        os.umask(mask)


def files_of(*folders):
    """``{path: (inode, modification time)}`` of every file below ``folders``."""
    return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for folder in folders for p in Path(folder).rglob("*")
            if p.is_file()}


def release(root, exchange, *arguments):
    """`make release-feedback`'s command in ``root``; ``(what it said, the files it wrote)``: new, or with another
    inode or modification time, in the course folder and the exchange."""
    before = files_of(root, exchange)
    said = run([sys.executable, "-m", "course_grader.release", "--root", str(root), *arguments], root)
    after = files_of(root, exchange)
    return said, sorted(p for p, key in after.items() if before.get(p) != key)


def counts(said):
    """``(released, unchanged)`` as `make release-feedback`'s last lines say them."""
    released = re.search(r"^(\d+) pages? released through nbgrader's feedback exchange", said, re.M)
    unchanged = re.search(r"^(\d+) pages? unchanged since", said, re.M)
    return int(released.group(1)), int(unchanged.group(1)) if unchanged else None


def fetch(scratch, student, lessons):
    """What ``student``'s ``nbgrader fetch_feedback <lessons...>`` gives them: ``{path below their home: text}``
    (what an earlier fetch left is cleared first)."""
    home = scratch / "homes" / student
    for lesson in lessons:
        shutil.rmtree(home / lesson, ignore_errors=True)
    run(["nbgrader", "fetch_feedback", *lessons], home, HOME=str(home))
    return {str(p.relative_to(home)): p.read_text() for lesson in lessons
            for p in sorted((home / lesson / "feedback").glob("*/*.html"))}
