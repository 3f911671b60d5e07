"""How long the nbgrader pipeline takes (target: autograding one learner's whole course under 30 s).

    .venv/bin/python benchmarks/bench_grading.py

In a temporary copy of the course (the repository's release/, student/ and
gradebook.db are not touched): the time `tools/student.py` takes to generate
every lesson's student version and copy it to student/ (what `make student`
runs), then the time one `nbgrader autograde` takes to grade one complete
submission of the whole course, with the source notebooks (solutions
included) as the submission, with the time each lesson took within that run
(from nbgrader's log: copying, executing in a fresh kernel, saving the scores;
the rest of the total is nbgrader's own start-up).
"""

import argparse
import contextlib
import csv
import io
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import table

ROOT = Path(__file__).resolve().parent.parent
TARGET = 30.0

spec = importlib.util.spec_from_file_location("student_tool", ROOT / "tools" / "student.py")
student_tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(student_tool)


def timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def autograde(root):
    """Autograde everything in submitted/ in one nbgrader run; returns the total time and
    {lesson: seconds} read off nbgrader's log as it is written."""
    command = [str(Path(sys.executable).parent / "nbgrader"), "autograde", "*", "--create", "--log-level=INFO"]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=root, env=student_tool.nbgrader_env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    per_lesson, log, began, lesson = {}, [], None, None
    for line in process.stdout:
        log.append(line)
        if "Creating/updating student" in line:
            began = time.perf_counter()
        elif "Sanitizing " in line:
            lesson = Path(line.split("Sanitizing ", 1)[1].strip()).parent.name
        elif "Setting destination file permissions" in line and began is not None:
            per_lesson[lesson] = time.perf_counter() - began
    if process.wait() != 0:
        sys.stderr.write("".join(log))
        raise SystemExit("nbgrader autograde failed")
    return time.perf_counter() - start, per_lesson


def scores(root):
    student_tool.nbgrader(["export", "--to", "grades.csv", "--log-level=ERROR"], root,
                          capture_output=True, check=True)
    with open(root / "grades.csv") as f:
        rows = [r for r in csv.DictReader(f) if r["student_id"] == "learner"]
    return sum(float(r["score"]) for r in rows), sum(float(r["max_score"]) for r in rows)


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(ROOT / "notebooks", root / "notebooks",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        shutil.copy(ROOT / "nbgrader_config.py", root)
        lessons = student_tool.lesson_names(root)

        with contextlib.redirect_stdout(io.StringIO()):
            generate = timed(student_tool.main, ["--root", str(root)])
        for lesson in lessons:
            shutil.copytree(root / "notebooks" / lesson, root / "submitted" / "learner" / lesson)
        whole, per_lesson = autograde(root)
        score, max_score = scores(root)
        rows = [("generate student versions (make student)", f"{generate:.1f}", ""),
                (f"autograde one learner's whole course ({len(lessons)} lessons, "
                 f"{score:g}/{max_score:g} points)", f"{whole:.1f}",
                 "ok" if whole < TARGET else f"OVER {TARGET:g} s")]
        if score != max_score:
            rows.append(("the solutions should score full marks", "", "FAILED"))
        for lesson in lessons:
            rows.append((f"  of which {lesson}", f"{per_lesson.get(lesson, float('nan')):.1f}", ""))
    print(f"nbgrader pipeline, one learner (python {sys.version.split()[0]})")
    table(rows, ("step", "seconds", f"target < {TARGET:g} s"))


if __name__ == "__main__":
    main()
