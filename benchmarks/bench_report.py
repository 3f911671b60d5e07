"""How fast the class report is built: `make report` for a class of 500, from what grading leaves, without grading.

    .venv/bin/python -m benchmarks.bench_report [--learners 500] [--runs 3]

Target: at most 10 s for 500 learners on a 2-core machine.

In a temporary folder, ``tests/report_class.py`` writes what `make grade`
leaves for a seeded class (no grading): grades_by_exercise.csv with the
mistake and diagnosis columns, the gradebook with every learner's name, and
every handed-in lesson's notebook as graded in autograded/ (the teachers'
notebooks with the learner's answers; each answer cell starts with a comment
of its learner's, so that no two texts are the same, as in a real class).
35% of the learners answer everything right, 10% hand in blank notebooks,
20% stop after a few lessons, 25% make one to three catalogued mistakes and
10% one of the wrong answers no mistake explains. The answers' fingerprints
(the identical-answers flag) are in each lesson's grading.json, as the
grader stores them; a second series of runs has them deleted, so that every
notebook is read and normalised again, as after an older make grade. Each run is
`python -m encoder_lib.grading.teacher.class_report` in a fresh process, as `make
report` runs it: reading everything, grouping, normalising every answer for
the identical-answers flag, drawing the pictures, writing the page and
mistakes.csv. `benchmarks/bench_grading.py` prints the same time for a
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

from tests.report_class import seeded_class

from ._report import table

TARGET_SECONDS = 10.0


def build_once(root):
    """Seconds for one `make report` in a fresh process."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "encoder_lib.grading.teacher.class_report", "--root", str(root)], check=True,
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
        seeded = seeded_class(root, args.learners, seed=0, roster=True, own=True, stored=True)
        made = time.perf_counter() - made
        times = [build_once(root) for _ in range(args.runs)]
        for stored in root.glob("autograded/*/*/grading.json"):
            stored.unlink()
        unstored = [build_once(root) for _ in range(args.runs)]
        page = (root / "report" / "index.html").stat().st_size
        with open(root / "report" / "mistakes.csv", newline="") as f:
            groups = sum(1 for _ in csv.DictReader(f))
        top = top_cards(root)
        notebooks = sum(1 for _ in (root / "autograded").glob("*/*/*.ipynb"))
    print(f"the class report (python {sys.version.split()[0]}, {os.cpu_count()} cores): {args.learners} learners, "
          f"{len(seeded.rows)} rows, {notebooks} graded notebooks (written in {made:.0f} s, not timed)")
    rows = []
    for what, measured in (("as make grade leaves it (fingerprints stored)", times),
                           ("every notebook read again (an older make grade)", unstored)):
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
