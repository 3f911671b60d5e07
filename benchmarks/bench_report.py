"""How fast the class report is built: `make report` for a class of 500, from what grading leaves, without grading.

    .venv/bin/python -m benchmarks.bench_report [--learners 500] [--runs 3]

Target: at most 10 s for 500 learners on a 2-core machine.

In a temporary folder, ``tests/grader/report_class.py`` writes what `make grade`
leaves for a seeded class (no grading): grades_by_exercise.csv with the
mistake and diagnosis columns, the gradebook with every learner's name, and
every handed-in lesson's notebook as graded in autograded/ (the teachers'
notebooks with the learner's answers; each answer cell starts with a comment
of its learner's, so that no two texts are the same, as in a real class).
35% of the learners answer everything right, 10% hand in blank notebooks,
20% stop after a few lessons, 25% make one to three catalogued mistakes and
10% one of the wrong answers no mistake explains. Each run is
`python -m course_grader.class_report` in a fresh process, as `make
report` runs it: reading everything, grouping, normalising and fingerprinting
every answer for the copying section, drawing the pictures, writing the page
and mistakes.csv. The first series keeps the answers the report read before
(``report/.answers.json``, as after a regrade); the second reads every
notebook again. What the page was made from is forgotten before each run
(``report/.made-from``), or the run would find nothing changed. `benchmarks/bench_grading.py` prints the same time for a
class it has graded, beside the grading time.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.grader.report_class import seeded_class

from ._report import table

TARGET_SECONDS = 10.0


def build_once(root, read_again=False):
    """Seconds for one `make report` in a fresh process (``read_again``: every notebook read again)."""
    (root / "report" / ".made-from").unlink(missing_ok=True)
    if read_again:
        (root / "report" / ".answers.json").unlink(missing_ok=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "course_grader.class_report", "--root", str(root)], check=True,
                   capture_output=True)
    return time.perf_counter() - started


def top_cards(root, most=3):
    """The first ``most`` rows of mistakes.csv: the page's top re-teach cards."""
    with open(root / "report" / "mistakes.csv", newline="") as f:
        return list(csv.DictReader(f))[:most]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        made = time.perf_counter()
        seeded = seeded_class(root, args.learners, seed=0, roster=True, own=True)
        made = time.perf_counter() - made
        build_once(root)  # reads every answer once
        times = [build_once(root) for _ in range(args.runs)]
        unstored = [build_once(root, read_again=True) for _ in range(args.runs)]
        page = (root / "report" / "index.html").stat().st_size
        with open(root / "report" / "mistakes.csv", newline="") as f:
            groups = sum(1 for _ in csv.DictReader(f))
        top = top_cards(root)
        notebooks = sum(1 for _ in (root / "autograded").glob("*/*/*.ipynb"))
    print(f"the class report (python {sys.version.split()[0]}, {os.cpu_count()} cores): {args.learners} learners, "
          f"{len(seeded.rows)} rows, {notebooks} graded notebooks (written in {made:.0f} s, not timed)")
    rows = []
    for what, measured in (("the answers read before (a regrade)", times),
                           ("every notebook read again (the first report)", unstored)):
        worst = max(measured)
        rows.append((what, args.runs, f"{statistics.median(measured):.1f}", f"{worst:.1f}",
                     "ok" if worst <= TARGET_SECONDS else f"OVER {TARGET_SECONDS:g} s"))
    table(rows, (f"make report, {args.learners} learners", "runs", "median s", "worst s",
                 f"target: <= {TARGET_SECONDS:g} s"))
    print(f"the page: {page / 2**20:.1f} MB, {groups} mistake groups; the top re-teach cards:")
    for row in top:
        print(f"  {row['exercise']}: {row['mistake']}, {row['learners']} learners ({float(row['share']):.0%} of "
              f"those who answered)")


if __name__ == "__main__":
    main()
