"""What a learner answered, kept in their course folder, and which questions come back when (spaced review).

The record is one JSON file, ``.encoder-course-answers.json``, in the course's
folder: the folder that holds the lessons' folders (``01_attention/`` and
the rest), found from the notebook's working directory; ``ENCODER_COURSE_ANSWERS``
names another file. For each question it keeps the lesson, the key and the
words of the answer as the widget computed them when it was asked (so that a
review needs no widget), and the times of the last answers, right or wrong.

When a question comes back is FSRS's (the Free Spaced Repetition Scheduler,
the ``fsrs`` package), replayed over the question's kept answers: a right one
is rated Good, a wrong one Again, each at the time it was given. FSRS keeps,
for each question, how well the learner seems to know it (its stability and
difficulty) and sets the next wait so that the learner should still know it
then with probability ``DESIRED_RETENTION``: a question missed the first time
comes back a day later, one right the first time 2 days later, and each right
answer when it comes back makes the next wait longer (``waits``), a year at
most; a miss makes it shorter. The website's review (``tools/site/review.py``)
schedules with ts-fsrs, the same FSRS-6 with the same parameters, in the
browser; ``tests/test_review_schedule.py`` holds the two to one schedule.

The file is the learner's own and is never lost: one that cannot be read is
kept beside it under another name, and a new one is started.
"""

import datetime
import json
import math
import os
import re
import time
import warnings
from pathlib import Path

from fsrs import Card, Rating, Scheduler

FILE_NAME = ".encoder-course-answers.json"
ENV = "ENCODER_COURSE_ANSWERS"
#: A record larger than this is not read (a course's 30 questions take a few kB).
MOST_BYTES = 2**20
#: The answers kept per question: the latest ones.
KEPT = 20
DAY = 86_400.0
#: FSRS's settings, which the website's review gives ts-fsrs too: the chance of still knowing a question when it
#: comes back, the longest wait (days), and no learning steps of minutes nor random fuzz (a question asked above a
#: lesson's widget is reviewed over days, and the notebook and the website must agree to the day).
DESIRED_RETENTION = 0.9
MAXIMUM_DAYS = 365
SCHEDULER = Scheduler(desired_retention=DESIRED_RETENTION, learning_steps=(), relearning_steps=(),
                      maximum_interval=MAXIMUM_DAYS, enable_fuzzing=False)
#: The latest time an answer may carry (the year 5138): a record's times outside [0, LATEST] are not answers.
LATEST = 1e11


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
            and all(isinstance(a, list) and len(a) == 2 and isinstance(a[0], (int, float))
                    and not isinstance(a[0], bool) and math.isfinite(a[0]) and 0 <= a[0] <= LATEST
                    and isinstance(a[1], bool) for a in entry["answers"]))


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


def due_at(answers):
    """When a question answered ``answers`` (``[[time, right], ...]``, oldest first) comes back, in seconds since
    the epoch: FSRS's due time after replaying them (None for no answers)."""
    if not answers:
        return None
    card = Card()
    for at, right in answers:
        card, _ = SCHEDULER.review_card(card, Rating.Good if right else Rating.Again,
                                        datetime.datetime.fromtimestamp(at, datetime.timezone.utc))
    return card.due.timestamp()


def waits(rights, start=0.0):
    """The days a question waits after each of ``rights`` (True: right), each answer given the moment the last one
    came due: ``waits([True] * 3)`` is ``[2.0, 11.0, 46.0]``. What the pages say of the schedule comes from it."""
    answers, found = [], []
    for right in rights:
        at = start if not answers else due_at(answers)
        answers.append([at, bool(right)])
        found.append((due_at(answers) - at) / DAY)
    return found


def due(questions, now=None):
    """The ids of the recorded ``questions`` that are due at ``now``: the last missed first, then the longest due."""
    now = time.time() if now is None else now
    waiting = [(e["answers"][-1][1], when, qid) for qid, e in questions.items()
               if (when := due_at(e["answers"])) is not None and when <= now]
    return [qid for _, _, qid in sorted(waiting)]


def next_due(questions):
    """The earliest time a recorded question comes back, or None."""
    times = [due_at(e["answers"]) for e in questions.values()]
    return min((t for t in times if t is not None), default=None)
