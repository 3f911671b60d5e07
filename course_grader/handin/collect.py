"""`make collect` takes the hand-in service's hand-ins as it takes the exchange's: ``python -m
course_grader.handin.collect <lesson>``, after nbgrader's collect of the same lesson.

Each learner's latest hand-in to the service goes to ``submitted/<roster id>/<lesson>/`` where it is later than
what the exchange's collect put there (an earlier copy moved to ``.replaced/``), and make collect's record says
the service timed it (``exchange.hand_in_time``); `make grade` then takes its verdict (``store.reused``).
"""

import argparse
import hashlib
import os
import sys
from pathlib import Path

from .. import exchange, ids
from ..collect import install_files
from ..files import plain_text
from .store import Store

SOURCE = exchange.SERVICE


def take(root, lesson, out=print, students=None):
    """Collect ``lesson``'s hand-ins from the service into ``submitted/`` (``students``: theirs alone); returns how
    many were copied."""
    root = Path(root)
    store, submitted = Store(root), root / "submitted"
    record = exchange.read_record(submitted, lesson)
    copied = 0
    for _, lesson_folder in sorted(store.learners_lessons()):
        history = store.history_in(lesson_folder) if lesson_folder.name == lesson else []
        hand_in = history[-1] if history else None
        if hand_in is None or (students is not None and hand_in.student not in students):
            continue
        try:  # a folder in submitted/ is named by the roster's id as it is
            problem, data = ids.id_problem(hand_in.student), hand_in.notebook.read_bytes()
        except OSError as exc:
            problem = f"its notebook could not be read: {exc.strerror}"
        if problem:
            out(plain_text(f"not collected: {hand_in.student!r} {lesson} ({problem})"))
        elif _newer(hand_in, data, record):
            install_files(submitted, hand_in.student, lesson, {hand_in.notebook.name: data})
            record["hand_ins"][hand_in.student] = _entry(hand_in, data)
            out(plain_text(f"Collected from the hand-in service: {hand_in.student} {lesson} (handed in "
                           f"{hand_in.when:%Y-%m-%d %H:%M:%S} UTC)"))
            copied += 1
    exchange.write_record(submitted, lesson, record)
    out(f"collected {copied} hand-in{'s' * (copied != 1)} of {lesson} from the hand-in service")
    return copied


def _newer(hand_in, data, record):
    """Whether ``hand_in`` is to be collected: not this very notebook again, and later than the exchange's."""
    earlier = record["hand_ins"].get(hand_in.student) or {}
    exchange_time = exchange.read_time(str(earlier.get("exchange_time")))
    same = (earlier.get("files") or {}).get(hand_in.notebook.name) == hashlib.sha256(data).hexdigest()
    exchange_later = exchange_time is not None and exchange_time >= hand_in.when and earlier.get("source") != SOURCE
    return not same and not exchange_later


def _entry(hand_in, data):
    return {"source": SOURCE, "exchange_time": exchange.utc_text(hand_in.when), "stamp": None,
            "files": {hand_in.notebook.name: hashlib.sha256(data).hexdigest()},
            "collected_at": exchange.utc_text(exchange.utc_now())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lesson")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--student", default=None, help="these learners' alone (commas between)")
    args = parser.parse_args(argv)
    os.umask(0o077)
    try:
        take(args.root, args.lesson, students=args.student and set(args.student.split(",")))
    except exchange.RecordUnreadable as exc:
        sys.exit(f"{exc}: move it away to collect anew (nothing was collected)")


if __name__ == "__main__":
    main()
