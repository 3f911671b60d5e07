"""What a regrade costs: `make grade` with nothing new, and with one learner's new hand-in, on a class of 200.

    .venv/bin/python -m benchmarks.bench_regrade [--learners 200] [--runs 3] [--course DIR]

Targets (issue 32): a regrade with nothing new in at most 5 s, one learner's
in at most 15 s, for the whole course on a quiet 2-core machine; and neither
rewrites a file whose inputs did not change (the other learners' pages,
autograded/ folders and the student versions keep their modification times).

In a temporary copy of the course (or ``--course DIR``, kept and reused
between runs: the first grading of the class is then done once), the class
of ``bench_grading.build_class`` hands in every lesson and is graded once by
`make grade`'s own command (``course_grader.grade`` with
`make student`'s as ``--release``, in a fresh process, as `make grade` runs
it). Then, ``--runs`` times each: the same command with nothing new, and
with one learner's lesson handed in again (a new comment in an answer).
Each row gives the median and worst seconds and the files rewritten, those
of other learners apart.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_grader import ids, sandbox
from tools import student as student_tool
from tools.course import ROOT

from ._report import table
from .bench_grading import build_class

NOTHING_SECONDS, ONE_LEARNER_SECONDS = 5.0, 15.0
#: What `make grade` writes, whose modification times are compared.
WRITTEN = ("release", "student", "autograded", "feedback", "report", "grades.csv", "grades_by_exercise.csv",
           "grades_lms.csv")


def make_grade(root):
    """`make grade`'s command in ``root``, in a fresh process; its seconds (it must succeed)."""
    python = sys.executable
    release = f"{shlex.quote(python)} -m tools.student --root {shlex.quote(str(root))}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "course_grader.grade", "--root", str(root),
                           "--release", release], cwd=root, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"make grade failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return seconds


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


def prepare(root, learners):
    """The course at ``root`` with a class handed in and graded once (done already where ``root`` has it)."""
    if (root / "grades_by_exercise.csv").is_file():
        return
    shutil.copytree(ROOT / "notebooks", root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copy(ROOT / "nbgrader_config.py", root)
    student_tool.main(["--root", str(root)])
    build_class(root, learners)
    print(f"the class of {learners} graded for the first time in {make_grade(root):.0f} s (not timed)")


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
    """``[(what, [seconds], files rewritten, of other learners)]``."""
    make_grade(root)  # settles what an earlier run, or another grader version, left
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--course", type=Path, default=None, help="a folder to keep the graded class in, reused")
    args = parser.parse_args()
    problem = sandbox.sandbox_problem()
    if problem:
        raise SystemExit(problem)
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.course or Path(tmp) / "course").resolve()
        root.mkdir(parents=True, exist_ok=True)
        prepare(root, args.learners)
        learners = sorted(p.name for p in (root / "submitted").iterdir() if p.is_dir() and not p.name.startswith("."))
        rows = measure(root, args.runs, learners[len(learners) // 2])
    print(f"make grade again (python {sys.version.split()[0]}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}): a class of {len(learners)}")
    table([(what, len(seconds), f"{statistics.median(seconds):.1f}", f"{max(seconds):.1f}", written, others,
            "ok" if max(seconds) <= target else f"OVER {target:g} s")
           for (what, seconds, written, others), target in zip(rows, (NOTHING_SECONDS, ONE_LEARNER_SECONDS))],
          ("make grade", "runs", "median s", "worst s", "files rewritten", "student versions or other learners'", "target"))


if __name__ == "__main__":
    main()
