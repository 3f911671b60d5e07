"""How fast a class is graded: `make grade` on 500 learners, where its time goes, beside `nbgrader autograde`.

    .venv/bin/python -m benchmarks.bench_grading [--learners 500] [--sample 3] [--jobs N] [--scheduler [ADDRESS]]

Target: a class of 500 learners with every lesson handed in graded in at
most 2 minutes on a quiet 2-core machine (at least 250 learners a minute),
the grader's own processes under 1.5 GiB, and the diagnosis's variant
search at most 20% of the grading time (issue 31).

In a temporary copy of the course (the repository's release/, student/ and
gradebook.db are not touched): `tools.student` generates the student
versions, then a class is built, every learner handing in every lesson with
exercises: 40% correct (the teachers' versions), 15% blank (the student
versions as released), 25% partly done (the first lessons solved, the rest
blank) and 20% with one catalogued mistake (tests/mistakes/) in an
otherwise correct lesson. Every notebook differs from every other (a
learner's name in its metadata), as real submissions do.

The course's grader (``course_grader``, what `make grade` runs)
grades the whole class, each exercise in a sandbox, and prints where its time
went (``teacher.profile``): every stage summed over the workers, per learner
and per exercise, with the diagnosis's variant search (``causes.find``) timed
apart; then it runs again with nothing changed (every result reused), and
again with FORCE=1, and with ``--scheduler`` FORCE=1 on a Dask cluster (by default a scheduler and two
one-thread workers it starts on 127.0.0.1). `nbgrader autograde` grades a sample of the same class
(``--sample`` learners: correct, with a mistake, partly done) in the same
run, for the comparison of learners per minute.
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
from course_grader import cluster, profile, sandbox
from course_grader.class_report import build as build_report
from course_grader.course_config import course_config
from course_grader.plan import Choices, plan_run
from course_grader.run import grade_class
from tests.grading_helpers import TreeSampler
from tests.mistakes import MISTAKES
from tools import student as student_tool
from tools.course import ROOT, jupyter_env

from ._report import table

#: Learners a minute: 500 in at most 2 minutes.
TARGET_PER_MINUTE = 250



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


def diagnosis_timed():
    """Time every call of the diagnosis's variant search (``causes.find``, which ``verdict.judge`` calls) as the
    profile's "diagnosis" stage, in this process and the workers it forks, while the returned context holds."""
    from encoder_lib.grading import causes

    real = causes.find

    def find(exercise, *args, **kwargs):
        with profile.timed("diagnosis", exercise.name):
            return real(exercise, *args, **kwargs)

    @contextlib.contextmanager
    def patched():
        causes.find = find
        try:
            yield
        finally:
            causes.find = real

    return patched()


def graded(root, jobs, choices=Choices(), **how):
    """Grade the course at ``root`` as `make grade` does: ``(seconds, results, summary)``, the plan's own time in
    the summary's profile."""
    started = time.perf_counter()
    plan = plan_run(root, choices=choices)
    planned = time.perf_counter() - started
    results, summary = grade_class(plan, jobs=jobs, out=lambda line: None, **how)
    summary["profile"].add("plan", planned)
    return time.perf_counter() - started, results, summary


def _arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--sample", type=int, default=3, help="learners nbgrader autograde grades (0: none)")
    parser.add_argument("--jobs", type=int, default=None, help="the grader's workers (default: one per core)")
    parser.add_argument("--scheduler", nargs="?", const="local", default=None,
                        help="also grade the class on a Dask cluster: this scheduler's (tcp://host:8786), or without "
                             "an address a scheduler and two one-thread workers started here on 127.0.0.1")
    args = parser.parse_args()
    if args.learners < 1 or args.sample < 0 or (args.jobs is not None and args.jobs < 1):
        parser.error(f"--learners and --jobs must be at least 1 and --sample at least 0, got {args.learners}, "
                     f"{args.jobs} and {args.sample}")
    if args.scheduler not in (None, "local"):
        args.scheduler = cluster.address(given=args.scheduler)
    return args


#: The packages a teacher's environment may or may not hold beside the lock, each with what it changes here.
OPTIONAL = {"rfc3987": "requirements-teacher.txt: nbformat and nbgrader import a second sooner",
            "torch": "the tests' reference only", "sentence_transformers": "the tests' reference only"}


def environment():
    """Which of ``OPTIONAL`` this Python holds, in a line: the rate below is this environment's."""
    import importlib.util

    held = [name for name in OPTIONAL if importlib.util.find_spec(name) is not None]
    missing = [name for name in OPTIONAL if name not in held]
    where = "make setup's .venv" if Path(sys.prefix).resolve() == (ROOT / ".venv").resolve() else sys.prefix
    return (f"{where}; " + (f"with {', '.join(held)}" if held else "with none of the optional packages") +
            (f"; without {', '.join(missing)}" if missing else "") +
            ("" if "rfc3987" in held else " (make setup installs rfc3987: run it again)"))


def main():
    args = _arguments()
    problem = sandbox.sandbox_problem()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "course"
        generate = make_course(root)
        kinds = build_class(root, args.learners)
        measured = measure(root, kinds, args)
    print(f"the environment: {environment()}")
    print(f"grading a class (python {sys.version.split()[0]}, {os.cpu_count()} cores); "
          f"student versions generated in {generate:.1f} s")
    print_class(kinds, measured["results"])
    print_times(args, measured)
    found, sampler = measured["summary"]["profile"], measured["sampler"]
    print_profile(found, args.learners, args.jobs or os.cpu_count())
    print(f"the grader's peak memory (its own processes, outside the sandboxes): {sampler.grader_peak / 2**20:.0f} MiB"
          f" (target: under 1536 MiB); with the sandboxes: {sampler.peak / 2**20:.0f} MiB")
    print(f"the class report (make report) of {args.learners} learners: {found.seconds('report'):.1f} s "
          f"(target: at most 10 s)")


def measure(root, kinds, args):
    """Grade the class: first (its profile, the diagnosis timed, the grader's memory sampled), again with nothing
    changed, the class report, FORCE=1 here and on a Dask cluster (``--scheduler``), nbgrader on a sample."""
    jobs, measured = args.jobs or os.cpu_count(), {"sampler": TreeSampler(os.getpid(), every=0.5)}
    with diagnosis_timed():
        measured["first"], measured["results"], measured["summary"] = graded(root, jobs)
    measured["sampler"].stop()
    check_scores(root, kinds)
    measured["again"] = graded(root, jobs)[0]
    started = time.perf_counter()
    build_report(root)
    measured["summary"]["profile"].add("report", time.perf_counter() - started)
    measured["forced"] = graded(root, jobs, Choices(force=True))[0]
    if args.scheduler:
        measured["cluster"] = on_cluster(root, args.scheduler)
        check_scores(root, kinds)
    measured["sample"] = sample_of(kinds, args.sample)
    measured["nbgrader"] = autograde_sample(root, measured["sample"]) if measured["sample"] else float("nan")
    return measured


def on_cluster(root, where):
    """Seconds to grade the class again from scratch (FORCE=1) on the Dask cluster at ``where`` (its certificates
    in the course's .dask-tls/); "local": on a scheduler and two one-thread workers started here on 127.0.0.1 with
    certificates of their own (``tests/grader/dask_cluster.py``), once they are up."""
    if where != "local":
        return graded(root, None, Choices(force=True), scheduler=where)[0]
    from tests.grader.dask_cluster import LocalCluster

    with LocalCluster(root.parent / "dask", workers=2) as local:  # with the course's TLS, as documented
        return graded(local.certify(root), None, Choices(force=True), scheduler=local.address)[0]


def make_course(root):
    """A copy of the course's lessons and settings at ``root``, with the student versions generated: their seconds."""
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT / "nbgrader_config.py", root)
    sections = course_config(ROOT).EncoderCourse.get("sections")
    if isinstance(sections, str):  # a roster file with a section column, as docs/teaching/sections.md sets it
        shutil.copy(ROOT / sections, root / sections)
    with contextlib.redirect_stdout(io.StringIO()):
        started = time.perf_counter()
        student_tool.main(["--root", str(root)])
        return time.perf_counter() - started


def sample_of(kinds, size):
    """``size`` learners for nbgrader autograde: one correct, one with a mistake, one partly done, one blank."""
    by_kind = {}
    for student, kind in kinds.items():
        by_kind.setdefault(kind, student)
    return [by_kind[k] for k in ("correct", "mistake", "partly done", "blank") if k in by_kind][:size]


def print_class(kinds, results):
    statuses = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    print("the class: " + ", ".join(f"{sum(k == kind for k in kinds.values())} {kind}"
                                     for kind in ("correct", "blank", "partly done", "mistake"))
          + f"; {len(lessons_with_exercises())} lessons each; exercises: "
          + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))


def print_times(args, measured):
    """The table of learners a minute: the first grading, again with nothing changed, FORCE=1 here and on a Dask
    cluster, nbgrader autograde."""
    learners, lessons, sampled = args.learners, len(lessons_with_exercises()), len(measured["sample"])
    first = measured["first"]
    rows = [(f"make grade, sandboxed, {args.jobs or os.cpu_count()} workers", learners, learners * lessons,
             f"{first:.1f}", f"{learners / (first / 60):.0f}",
             "ok" if learners / (first / 60) >= TARGET_PER_MINUTE else "UNDER"),
            ("make grade again, nothing changed", learners, 0, f"{measured['again']:.1f}",
             f"{learners / (measured['again'] / 60):.0f}", ""),
            ("make grade FORCE=1", learners, learners * lessons, f"{measured['forced']:.1f}",
             f"{learners / (measured['forced'] / 60):.0f}", "")]
    if "cluster" in measured:
        where = "2 workers of 1 thread on 127.0.0.1" if args.scheduler == "local" else args.scheduler
        rows.append((f"make grade FORCE=1 on a Dask cluster ({where})", learners, learners * lessons,
                     f"{measured['cluster']:.1f}", f"{learners / (measured['cluster'] / 60):.0f}", ""))
    rows.append(("nbgrader autograde, one kernel per notebook", sampled, sampled * lessons,
                 f"{measured['nbgrader']:.1f}", f"{sampled / (measured['nbgrader'] / 60):.1f}" if sampled else
                 "not run", ""))
    table(rows, ("grader", "learners", "lessons graded", "seconds", "learners per minute",
                 f"target: at least {TARGET_PER_MINUTE} a minute"))
    if sampled:
        print(f"make grade grades {(learners / first) / (sampled / measured['nbgrader']):.0f} times as many "
              f"learners per minute as nbgrader autograde")


def print_profile(found, learners, jobs):
    """Where the time went: every stage's seconds (summed over the workers), per learner, and its share of the
    grader's time (the workers' time on learners and the teacher's own stages); then by exercise."""
    worker = found.seconds("learner")
    teacher = sum(found.seconds(stage) for stage, (where, _) in profile.STAGES.items() if where == "teacher")
    total = worker + teacher
    seconds = {stage: found.seconds(stage) for stage in profile.STAGES if stage != "learner"}
    seconds["judge"] -= seconds["diagnosis"]  # the judge's time holds the diagnosis's
    rest = worker - sum(s for stage, s in seconds.items() if profile.STAGES[stage][0] != "teacher")
    rows = [(stage, profile.STAGES[stage][0], f"{s:.1f}", f"{1000 * s / learners:.1f}", f"{s / total:.1%}",
             profile.STAGES[stage][1]) for stage, s in seconds.items()]
    rows.append(("rest", "worker", f"{rest:.1f}", f"{1000 * rest / learners:.1f}", f"{rest / total:.1%}",
                 "waiting for the sandbox's messages while the machine is busy, and what no stage counts"))
    rows.append(("all", "", f"{total:.1f}", f"{1000 * total / learners:.1f}", "100%",
                 f"the grader's time: {jobs} workers' on their learners, and the teacher's process's"))
    print(f"where the grader's time goes ({learners} learners, {jobs} workers; seconds summed over the workers):")
    table(rows, ("stage", "where", "seconds", "ms a learner", "share", "what"))
    print_exercises(found, learners)
    share = found.seconds("diagnosis") / total
    print(f"the diagnosis's variant search (causes.find) took {found.seconds('diagnosis'):.1f} s of the grader's "
          f"{total:.1f} s: {share:.1%} of the grading time (goal: at most 20%)")


#: The per-exercise table's columns: (heading, the stages it adds up).
EXERCISE_COLUMNS = (("hidden cases", ("hidden",)), ("send", ("send",)), ("child", ("child", "seccomp", "end")),
                    ("answer", ("answer",)), ("calls", ("calls",)), ("receive", ("receive",)),
                    ("judge", ("judge",)), ("diagnosis", ("diagnosis",)))


def print_exercises(found, learners):
    """Each exercise's stages, in ms an answer run (the judge's without the diagnosis's)."""
    rows = []
    for name in found.exercises():
        runs = found.count("judge", name)
        if not runs:
            continue
        cells = [sum(found.seconds(stage, name) for stage in stages) for _, stages in EXERCISE_COLUMNS]
        cells[6] -= cells[7]
        rows.append((name, runs, *(f"{1000 * c / runs:.1f}" for c in cells), f"{1000 * sum(cells) / runs:.1f}",
                     f"{1000 * sum(cells) / learners:.1f}"))
    print("by exercise, in ms an answer run (child: its process forked, limited, its allow-list loaded, and ended):")
    table(rows, ("exercise", "answers run", *(heading for heading, _ in EXERCISE_COLUMNS), "all",
                 "ms a learner"))


if __name__ == "__main__":
    main()
