"""What a regrade costs through `make grade`: nothing new, and one learner's new hand-in, on a class of 200.

    .venv/bin/python -m benchmarks.bench_regrade [--learners 200] [--lessons 4] [--runs 3] [--course DIR]

Targets (issue 32, issue 42 item 5): a regrade with nothing new in at most
5 s, one learner's in at most 15 s, the whole `make grade` command as the
teacher waits for it, on a quiet 2-core machine; and neither rewrites a file
whose inputs did not change (the other learners' pages, autograded/ folders
and the student versions keep their modification times).

The course is a copy of this one (its lessons, tools, packages and Makefile,
as they are in the working tree, their modification times kept; ``.venv`` a
link to this repository's, which `make setup` must have made: the copy's
`make grade` never installs), in a temporary folder or ``--course DIR``,
kept and reused (its code brought up to date first: a changed grader
regrades the class once, untimed). The class of
``bench_grading.build_class`` hands in the first ``--lessons`` lessons with
exercises (4, as issue 42's class; 8: all of them) and is graded by `make grade` once (timed: the real first grading). Then, ``--runs``
times each, `make grade` with nothing new, and with one learner's lesson
handed in again (a new comment in an answer): the median and worst seconds
and the files rewritten, those of other learners apart. Last, where a
regrade of nothing goes: make's own share (against the same command run
without make), Python's start-up, the imports of the run (``-X importtime``,
by package) and its stages (under cProfile, which slows Python code: read
them as shares).
"""

import argparse
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_grader import ids, sandbox
from tools.course import ROOT

from ._report import table
from .bench_grading import build_class, lessons_with_exercises

NOTHING_SECONDS, ONE_LEARNER_SECONDS = 5.0, 15.0
#: What `make grade` writes, whose modification times are compared.
WRITTEN = ("release", "student", "autograded", "feedback", "report", "grades.csv", "grades_by_exercise.csv",
           "grades_lms.csv")
#: What the course copy holds of this repository: what `make grade` and `make student` run and read.
COPIED = ("Makefile", "README.md", "nbgrader_config.py", "pyproject.toml", "requirements.txt",
          "requirements-model.txt", "requirements-teacher.txt", "course_grader", "encoder_lib", "jupyter",
          "notebooks", "tools")
#: The stages of a regrade, as cProfile names their functions: (what, file ending, function).
STAGES = (("student versions: up to date?", "student_versions.py", "up_to_date"),
          ("subprocesses: the sandbox's check (and make student where it runs)", "subprocess.py", "run"),
          ("the plan", "plan.py", "plan_run"),
          ("  of it, scanning submitted/", "submissions.py", "scan"),
          ("  of it, each hand-in read and its results", "plan.py", "decide"),
          ("the grades recorded (gradebook.db, grades.csv)", "run.py", "_grade_tasks"),
          ("grades_by_exercise.csv", "outputs.py", "write_csvs"),
          ("the feedback pages", "feedback_page.py", "write_feedback"),
          ("grades_lms.csv", "outputs.py", "write_lms_csv"),
          ("the class report", "grade.py", "write_class_report"))
#: The packages whose imports are shown apart.
PACKAGES = ("course_grader", "encoder_lib", "numpy", "nbformat", "nbgrader", "matplotlib", "sqlalchemy",
            "traitlets", "jsonschema")


def teacher_env():
    """The environment `make grade` runs in, without this process's PYTHONPATH (the course copy is the cwd)."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "MAKEFLAGS", "MAKELEVEL")}


def make_grade(root, *variables):
    """`make grade` in ``root`` (with ``variables``, ``FORCE=1``...); its seconds (it must succeed)."""
    started = time.perf_counter()
    done = subprocess.run(["make", "--no-print-directory", "grade", *variables], cwd=root, env=teacher_env(),
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"make grade failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds


def sync_course(root):
    """This repository's ``COPIED`` files (git's list, as in the working tree) copied into ``root`` where they
    differ, modification times kept, and ``.venv`` linked; returns how many were copied."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *COPIED], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    copied = 0
    for name in filter(None, listed):
        source, target = ROOT / name, root / name
        if source.is_file() and (not target.is_file() or target.read_bytes() != source.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            copied += 1
    if not (root / ".venv").exists():
        (root / ".venv").symlink_to(ROOT / ".venv")
    if subprocess.run(["make", "-q", "setup"], cwd=root, env=teacher_env()).returncode != 0:
        raise SystemExit("the teacher's environment is older than what it is made of: run `make setup` here first "
                         "(the course copy's `make grade` would install it)")
    return copied


def modification_times(root):
    """``{path: st_mtime_ns}`` of every file `make grade` writes."""
    found = {}
    for name in WRITTEN:
        path = root / name
        paths = [path] if path.is_file() else path.rglob("*") if path.is_dir() else []
        found.update({str(p.relative_to(root)): p.stat().st_mtime_ns for p in paths if p.is_file()})
    return found


def rewritten(before, after, learner=None):
    """``(files rewritten, of them the student versions' and other learners' than ``learner``)``: none of those
    may change."""
    changed = [path for path, when in after.items() if before.get(path) != when]
    own = f"/{ids.folder(learner)}/" if learner else None
    others = [path for path in changed if path.startswith(("release/", "student/")) or
              path.startswith(("autograded/", "feedback/")) and (own is None or own not in f"/{path}")]
    return len(changed), len(others)


def prepare(root, learners, lessons):
    """The course at ``root``, its code as this repository's, with a class handed in (``lessons`` lessons each) and
    graded once (done already where ``root`` has it); returns the first grading's seconds, or None where it was
    done before."""
    print(f"course copy {root}: {sync_course(root)} files brought up to date")
    if (root / "grades_by_exercise.csv").is_file():
        return None
    subprocess.run(["make", "--no-print-directory", "student"], cwd=root, env=teacher_env(), check=True,
                   capture_output=True)
    build_class(root, learners)
    for lesson in lessons_with_exercises()[lessons:]:
        for folder in (root / "submitted").glob(f"*/{lesson}"):
            shutil.rmtree(folder)
    return make_grade(root)


def hand_in_again(root, learner, n):
    """``learner``'s first lesson handed in again, a comment added to its first answer cell."""
    path = sorted((root / "submitted" / learner).glob("*/*.ipynb"))[0]
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = f"# handed in again ({n})\n{source}"
            break
    path.write_text(json.dumps(notebook))


def measure(root, runs, learner):
    """``[(what, [seconds], files rewritten, of other learners)]``; first a run that settles what an earlier run,
    or another grader version, left (not timed)."""
    make_grade(root)
    rows = []
    for what, change in (("nothing new", None), ("one learner's lesson handed in again", learner)):
        seconds, written = [], (0, 0)
        for n in range(runs):
            if change:
                hand_in_again(root, change, f"{time.time():.0f}-{n}")
            before = modification_times(root)
            seconds.append(make_grade(root))
            written = rewritten(before, modification_times(root), change)
        rows.append((what, seconds, *written))
    return rows


def median_seconds(command, root, runs, **kwargs):
    """The median seconds of ``command`` (a list) run ``runs`` times in ``root``."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, cwd=root, env=teacher_env(), capture_output=True, check=True, **kwargs)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def grade_command(root):
    """The command `make grade` runs in ``root`` (``make -n``'s), as a shell line."""
    said = subprocess.run(["make", "-n", "--no-print-directory", "grade"], cwd=root, env=teacher_env(),
                          capture_output=True, text=True, check=True).stdout
    return " ".join(line.rstrip("\\").strip() for line in said.splitlines() if line.strip())


def imports_by_package(root, command):
    """``{package: seconds}`` of the imports of one run of ``command`` (``-X importtime``, the outermost
    imports)."""
    said = subprocess.run(command.replace("/python ", "/python -X importtime ", 1), shell=True, cwd=root,
                          env=teacher_env(), capture_output=True, text=True, check=True).stderr
    found = {}
    for match in re.finditer(r"^import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", said, re.M):
        package = match.group(2).split(".")[0]
        found[package] = found.get(package, 0) + int(match.group(1)) / 1e6
    return found


def stages(root, command):
    """``(seconds in all, {stage: seconds})`` of one run of ``command`` under cProfile."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "regrade.prof"
        subprocess.run(command.replace("/python ", f"/python -m cProfile -o {out} ", 1), shell=True, cwd=root,
                       env=teacher_env(), capture_output=True, check=True)
        found = pstats.Stats(str(out))
    seconds = {what: sum(row[3] for (path, _, function), row in found.stats.items()
                         if path.endswith(ending) and function == name) for what, ending, name in STAGES}
    seconds["every import"] = sum(row[3] for (path, _, function), row in found.stats.items()
                                  if function == "_find_and_load")
    return found.total_tt, seconds


def breakdown(root, runs, whole):
    """Rows of where a regrade of nothing goes, ``whole`` being `make grade`'s median seconds."""
    command = grade_command(root)
    make = median_seconds(["make", "-q", "setup"], root, runs)
    python = median_seconds([str(root / ".venv" / "bin" / "python"), "-c", "pass"], root, runs)
    imports = imports_by_package(root, command)
    rows = [("make grade, the whole command", f"{whole:.2f}", "what the teacher waits"),
            ("  make's own checks (the .venv stamp)", f"{make:.3f}", "make -q setup"),
            ("  Python's start-up", f"{python:.2f}", "python -c pass"),
            ("  imports", f"{sum(imports.values()):.2f}", "-X importtime, the outermost")]
    rows += [(f"    {package}", f"{imports[package]:.2f}", "") for package in PACKAGES if package in imports]
    profiled, seconds = stages(root, command)
    rows.append(("under cProfile, in all", f"{profiled:.2f}", "Python code runs slower: read shares"))
    rows += [(f"  {what}", f"{value:.3f}", "") for what, value in seconds.items()]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--lessons", type=int, default=4, help="lessons each learner hands in (8: every one)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--course", type=Path, default=None, help="a folder to keep the graded class in, reused")
    args = parser.parse_args()
    problem = sandbox.sandbox_problem()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.course or Path(tmp) / "course").resolve()
        root.mkdir(parents=True, exist_ok=True)
        first = prepare(root, args.learners, args.lessons)
        learners = sorted(p.name for p in (root / "submitted").iterdir() if p.is_dir() and not p.name.startswith("."))
        rows = measure(root, args.runs, learners[len(learners) // 2])
        where = breakdown(root, args.runs, statistics.median(rows[0][1]))
        lessons = len({path.name for path in (root / "submitted").glob("*/*")})
    print(f"make grade (python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}): "
          f"a class of {len(learners)}, {lessons} lessons, " + (f"graded first in {first:.0f} s" if first else
                                                                 "graded before"))
    table([(what, len(seconds), f"{statistics.median(seconds):.1f}", f"{max(seconds):.1f}", written, others,
            "ok" if max(seconds) <= target else f"OVER {target:g} s")
           for (what, seconds, written, others), target in zip(rows, (NOTHING_SECONDS, ONE_LEARNER_SECONDS))],
          ("make grade", "runs", "median s", "worst s", "files rewritten", "student versions or other learners'", "target"))
    table(where, ("where a regrade of nothing goes", "s", "measured as"))


if __name__ == "__main__":
    main()
