"""What `make release-feedback` sends (issue 42, item 4): the files it writes, per learner and in all, for a first
release, a re-release of an unchanged class, a regrade of one learner and a regraded lesson; and what a learner's
``nbgrader fetch_feedback`` gets for one lesson and for all.

    .venv/bin/python -m benchmarks.bench_release [--learners 20] [--lessons 4]

In a scratch course folder with nbgrader's exchange beside it
(``tests/grader/release_class.py``): every learner hands every lesson in
through the exchange, pages are written as ``make grade`` writes them, and
`make release-feedback`'s command runs in a fresh process. A file is
"written" when it is new or its inode or modification time changed, in the
course folder and in the exchange. Target: a re-release writes nothing for
a learner whose pages did not change, and a learner fetching every lesson
gets each lesson's table once.
"""

import argparse
import tempfile
import time
from pathlib import Path

from tests.grader.release_class import build, counts, fetch, grade, lessons_of, release

from ._report import table


def timed_release(root, exchange, learners):
    """``(seconds, files written, learners whose files in feedback/ were written, released, unchanged)``."""
    started = time.perf_counter()
    said, written = release(root, exchange)
    seconds = time.perf_counter() - started
    touched = {Path(p).relative_to(root / "feedback").parts[0] for p in written if p.startswith(f"{root}/feedback/")}
    return seconds, len(written), len(touched & set(learners)), *counts(said)


def measure(scratch, count, lesson_count):
    learners = [f"learner{i:03d}" for i in range(count)]
    lessons = lessons_of(lesson_count)
    first, second = list(lessons)[:2]
    root, exchange = build(scratch, learners, lessons)
    rows = []
    for what, failing in (("first release", set()), ("again, nothing changed", set()),
                          ("one learner regraded (one lesson)", {(learners[0], first)}),
                          (f"{second} regraded: half the class's changed",
                           {(learners[0], first)} | {(s, second) for s in learners[::2]})):
        grade(root, learners, lessons, failing)
        rows.append((what, *timed_release(root, exchange, learners)))
    table([(what, f"{seconds:.1f}", written, f"{written / count:.1f}", touched, sent, same)
           for what, seconds, written, touched, sent, same in rows],
          ("release", "seconds", "files written", "per learner", "learners touched", "pages released", "unchanged"))
    fetched = []
    for which in ([first], list(lessons)):
        pages = fetch(scratch, learners[1], which).values()
        fetched.append((f"fetch_feedback {' '.join(which) if len(which) == 1 else f'(all {len(which)} lessons)'}",
                        len(pages), sum(len(p.encode()) for p in pages), sum(p.count("<h2>") for p in pages)))
    table(fetched, ("a learner's command", "files", "bytes", f"lesson tables in them (of {len(lessons)})"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--lessons", type=int, default=4)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        measure(Path(scratch), args.learners, args.lessons)


if __name__ == "__main__":
    main()
