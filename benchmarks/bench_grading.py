"""How fast a class is graded: `make grade` on 500 learners, beside `nbgrader autograde` on a sample of them.

    .venv/bin/python -m benchmarks.bench_grading [--learners 500] [--sample 3] [--jobs N]

Target: a class of 500 learners with every lesson handed in graded in under
10 minutes on a 2-core machine (aim: 5).

In a temporary copy of the course (the repository's release/, student/ and
gradebook.db are not touched): `tools.student` generates the student
versions, then a class is built, every learner handing in every lesson with
exercises: 40% correct (the teachers' versions), 15% blank (the student
versions as released), 25% partly done (the first lessons solved, the rest
blank) and 20% with one catalogued mistake (tests/mistakes/) in an
otherwise correct lesson. Every notebook differs from every other (a
learner's name in its metadata), as real submissions do.

The course's grader (``encoder_lib.grading.teacher.grade``, what `make grade` runs)
grades the whole class, each exercise in a sandbox; then it runs again with
nothing changed (every result reused). `nbgrader autograde` grades a sample
of the same class (``--sample`` learners: correct, with a mistake, partly
done) in the same run, for the comparison of learners per minute.
"""

import argparse
import contextlib
import csv
import io
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from encoder_lib.grading import EXERCISES
from encoder_lib.grading.teacher import cases, sandbox
from encoder_lib.grading.teacher.class_report import build as build_report
from encoder_lib.grading.teacher.plan import Choices, plan_run
from encoder_lib.grading.teacher.run import grade_class
from tests.mistakes import MISTAKES
from tools import student as student_tool
from tools.course import ROOT, jupyter_env

from ._report import table

TARGET_MINUTES = 10.0



def lessons_with_exercises():
    return list(dict.fromkeys(e.lesson for e in EXERCISES.values()))


def build_class(root, learners, seed=0):
    """Write the class's submissions; returns {student: kind}."""
    rng = random.Random(seed)
    lessons = lessons_with_exercises()
    solved = {lesson: nbformat.read(root / "notebooks" / lesson / f"{lesson}.ipynb", as_version=4) for lesson in lessons}
    blank = {lesson: nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4) for lesson in lessons}
    kinds = {}
    for i in range(learners):
        draw = rng.random()
        kind = "correct" if draw < 0.40 else "blank" if draw < 0.55 else "partly done" if draw < 0.80 else "mistake"
        student = f"learner{i:04d}"
        kinds[student] = kind
        solved_up_to = rng.randrange(1, len(lessons)) if kind == "partly done" else len(lessons)
        mistake = rng.choice(MISTAKES) if kind == "mistake" else None
        for n, lesson in enumerate(lessons):
            nb = blank[lesson] if kind == "blank" or n >= solved_up_to else solved[lesson]
            nb = nbformat.from_dict(nb)
            if mistake and mistake.lesson == lesson:
                for cell in nb.cells:
                    if cell.metadata.get("nbgrader", {}).get("grade_id") == f"{mistake.exercise}_answer":
                        cell.source = mistake.source.strip() + "\n"
            nb.metadata["learner"] = student  # every submission's bytes differ
            folder = root / "submitted" / student / lesson
            folder.mkdir(parents=True)
            nbformat.write(nb, folder / f"{lesson}.ipynb")
    return kinds


def check_scores(root, kinds):
    """Every correct learner has full marks and every blank one none (else the benchmark stops)."""
    with open(root / "grades_by_exercise.csv") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        kind = kinds[row["student_id"]]
        if kind == "correct" and row["points"] != row["max_points"] or kind == "blank" and row["points"] != "0":
            raise SystemExit(f"wrong score for a {kind} learner: {row}")


def autograde_sample(root, students):
    """`nbgrader autograde` on ``students``' submissions, in a copy of the course; returns seconds."""
    sample = root.parent / "sample"
    shutil.copytree(root / "notebooks", sample / "notebooks")
    shutil.copy(root / "nbgrader_config.py", sample)
    with contextlib.redirect_stdout(io.StringIO()):
        student_tool.generate(sample)
    for student in students:
        shutil.copytree(root / "submitted" / student, sample / "submitted" / student)
    command = [str(Path(sys.executable).parent / "nbgrader"), "autograde", "*", "--create", "--log-level=ERROR"]
    start = time.perf_counter()
    subprocess.run(command, cwd=sample, env=jupyter_env(), capture_output=True, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--sample", type=int, default=3, help="learners nbgrader autograde grades")
    parser.add_argument("--jobs", type=int, default=None, help="the grader's workers (default: one per core)")
    args = parser.parse_args()
    problem = sandbox.sandbox_problem()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        shutil.copytree(ROOT / "notebooks", root / "notebooks",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
        shutil.copy(ROOT / "nbgrader_config.py", root)
        with contextlib.redirect_stdout(io.StringIO()):
            generate = time.perf_counter()
            student_tool.main(["--root", str(root)])
            generate = time.perf_counter() - generate
        kinds = build_class(root, args.learners)
        lessons = len(lessons_with_exercises())

        jobs = args.jobs or os.cpu_count()
        grader_time = time.perf_counter()
        results, summary = grade_class(plan_run(root), jobs=jobs, out=lambda line: None)
        grader_time = time.perf_counter() - grader_time
        check_scores(root, kinds)
        again = time.perf_counter()
        grade_class(plan_run(root), jobs=jobs, out=lambda line: None)
        again = time.perf_counter() - again
        report_time = time.perf_counter()
        build_report(root)
        report_time = time.perf_counter() - report_time
        with_probes, without_probes = (regrade_seconds(root, jobs, probes) for probes in (True, False))

        by_kind = {}
        for student, kind in kinds.items():
            by_kind.setdefault(kind, student)
        sample = [by_kind[k] for k in ("correct", "mistake", "partly done", "blank") if k in by_kind][: args.sample]
        nbgrader_time = autograde_sample(root, sample) if sample else float("nan")

    ours = args.learners / (grader_time / 60)
    theirs = len(sample) / (nbgrader_time / 60) if sample else float("nan")
    statuses = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    print(f"grading a class (python {sys.version.split()[0]}, {os.cpu_count()} cores); "
          f"student versions generated in {generate:.1f} s")
    print("the class: " + ", ".join(f"{sum(k == kind for k in kinds.values())} {kind}"
                                     for kind in ("correct", "blank", "partly done", "mistake"))
          + f"; {lessons} lessons each; exercises: " + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
    minutes = grader_time / 60
    table([
        (f"make grade, sandboxed, {jobs} workers", args.learners, args.learners * lessons, f"{grader_time:.1f}",
         f"{ours:.0f}", "ok" if minutes < TARGET_MINUTES else f"OVER {TARGET_MINUTES:g} min"),
        ("make grade again, nothing changed", args.learners, 0, f"{again:.1f}", f"{args.learners / (again / 60):.0f}",
         ""),
        ("make grade FORCE=1, with the diagnosis's probes", args.learners, args.learners * lessons,
         f"{with_probes:.1f}", f"{args.learners / (with_probes / 60):.0f}", ""),
        ("make grade FORCE=1, without them", args.learners, args.learners * lessons, f"{without_probes:.1f}",
         f"{args.learners / (without_probes / 60):.0f}", ""),
        ("nbgrader autograde, one kernel per notebook", len(sample), len(sample) * lessons, f"{nbgrader_time:.1f}",
         f"{theirs:.1f}", ""),
    ], ("grader", "learners", "lessons graded", "seconds", "learners per minute",
        f"target: {args.learners} in < {TARGET_MINUTES:g} min"))
    print(f"make grade grades {ours / theirs:.0f} times as many learners per minute as nbgrader autograde")
    share = (with_probes - without_probes) / with_probes
    print(f"the diagnosis's probes cost {share:.1%} of the grading time (target: at most 20%)")
    print(f"the class report (make report) of {args.learners} learners: {report_time:.1f} s (target: at most 10 s)")


def regrade_seconds(root, jobs, probes):
    """Seconds to grade the class again from scratch (FORCE=1), with or without the diagnosis's probes (the
    cases never graded that say where in a block a failing answer goes wrong)."""
    saved = dict(cases._VISIBLE)
    if not probes:
        cases._VISIBLE.update({name: [c for c in built if c.graded] for name, built in saved.items()})
    try:
        started = time.perf_counter()
        grade_class(plan_run(root, choices=Choices(force=True)), jobs=jobs, out=lambda line: None)
        return time.perf_counter() - started
    finally:
        cases._VISIBLE.clear()
        cases._VISIBLE.update(saved)


if __name__ == "__main__":
    main()
