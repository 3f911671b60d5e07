"""What the class got wrong and what to re-teach tomorrow: ``report/index.html`` and ``report/mistakes.csv``.

    python -m course_grader.class_report [--root .] [--lessons 01_attention,02_...] [--lab-url URL]

``make grade`` writes the report when it has graded; ``make report`` writes it
again from what grading left, without grading: ``grades_by_exercise.csv``
(each exercise's status, and the mistake or the diagnosis the grader named),
the gradebook (the roster's names, read with sqlite3) and ``autograded/``
(the answers as graded, read in two processes and kept in
``report/.answers.json`` by each notebook's size, time and inode). Where
nothing it is made from changed (``report_inputs``, kept in
``report/.made-from``), nothing is written.

The page (one file, readable offline, on a projector and on a phone; no
script, nothing fetched: its pictures are in the page) answers in its first
screen at 1280x720: a contents list of its sections, then a short table,
exercise by exercise, most points lost first (the points the class lost:
failed, not answered and not handed in; the learners failing; the mistake
that cost most learners). Then, long sections folded:

- the re-teach cards: for the named mistakes and the failures not yet
  named that cost the most learners points, the idea to explain again (the
  idea rung of the hint ladder: the mistake's own, else its exercise's) and
  links to the lesson's section that shows it: on the course's website
  where ``site/`` is built (``make site``), and in the teacher's JupyterLab
  (on a hub, or ``LAB_URL``, else JupyterLab's own address), never to a
  notebook's raw text;
- the exercises with the lowest pass rate among the learners who answered,
  and the learners who may need help (most exercises failed, unanswered or
  not handed in);
- who may have copied (``similarity``, ``copying_page``): learners whose
  answer to an exercise is the same and unusual in this class, highest score
  first, their answers side by side with what differs marked; a flag for the
  teacher to look at, never a penalty;
- per lesson, a histogram of the scores (what the answers earned, before
  any late penalty) and each exercise's counts: handed in, passed, failed,
  not answered, errors, timeouts, tampered;
- per exercise, its named mistakes and diagnoses by how many learners lost
  points to each, a bar chart of them, and the learners' ids behind a
  disclosure;
- the failures no catalogued mistake explains, grouped by their signature
  (the same exercise and the same measured diagnosis; groups whose answers
  or measured words are the same merged, ``examples.merge_unnamed``), titled
  by what was measured, in words, largest first, with one example answer
  each: what to add to the catalogue for the next class.

``mistakes.csv`` (``lesson,exercise,mistake,learners,share,example_student_id``)
holds the same groups with the same counts; ``share`` is of the learners who
answered the exercise. Every text a learner wrote (ids, notes, answers) is
escaped on the page and neutralised in the CSV (``write_csv``).
"""

import argparse
import hashlib
import sys
import time
from pathlib import Path

from .answers import CACHE, Answers
from .cards import lab_links
from .data import FromGradebook, gather
from .page import mistake_rows, page
from .rows import lesson_order, read_rows
from ..files import make_folder, write_csv, write_file
from ..course_config import counted_lessons
from ..version import code_files

FOLDER = "report"
#: What the page was last made from (``report_inputs``), beside it.
INPUTS = ".made-from"
MISTAKE_COLUMNS = ("lesson", "exercise", "mistake", "learners", "share", "example_student_id")


def report_inputs(root, csv_bytes, counted, links):
    """A digest of everything the report is made from: the CSV, the gradebook, the answers as graded (each
    notebook's size, time and inode), the lessons counted, the links, the course's secret and the code."""
    root = Path(root)
    digest = hashlib.sha256(csv_bytes)
    for name in ("gradebook.db", ".grading-secret", "extensions.csv"):
        path = root / name
        digest.update(b"\0" + (hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"-"))
    for path in sorted((root / "autograded").glob("*/*/*.ipynb")):
        info = path.lstat()
        digest.update(f"{path.relative_to(root)}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}\n".encode())
    digest.update(repr((counted, links)).encode())
    # the report's code and the exercises' hints, and its style sheet
    for path in [path for _, path in code_files(skip=())] + sorted(Path(__file__).parent.glob("*.css")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _unchanged(folder, digest):
    try:
        return (folder / INPUTS).read_text().strip() == digest and all(
            (folder / name).is_file() for name in ("index.html", "mistakes.csv"))
    except OSError:
        return False


def build(root, lessons=None, lab_url=None, rows=None):
    """Write ``report/index.html`` and ``report/mistakes.csv`` for the course at ``root``; returns the page's path.
    Nothing is written where nothing it is made from changed since it was (``report_inputs``).

    ``lessons``: the lessons counted (default: all the CSV holds); ``lab_url``: the teacher's JupyterLab
    (``lab_links``); ``rows``: ``(rows, has_mistakes)`` when the caller has them, else read from
    ``grades_by_exercise.csv``.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be the course folder, got {str(root)!r}, which is not a folder")
    csv_path = root / "grades_by_exercise.csv"
    if rows is None and not csv_path.is_file():
        raise FileNotFoundError(f"{csv_path} is missing: run `make grade` first")
    csv_bytes = csv_path.read_bytes() if rows is None else repr(rows).encode()
    all_rows, has_mistakes = rows or read_rows(csv_path)
    counted = lesson_order(all_rows, lessons)
    links = lab_links(root, lab_url)
    folder = make_folder(root / FOLDER)
    digest = report_inputs(root, csv_bytes, counted, links)
    if _unchanged(folder, digest):
        return folder / "index.html"
    rows = [row for row in all_rows if row.lesson in counted]
    made = gather(rows, counted, has_mistakes, FromGradebook.read(root, rows), links,
                  Answers.read(root, rows, cache=folder / CACHE))
    write_file(folder / "index.html", page(made))
    write_csv(folder / "mistakes.csv", MISTAKE_COLUMNS, mistake_rows(made))
    write_file(folder / INPUTS, digest + "\n")
    return folder / "index.html"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make report", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--lessons", default=None,
                        help="the lessons counted, separated by commas (default: c.EncoderCourse.lessons, else the "
                             "lessons released through nbgrader's exchange, else those someone handed in)")
    parser.add_argument("--lab-url", default=None,
                        help="your JupyterLab's address, for links that open a lesson in it "
                             "(default on a hub: /user/<you>/)")
    args = parser.parse_args(argv)
    lessons = [name.strip() for name in args.lessons.split(",") if name.strip()] if args.lessons else None
    started = time.perf_counter()
    try:
        lessons = counted_lessons(args.root.resolve(), lessons)[0]  # LESSONS=, the setting, else what was released
        written = build(args.root.resolve(), lessons, args.lab_url)
    except (ValueError, FileNotFoundError) as exc:
        print(f"make report: {exc}", file=sys.stderr)
        return 2
    print(f"the class report: {written} and {written.parent / 'mistakes.csv'} "
          f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
