"""What the class got wrong and what to re-teach tomorrow: ``report/index.html`` and ``report/mistakes.csv``.

    python -m course_grader.class_report [--root .] [--lessons 01_attention,02_...] [--lab-url URL]

Written by ``make grade`` when it has graded and by ``make report`` from what grading left
(``grades_by_exercise.csv``, the gradebook read with sqlite3, ``autograded/`` read once into
``report/.answers.json``), only where something it is made from changed (``report/.made-from``). What the page
shows, section by section, is docs/teaching/feedback.md's section 5; ``data.gather`` computes it once, ``page``
draws it (``first_screen`` its four answers), ``similarity`` finds who may have copied, ``examples`` chooses the
example answers no learner can choose, ``sections_page`` compares the sections.
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
from ..files import made_from, make_folder, write_csv, write_file
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
    written = all((folder / name).is_file() for name in ("index.html", "mistakes.csv"))
    if written and made_from(folder / INPUTS) == digest:
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
