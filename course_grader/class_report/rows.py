"""What grading left, read back: ``grades_by_exercise.csv``'s rows (``outputs.Result``), checked line by line,
the lessons counted and the roster's names."""

import csv
from pathlib import Path

from encoder_lib.grading.exercises import BY_LESSON

from .. import gradebook
from ..outputs import STATUSES, COLUMNS
from ..outputs import GRADER_POINTS, LATE, MISTAKE_JOIN, Result
from ..files import csv_value, plain_text

#: The columns an older ``make grade`` did not write (every one has ``COLUMNS``).
OPTIONAL = ("mistake", "diagnosis")


_unquoted = csv_value  # a field as ``csv_field`` wrote it, without the ``'`` it put before a formula


def _csv_number(text, path, line, column):
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{path} line {line}: {column} must be a number, got {plain_text(text)[:40]!r}") \
            from None


def _row(fields, path, line):
    """The ``Result`` of one CSV record (a dict), checked."""
    status = fields["status"]
    if status not in STATUSES:
        raise ValueError(f"{path} line {line}: status must be one of {', '.join(STATUSES)}; got "
                         f"{plain_text(status)[:40]!r}")
    mistakes = (m.strip() for m in (fields.get("mistake") or "").split(MISTAKE_JOIN.strip()))
    by_grader = (fields.get(GRADER_POINTS) or "").strip()
    late = fields.get(LATE)
    late = None if late is None else _csv_number(late.strip(), path, line, LATE) if late.strip() else 0.0
    return Result(fields["student_id"], fields["lesson"], fields["exercise"],
                         _csv_number(fields["points"], path, line, "points"),
                         _csv_number(fields["max_points"], path, line, "max_points"), status, note=fields["note"],
                         mistake=MISTAKE_JOIN.join(m for m in mistakes if m),
                         diagnosis=(fields.get("diagnosis") or "").strip(),
                         grader_points=_csv_number(by_grader, path, line, GRADER_POINTS) if by_grader else None,
                         late=late)


def read_rows(path):
    """``(rows, has_mistakes)``: the ``Result``s of a ``grades_by_exercise.csv``, and whether it names mistakes
    (an older ``make grade`` wrote no mistake and diagnosis columns). ValueError, naming the line, on a bad row."""
    path = Path(path)
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or any(c not in header for c in COLUMNS):
            raise ValueError(f"{path} is not a grades_by_exercise.csv: its first line must name the columns "
                             f"{','.join(COLUMNS)}; it is {plain_text(','.join(header or []))[:120]!r}")
        rows, seen = [], {}
        for line, record in enumerate(reader, 2):
            if not record:
                continue
            fields = {name: _unquoted(value) for name, value in zip(header, record)}
            if any(name not in fields for name in COLUMNS):
                raise ValueError(f"{path} line {line} has {len(record)} fields, not the {len(header)} of its header")
            row = _row(fields, path, line)
            key = (row.student_id, row.lesson, row.exercise)
            if key in seen:
                raise ValueError(f"{path} line {line} repeats the row of line {seen[key]} "
                                 f"({plain_text(' '.join(key))[:120]})")
            seen[key] = line
            rows.append(row)
    return rows, all(c in header for c in OPTIONAL)


def lesson_order(rows, lessons=None):
    """The lessons counted: ``lessons`` (checked against the course's), else every lesson the rows hold, in
    course order (lessons the course no longer has after it)."""
    known = list(BY_LESSON)
    if lessons is not None:
        lessons = list(lessons)
        unknown = [lesson for lesson in lessons if lesson not in known]
        if unknown:
            raise ValueError(f"lessons must name lessons of the course ({', '.join(known)}); got "
                             f"{', '.join(map(repr, unknown))}")
        return [lesson for lesson in known if lesson in lessons]
    present = dict.fromkeys(row.lesson for row in rows)
    return [lesson for lesson in known if lesson in present] + [lesson for lesson in present if lesson not in known]


def roster(root):
    """``{student_id: name}`` of the learners the gradebook names (first and last name, where it has them)."""
    return {sid: student.name for sid, student in gradebook.students(root).items() if student.name}


