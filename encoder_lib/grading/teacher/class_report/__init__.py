"""What the class got wrong and what to re-teach tomorrow: ``report/index.html`` and ``report/mistakes.csv``.

    python -m encoder_lib.grading.teacher.class_report [--root .] [--lessons 01_attention,02_...] [--lab-url URL]

``make grade`` writes the report when it has graded; ``make report`` writes it
again from what grading left, without grading: ``grades_by_exercise.csv``
(each exercise's status, and the mistake or the diagnosis the grader named),
the gradebook (the roster's names, read with sqlite3) and ``autograded/``
(the answers as graded, for the example answers; for identical answers the
fingerprints the grader stored in each ``grading.json``, else the notebook,
read in two processes).

The page (one file, readable offline, on a projector and on a phone; no
script, nothing fetched: its pictures are in the page):

- the re-teach cards first: for the named mistakes and the failures not yet
  named that cost the most learners points, the idea to explain again (the
  idea rung of the hint ladder: the mistake's own, else its exercise's) and
  links to the lesson's section that shows it: relative, into
  ``../notebooks/``, and on a hub into the teacher's JupyterLab;
- the exercises with the lowest pass rate among the learners who answered,
  and the learners who may need help (most exercises failed, unanswered or
  not handed in);
- per lesson, a histogram of the scores (what the answers earned, before
  any late penalty) and each exercise's counts: handed in, passed, failed,
  not answered, errors, timeouts, tampered;
- per exercise, its named mistakes and diagnoses by how many learners lost
  points to each, a bar chart of them, and the learners' ids behind a
  disclosure;
- the failures no catalogued mistake explains, grouped by their signature
  (the same exercise and the same measured diagnosis), largest first, with
  one example answer each: what to add to the catalogue for the next class;
- the learners whose non-trivial answers are the same once whitespace,
  comments and names are normalised: a flag for the teacher to look at,
  never a penalty.

``mistakes.csv`` (``lesson,exercise,mistake,learners,share,example_student_id``)
holds the same groups with the same counts; ``share`` is of the learners who
answered the exercise. Every text a learner wrote (ids, notes, answers) is
escaped on the page and neutralised in the CSV (``write_csv``).
"""

import argparse
import sys
import time
from pathlib import Path

from .answers import Answers
from .cards import lab_links
from .data import FromGradebook, gather
from .page import mistake_rows, page
from .rows import lesson_order, read_rows
from ..files import make_folder, write_csv, write_file
from ..course_config import lessons_set

FOLDER = "report"
MISTAKE_COLUMNS = ("lesson", "exercise", "mistake", "learners", "share", "example_student_id")


def build(root, lessons=None, lab_url=None, rows=None):
    """Write ``report/index.html`` and ``report/mistakes.csv`` for the course at ``root``; returns the page's path.

    ``lessons``: the lessons counted (default: all the CSV holds); ``lab_url``: the teacher's JupyterLab
    (``lab_links``); ``rows``: ``(rows, has_mistakes)`` when the caller has them, else read from
    ``grades_by_exercise.csv``.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be the course folder, got {str(root)!r}, which is not a folder")
    csv_path = root / "grades_by_exercise.csv"
    if rows is None:
        if not csv_path.is_file():
            raise FileNotFoundError(f"{csv_path} is missing: run `make grade` first")
        rows = read_rows(csv_path)
    all_rows, has_mistakes = rows
    counted = lesson_order(all_rows, lessons)
    rows = [row for row in all_rows if row.lesson in counted]
    made = gather(rows, counted, has_mistakes, FromGradebook.read(root, rows), lab_links(root, lab_url),
                  Answers.read(root, rows))
    folder = make_folder(root / FOLDER)
    write_file(folder / "index.html", page(made))
    write_csv(folder / "mistakes.csv", MISTAKE_COLUMNS, mistake_rows(made))
    return folder / "index.html"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="make report", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--lessons", default=None, help="the lessons counted, separated by commas (default: all)")
    parser.add_argument("--lab-url", default=None,
                        help="your JupyterLab's address, for links that open a lesson in it "
                             "(default on a hub: /user/<you>/)")
    args = parser.parse_args(argv)
    lessons = [name.strip() for name in args.lessons.split(",") if name.strip()] if args.lessons else None
    started = time.perf_counter()
    try:
        lessons = lessons or lessons_set(args.root.resolve())  # LESSONS=, else the course's setting
        written = build(args.root.resolve(), lessons, args.lab_url)
    except (ValueError, FileNotFoundError) as exc:
        print(f"make report: {exc}", file=sys.stderr)
        return 2
    print(f"the class report: {written} and {written.parent / 'mistakes.csv'} "
          f"({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
