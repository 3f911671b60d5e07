"""What a learner answered, kept in their course folder, and which questions come back when (spaced review).

The record is one JSON file, ``.encoder-course-answers.json``, in the course's
folder: the folder that holds the lessons' folders (``01_attention/`` and
the rest), found from the notebook's working directory; ``ENCODER_COURSE_ANSWERS``
names another file. For each question it keeps the lesson, the key and the
words of the answer as the widget computed them when it was asked (so that a
review needs no widget), and the times of the last answers, right or wrong.

A question comes back ``INTERVAL_DAYS[n]`` days after its last answer, ``n``
being how many answers in a row were right (0: the last was wrong); after
as many right answers in a row as there are intervals, never. The website
does the same in the browser (``tools/site``), from the same intervals.

The file is the learner's own and is never lost: one that cannot be read is
kept beside it under another name, and a new one is started.
"""

import json
import os
import re
import time
import warnings
from pathlib import Path

from .bank import INTERVAL_DAYS

FILE_NAME = ".encoder-course-answers.json"
ENV = "ENCODER_COURSE_ANSWERS"
#: A record larger than this is not read (a course's 30 questions take a few kB).
MOST_BYTES = 2**20
#: The answers kept per question: the latest ones.
KEPT = 20
DAY = 86_400.0


def record_path():
    """The record's file: ``$ENCODER_COURSE_ANSWERS``, else the course folder's ``.encoder-course-answers.json``."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    here = Path.cwd()
    return (here.parent if re.match(r"\d\d_", here.name) else here) / FILE_NAME


def read(path=None):
    """``{question id: entry}`` from the record (empty if there is none); an unreadable one is set aside."""
    path = Path(path) if path is not None else record_path()
    try:
        if path.stat().st_size > MOST_BYTES:
            raise ValueError(f"larger than {MOST_BYTES} bytes")
        found = json.loads(path.read_text(encoding="utf-8"))
        questions = found["questions"] if isinstance(found, dict) else None
        if not isinstance(questions, dict):
            raise ValueError("no questions in it")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        kept = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(path, kept)
        except OSError:
            kept = path
        warnings.warn(f"your answers' record {path} could not be read ({exc}); it is kept as {kept}, and a new one "
                      "is started", stacklevel=2)
        return {}
    return {qid: entry for qid, entry in questions.items() if _valid(entry)}


def _valid(entry):
    return (isinstance(entry, dict) and isinstance(entry.get("lesson"), str) and isinstance(entry.get("why"), str)
            and isinstance(entry.get("answers"), list)
            and all(isinstance(a, list) and len(a) == 2 and isinstance(a[0], (int, float)) and isinstance(a[1], bool)
                    for a in entry["answers"]))


def add(question, answer, right, *, at=None, path=None):
    """Record that ``question`` (a ``Question``, whose computed ``answer`` is an ``Answer``) was answered, ``right``
    or not, at ``at`` (seconds since the epoch; now if None)."""
    if not isinstance(right, bool):
        raise TypeError(f"right must be True or False, got {right!r}")
    path = Path(path) if path is not None else record_path()
    questions = read(path)
    entry = questions.get(question.id, {"answers": []})
    entry.update(lesson=question.lesson, key=answer.key, why=answer.why,
                 choices=[[key, label] for key, label in (answer.choices or {}).items()])
    entry["answers"] = (entry["answers"] + [[time.time() if at is None else float(at), right]])[-KEPT:]
    questions[question.id] = entry
    temporary = path.with_name(path.name + ".writing")
    temporary.write_text(json.dumps({"version": 1, "questions": questions}, indent=1), encoding="utf-8")
    os.replace(temporary, path)


def streak(answers):
    """How many of the last ``answers`` (``[[time, right], ...]``) were right in a row."""
    count = 0
    for _, right in reversed(answers):
        if not right:
            break
        count += 1
    return count


def due_at(answers):
    """When a question answered ``answers`` comes back (seconds since the epoch), or None: never again."""
    if not answers:
        return None
    run = streak(answers)
    return None if run >= len(INTERVAL_DAYS) else answers[-1][0] + INTERVAL_DAYS[run] * DAY


def due(questions, now=None):
    """The ids of the recorded ``questions`` that are due at ``now``: the last missed first, then the longest due."""
    now = time.time() if now is None else now
    waiting = [(streak(e["answers"]) > 0, due_at(e["answers"]), qid) for qid, e in questions.items()
               if due_at(e["answers"]) is not None and due_at(e["answers"]) <= now]
    return [qid for _, _, qid in sorted(waiting)]


def next_due(questions):
    """The earliest time a recorded question comes back, or None."""
    times = [due_at(e["answers"]) for e in questions.values()]
    return min((t for t in times if t is not None), default=None)
