"""Due dates, extensions and late penalties, as nbgrader keeps and computes them.

    python -m course_grader.deadlines --student ada --lesson 01_attention --due "2026-12-12 17:00:00 UTC"

A lesson's due date is nbgrader's, in the gradebook (none: never late); a learner's extension is a line of
``extensions.csv`` (``make extension``), recorded as nbgrader's; a hand-in's time is one the learner cannot set
(``exchange.HandInTime``); the penalty is nbgrader's plugin with the course's settings (``Penalties``), called as
``nbgrader autograde`` calls it. ``Deadlines.lateness`` gives each hand-in's seconds late and penalty, said in the
course's time zone (``course_config.time_zone``); docs/teaching/grading.md (step 3) says what each file holds.
"""

import argparse
import contextlib
import csv
import io
import sys
from dataclasses import dataclass
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from .exchange import utc_time
from .course_config import course_config, time_zone
from .files import csv_value, write_csv
from .gradebook import due_dates
from .ids import id_problem

EXTENSIONS = "extensions.csv"
EXTENSION_COLUMNS = ("student_id", "lesson", "due")


def parse_time(text, name="due"):
    """A time as nbgrader reads one (``2026-12-10 17:00:00 Europe/Paris``, ``2026-12-10T17:00:00+01:00``; no
    zone is UTC), as a naive UTC ``datetime``. ValueError naming ``name`` for anything else, and for a zone
    nbgrader would silently take as UTC."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name} must be a time such as '2026-12-10 17:00:00 Europe/Paris'; got {text!r}")
    if (quick := utc_time(text)) is not None:  # make extension's own format: no nbgrader to import
        return quick
    import dateutil.tz
    from nbgrader import utils

    parts = text.strip().split(" ")
    if len(parts) == 3 and not parts[2].lstrip("+-").isdigit() and dateutil.tz.gettz(parts[2]) is None:
        raise ValueError(f"{name}'s time zone {parts[2]!r} is not one nbgrader knows (Europe/Paris, UTC, "
                         f"America/New_York, ...)")
    try:
        return utils.parse_utc(text.strip())
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{name} must be a time such as '2026-12-10 17:00:00 Europe/Paris'; got {text!r} "
                         f"({exc})") from None


def read_extensions(root):
    """``{(student_id, lesson): due}`` from the course's ``extensions.csv`` (empty if there is none); ValueError
    naming the line of a bad one."""
    path = Path(root) / EXTENSIONS
    if not path.is_file():
        return {}
    found = {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != EXTENSION_COLUMNS:
            raise ValueError(f"{path}'s first line must be {','.join(EXTENSION_COLUMNS)}")
        for line, row in enumerate(reader, 2):
            try:
                found[csv_value(row["student_id"]), row["lesson"]] = parse_time(row["due"])
            except ValueError as exc:
                raise ValueError(f"{path} line {line}: {exc}") from None
    return found


def set_extension(root, student, lesson, due, lessons):
    """Give ``student`` until ``due`` (text, as ``parse_time`` reads it; empty: no extension) for ``lesson`` (one
    of ``lessons``), in ``extensions.csv``; returns the due date (or None). Other lines are kept as they were."""
    if id_problem(student):
        raise ValueError(f"student must be a learner's id, as the roster and submitted/ name them, got {student!r}: "
                         f"{id_problem(student)}")
    if lesson not in lessons:
        raise ValueError(f"lesson must be one of the course's lessons ({', '.join(lessons)}), got {lesson!r}")
    when = parse_time(due) if due else None
    found = read_extensions(root)
    found.pop((student, lesson), None)
    if when is not None:
        found[student, lesson] = when
    rows = [(s, l, f"{d:%Y-%m-%d %H:%M:%S} UTC") for (s, l), d in sorted(found.items())]
    write_csv(Path(root) / EXTENSIONS, EXTENSION_COLUMNS, rows)
    return when


@dataclass(frozen=True)
class Deadlines:
    """The course's due dates and extensions: when each learner's lesson was due."""

    due: dict  # lesson -> naive UTC
    extended: dict  # (student, lesson) -> naive UTC
    zone: object = None  # the course's time zone (``course_config.time_zone``), in which due dates are said

    @classmethod
    def read(cls, root):
        return cls(due_dates(root), read_extensions(root), time_zone(root))

    def due_for(self, student, lesson):
        """When ``student``'s ``lesson`` was due (their extension, else the lesson's due date), or None: a lesson
        without a due date is never late, whatever extension (nbgrader's is a time beyond the due date)."""
        if self.due.get(lesson) is None:
            return None
        return self.extended.get((student, lesson)) or self.due[lesson]

    def extension(self, student, lesson):
        """The extension as nbgrader records it (a ``timedelta`` beyond the lesson's due date), or None."""
        own, due = self.extended.get((student, lesson)), self.due.get(lesson)
        return own - due if own is not None and due is not None and own > due else None

    def seconds_late(self, student, lesson, handed_in):
        """How many seconds after its due date ``handed_in`` (naive UTC, or None: unknown) came; 0 if on time."""
        due = self.due_for(student, lesson)
        if handed_in is None or due is None:
            return 0.0
        return max(0.0, (handed_in - due).total_seconds())


    def lateness(self, student, lesson, handed_in, score, penalties, timed_by=""):
        """The ``Lateness`` of ``student``'s ``lesson`` handed in at ``handed_in`` (its hand-in time, naive UTC;
        None: unknown, never late; ``timed_by`` what that time is, in words) with ``score`` points: the penalty is
        ``penalties``' (a ``Penalties``, or a callable that makes one: called only for a late hand-in)."""
        seconds = self.seconds_late(student, lesson, handed_in)
        if seconds > 0 and callable(penalties):
            penalties = penalties()
        penalty = penalties.penalty(student, score, seconds) if seconds > 0 else 0.0
        return Lateness(seconds, penalty, self.extension(student, lesson), self.due_for(student, lesson),
                        timed_by or Lateness.timed_by, self.zone)


@dataclass(frozen=True)
class Lateness:
    """How late one hand-in came (``seconds``; 0: on time, or no due date, or no exchange time), the late penalty
    nbgrader's setting takes for it (points), the learner's extension as nbgrader records it (a ``timedelta``
    beyond the lesson's due date, or None) and when it was due for them (naive UTC, or None)."""

    seconds: float = 0.0
    penalty: float = 0.0
    extension: object = None
    due: object = None
    timed_by: str = "the time the exchange recorded"  # what the hand-in time is (exchange.HandInTime.by)
    zone: object = None  # the course's time zone (None: UTC)

    def __bool__(self):
        return self.seconds > 0

    def words(self):
        """``handed in 2 h 5 min late (due 2026-12-10 18:00 Europe/Paris), penalty 4``, as the feedback page says
        it, the due date in the course's time zone."""
        return f"handed in {late_words(self.seconds)}{in_zone(self.due, self.zone)}, penalty {self.penalty:g}"


def in_zone(when, zone):
    """`` (due 2026-12-10 18:00 Europe/Paris)``: a naive UTC time in ``zone`` (None: UTC); '' for None."""
    import datetime

    if when is None:
        return ""
    local = when.replace(tzinfo=datetime.timezone.utc).astimezone(zone or datetime.timezone.utc)
    return f" (due {local:%Y-%m-%d %H:%M} {zone or 'UTC'})"


def late_words(seconds):
    """``45 s late``, ``2 h 5 min late``, ``3 days 4 h late``: how late, as a learner reads it.

    >>> late_words(1), late_words(60), late_words(3 * 86400 + 4 * 3600 + 59)
    ('1 s late', '1 min late', '3 days 4 h late')
    """
    if seconds < 60:
        return f"{max(1, int(seconds))} s late"
    minutes = int(seconds // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} day{'s' * (days != 1)}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{minutes} min"] if minutes and not days else []
    return " ".join(parts) + " late"


class Penalties:
    """nbgrader's late penalty, with the course's settings: ``penalty(student, score, seconds_late)``."""

    def __init__(self, root):
        from nbgrader.preprocessors import AssignLatePenalties

        with contextlib.redirect_stderr(io.StringIO()):  # the plugin logs each penalty; the summary says them
            assigner = AssignLatePenalties(config=course_config(root))
            assigner.init_plugin()
        self.plugin = assigner.plugin_inst

    def penalty(self, student, score, seconds_late):
        """The points taken off a lesson's ``score`` for coming ``seconds_late`` late (0 when on time)."""
        if seconds_late <= 0:
            return 0.0
        with contextlib.redirect_stderr(io.StringIO()):
            taken = self.plugin.late_submission_penalty(student, score, seconds_late)
        return 0.0 if taken is None else float(min(max(taken, 0.0), score))


def main(argv=None):
    lessons = list(BY_LESSON)
    parser = argparse.ArgumentParser(prog="make extension", description="Give one learner a later due date for "
                                     "one lesson (extensions.csv); DUE empty takes the extension back.")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the course folder (default: here)")
    parser.add_argument("--student", required=True, help="the learner's id, as in submitted/<id>/")
    parser.add_argument("--lesson", required=True, help="the lesson, e.g. 01_attention")
    parser.add_argument("--due", default="", help="the new due date, e.g. '2026-12-12 17:00:00 Europe/Paris'")
    args = parser.parse_args(argv)
    try:
        when = set_extension(args.root, args.student, args.lesson, args.due, lessons)
    except ValueError as exc:
        print(f"make extension: {exc}", file=sys.stderr)
        return 2
    due, zone = due_dates(args.root).get(args.lesson), time_zone(args.root)
    said = f"{args.student} has until{in_zone(when, zone)[5:-1]} for {args.lesson}" if when else \
        f"{args.student} has no extension for {args.lesson}"
    print(said + (f" (the lesson is due{in_zone(due, zone)[5:-1]})" if due else
                  " (the lesson has no due date in the gradebook yet: nbgrader db assignment add ... --duedate=...)")
          + "; make grade applies it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
