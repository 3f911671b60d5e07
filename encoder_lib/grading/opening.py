"""When the hint ladder's fourth step, the course's solution, opens: the teacher's setting, read by the learner's kernel.

The setting is one environment variable, ``ENCODER_COURSE_SOLUTIONS``, that
a class's hub sets for every learner's server (``c.Spawner.environment``,
written by ``python -m tools.classroom --solutions ...``):

- unset or empty: self-study, the solution opens after the third hint;
- ``on``: the same; ``off``: the teacher keeps it closed;
- a date and time, ISO 8601 (``2026-12-10T17:00:00+01:00``; ``Z`` is UTC,
  and so is a time without a zone; a date alone is its midnight): closed
  until then, open from then;
- per lesson, with commas between: ``01_attention=2026-12-10T17:00:00+01:00,
  02_multi_head_attention=off``, and one value without a lesson for the
  lessons not named (a lesson not named, where no such value is given, is
  ``off``: never open by mistake).

A wrong setting is an error that names the variable and what was expected
(``parse``); the ladder then keeps the solution closed and says why
(``Opening.problem``). The gate is for the honest learner: the solutions are
in the installed library's files, which a learner can read.
"""

import datetime
import os
import re
from dataclasses import dataclass

from .exercises import BY_LESSON

VARIABLE = "ENCODER_COURSE_SOLUTIONS"
EXPECTED = (f"{VARIABLE} must be 'on', 'off' or the time the course's solutions open (ISO 8601, such as "
            "2026-12-10T17:00:00+01:00; no zone is UTC), for every lesson or per lesson as "
            "01_attention=2026-12-10T17:00:00+01:00, with commas between")
ALL = "*"  # the key of the value for the lessons not named


@dataclass(frozen=True)
class Opening:
    """Whether a lesson's solutions are open now; when closed, the time they open (None: kept closed) and what is
    wrong with the setting, if that is why."""

    open: bool
    at: datetime.datetime = None
    problem: str = ""


def _value(text, setting):
    """``True`` (on), ``False`` (off) or the aware UTC time one value names; ValueError otherwise."""
    word = text.strip().lower()
    if word in ("on", "off"):
        return word == "on"
    iso = text.strip()[:-1] + "+00:00" if text.strip().endswith(("Z", "z")) else text.strip()
    try:
        when = datetime.datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError(f"{EXPECTED}; got {setting!r}: {text.strip()!r} is none of these") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.astimezone(datetime.timezone.utc)


def parse(setting):
    """``{lesson or "*": True, False or an aware UTC datetime}`` from the setting's text (None or empty: every lesson
    on). ValueError naming ``ENCODER_COURSE_SOLUTIONS`` and what was expected, for a value or lesson it does not
    know, or a lesson given twice."""
    if setting is not None and not isinstance(setting, str):
        raise ValueError(f"{EXPECTED}; got {setting!r}, not text")
    if setting is None or not setting.strip():
        return {ALL: True}
    found = {}
    for item in setting.split(","):
        lesson, _, value = item.rpartition("=") if re.match(r"\s*\w+\s*=", item) else ("", "", item)
        lesson = lesson.strip() or ALL
        if lesson != ALL and lesson not in BY_LESSON:
            raise ValueError(f"{EXPECTED}; got {setting!r}: {lesson!r} is not a lesson with exercises, one of "
                             f"{sorted(BY_LESSON)}")
        when = _value(value, setting)
        if lesson in found:
            raise ValueError(f"{EXPECTED}; got {setting!r}: {'every lesson' if lesson == ALL else lesson} is given "
                             "twice")
        found[lesson] = when
    return found


def opening(lesson, setting=None, now=None):
    """The ``Opening`` of ``lesson``'s solutions at ``now`` (an aware datetime; default: this moment), by ``setting``
    (default: the environment's ``ENCODER_COURSE_SOLUTIONS``). A wrong setting keeps them closed."""
    setting = os.environ.get(VARIABLE) if setting is None else setting
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now.tzinfo is None:
        raise ValueError(f"now must be an aware datetime (with its time zone), got {now!r}")
    try:
        values = parse(setting)
    except ValueError as exc:
        return Opening(False, problem=str(exc))
    value = values.get(lesson, values.get(ALL, False))
    if isinstance(value, bool):
        return Opening(value)
    return Opening(True) if now >= value else Opening(False, at=value)


def closed_note(gate):
    """What the fourth step says while ``gate`` (a closed ``Opening``) keeps the course's solution closed."""
    if gate.problem:
        return (f"**The course's solution** stays closed: your teacher's setting is wrong ({gate.problem}). "
                "Tell your teacher.")
    if gate.at is not None:
        return (f"**The course's solution** opens on {gate.at:%d %B %Y at %H:%M} UTC, your teacher's setting for "
                "this lesson: after that, the hint button shows it beside your code.")
    return "**The course's solution** is kept closed in this class by your teacher."
