"""What the teacher gets from `make grade` besides the pages: the CSV files and the summary it prints.

``grades_by_exercise.csv`` (its row, ``Result``, is also what ``make report`` reads back), ``grades_lms.csv`` and
each section's ``grades_lms_<section>.csv`` (for Canvas's or Moodle's gradebook import); docs/teaching/grading.md
(step 3) and feedback.md (section 6) say what each column holds. Every text a learner wrote is written as plain
text, every file whole (``files``).
"""

import dataclasses
from collections import Counter
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from . import gradebook
from .downloads import CANVAS, platform_hand_ins
from .files import plain_text, write_csv
from .sections import SETTING as SECTION_SETTING, file_name as section_file, read_sections
from .submissions import NOTEBOOK

COLUMNS = ("student_id", "lesson", "exercise", "points", "max_points", "status", "note")
#: Written after ``COLUMNS`` (an older grader did not): what the feedback named, for ``make report``.
FEEDBACK_COLUMNS = ("mistake", "diagnosis")
#: Written last: the grader's own points, where the teacher marked the exercise by hand (``by_hand``), else empty.
GRADER_POINTS = "grader_points"
#: Written after ``GRADER_POINTS``: the seconds the lesson came late (``deadlines``), else empty.
LATE = "late"
#: How the ``mistake`` column joins the names of several mistakes, and ``diagnosis`` several keys.
MISTAKE_JOIN, DIAGNOSIS_JOIN = " + ", " | "
#: What an exercise's row may say of it.
STATUSES = ("passed", "failed", "not answered", "missing", "error", "timeout", "memory", "tampered")


@dataclass(frozen=True)
class Result:
    """One row of grades_by_exercise.csv: what the grader gives it, and what ``make report`` reads back."""

    student_id: str
    lesson: str
    exercise: str
    points: float
    max_points: float
    status: str
    _: KW_ONLY
    note: str = ""
    mistake: str = ""  # the catalogued mistakes the feedback named, joined by MISTAKE_JOIN
    diagnosis: str = ""  # else the keys of what its diagnosis measured, joined by DIAGNOSIS_JOIN
    grader_points: float = None  # the grader's own points where the teacher marked it by hand (``by_hand``)
    late: float = None  # read back from the CSV: the seconds the lesson came late (0: on time; None: no column)

    @property
    def mistakes(self):
        """The names in ``mistake``, in order."""
        return tuple(m.strip() for m in self.mistake.split(MISTAKE_JOIN.strip()) if m.strip())

    @property
    def auto_points(self):
        """The grader's points, before anything marked by hand."""
        return self.points if self.grader_points is None else self.grader_points

    @property
    def lost_points(self):
        return self.points < self.max_points


# ---------------------------------------------------------------- the CSV file


def write_csvs(root, results, late=None):
    """grades_by_exercise.csv, with ``late`` (``{(student, lesson): deadlines.Lateness}``) as its last column."""
    late = late or {}
    write_csv(Path(root) / "grades_by_exercise.csv", COLUMNS + FEEDBACK_COLUMNS + (GRADER_POINTS, LATE),
              [(r.student_id, r.lesson, r.exercise, r.points, r.max_points, r.status, r.note, r.mistake, r.diagnosis,
                "" if r.grader_points is None else r.grader_points,
                int(round(late[r.student_id, r.lesson].seconds)) if late.get((r.student_id, r.lesson)) else "")
               for r in results])


def by_hand(results, root):
    """``results`` with what the teacher marked by hand in formgrader (``gradebook.manual_marks``): their score
    (else the grader's) plus extra credit as the points, the grader's own kept in ``grader_points``, and a note
    that says so, with their comment, for the CSV and the feedback page."""
    marks = gradebook.manual_marks(root)
    if not marks:
        return results
    marked = []
    for r in results:
        manual = marks.get((r.student_id, r.lesson, r.exercise))
        if manual:
            points = (r.points if manual.points is None else manual.points) + (manual.extra_credit or 0.0)
            said = []
            if manual.points is not None or manual.extra_credit:
                extra = f", with {manual.extra_credit:g} extra credit" if manual.extra_credit else ""
                said.append(f"marked by hand: {points:g} of {r.max_points:g} points{extra} (the grader gave "
                            f"{r.points:g})")
            if manual.comment:
                said.append(f"your teacher's comment: {plain_text(manual.comment)}")
            note = "; ".join(said) + (f". {r.note}" if r.note else "")
            r = dataclasses.replace(r, points=float(points), note=note, grader_points=r.points)
        marked.append(r)
    return marked


#: grades_lms.csv's first columns, as Canvas's gradebook export has them (its import needs them, in any order;
#: ``ID`` is Canvas's own number, from the record of a Canvas hand-in, else empty, so that Canvas matches by ``SIS
#: User ID`` or ``SIS Login ID``), then the e-mail Moodle can match by. A lesson collected from a Canvas
#: assignment is its column ``<assignment's name> (<its id>)``, as Canvas's export names it, which its import fills.
LMS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Email address")
#: The total's column: read-only in Canvas (ignored by its import), a grade item to map or skip in Moodle's.
LMS_TOTAL = "Final Points"
#: The first field of the second row of Canvas's gradebook export (`make grade` writes it unless
#: ``POINTS_POSSIBLE=0``): each column's points possible, which Canvas's import reads as the new assignments' points.
POINTS_POSSIBLE = "    Points Possible"


def lms_rows(results, lessons, roster, penalties=None, sections=None, canvas=None):
    """grades_lms.csv's rows: one per learner (in the order of ``results``), with the roster's name ("Last,
    First" as Canvas writes it; the id where the roster has no name), Canvas's ids where a hand-in came from it
    (``canvas``: ``{student: (user id, SIS User ID, SIS Login ID)}``; else the id as SIS User ID and Login),
    section (``sections``) and e-mail, each lesson's points (less the late penalty the gradebook recorded, at
    least 0) and the total."""
    points, learners = {}, {}
    for r in results:
        learners.setdefault(r.student_id, None)
        if r.exercise != NOTEBOOK and r.lesson in lessons:
            points[r.student_id, r.lesson] = points.get((r.student_id, r.lesson), 0.0) + r.points
    rows = []
    for student in learners:
        known = roster.get(student)
        name = ", ".join(p for p in (known.last_name, known.first_name) if p) if known else ""
        scores = [max(0.0, points.get((student, lesson), 0.0) - (penalties or {}).get((student, lesson), 0.0))
                  for lesson in lessons]
        user, sis, login = (canvas or {}).get(student, ("", "", ""))
        rows.append((name or student, user, sis or student, login or student, (sections or {}).get(student, ""),
                     known.email if known else "", *scores, sum(scores)))
    return rows


def points_possible_row(results, lessons):
    """Canvas's second row of its gradebook export: each lesson's points possible, and the total's."""
    most = {}
    for r in results:
        if r.exercise != NOTEBOOK and r.lesson in lessons:
            most[r.lesson, r.exercise] = max(most.get((r.lesson, r.exercise), 0.0), r.max_points)
    per_lesson = [sum(points for (lesson, _), points in most.items() if lesson == wanted) for wanted in lessons]
    return (POINTS_POSSIBLE, "", "", "", "", "", *per_lesson, sum(per_lesson))


def write_lms_csv(root, results, lessons, penalties=None, points_possible=False):
    """``grades_lms.csv``, for a learning platform's gradebook import (``lms_rows``), with the gradebook's roster
    and ``penalties`` (``{(student, lesson): points}``; by default the late penalties the gradebook recorded);
    with ``points_possible``, Canvas's "Points Possible" row first (`make grade`'s default; ``POINTS_POSSIBLE=0``:
    without)."""
    if penalties is None:
        penalties = {key: late.penalty for key, late in gradebook.late(root).items() if late.penalty}
    sections = read_sections(root)
    hand_ins, assignments = platform_hand_ins(root, lessons)
    canvas = {student: (h.get("platform_id") or "", h.get("sis") or "", h.get("login") or "")
              for (student, _), h in hand_ins.items() if h["source"] == CANVAS}
    rows = lms_rows(results, list(lessons), gradebook.students(root), penalties, sections, canvas)
    first = [points_possible_row(results, list(lessons))] if points_possible else []
    columns = LMS_COLUMNS + tuple(f"{assignments[l][1] or l} ({assignments[l][0]})" if l in assignments else l
                                  for l in lessons) + (LMS_TOTAL,)
    write_csv(Path(root) / "grades_lms.csv", columns, first + rows)
    for old in Path(root).glob("grades_lms_*.csv"):  # a section's file of an earlier run: the sections may differ
        old.unlink()
    by_file = {}
    for section in sorted(set(sections.values())):
        if by_file.setdefault(section_file(section), section) != section:
            raise ValueError(f"sections {by_file[section_file(section)]!r} and {section!r} would write one file, "
                             f"{section_file(section)}: rename one in {SECTION_SETTING}")
        mine = [row for row in rows if row[4] == section]
        write_csv(Path(root) / section_file(section), columns, first + mine)


# ---------------------------------------------------------------- the summary


def _counts_line(summary):
    minutes, seconds = divmod(summary["seconds"], 60)
    return (f"graded {summary['learners']} learners, {summary['lessons']} lessons each: "
            f"{summary['handed_in']} handed in, {summary['missing']} missing; "
            f"{summary['regraded']} graded now, {summary['reused']} unchanged since the last run"
            + (f", {summary['from_service']} graded when handed in (the hand-in service)"
               if summary.get("from_service") else "") +
            f"; {int(minutes)} min {seconds:.0f} s"
            + (f" with {summary['jobs']} worker{'s' * (summary['jobs'] > 1)}" if summary["jobs"] else ""))


def _choices_lines(summary):
    """What the teacher chose: the lessons set, and the learners and lessons graded now."""
    lines = []
    if summary.get("set_lessons"):
        lines.append(f"lessons counted: {', '.join(summary['set_lessons'])}: the only ones graded and counted in "
                     f"the totals, the CSV files (grades.csv too), the feedback pages and the report")
    if summary.get("only_students") or summary.get("only_lessons"):
        chosen = ([f"learner{'s' * (len(summary['only_students']) > 1)} {', '.join(summary['only_students'])}"]
                  if summary.get("only_students") else []) + \
            ([f"lesson{'s' * (len(summary['only_lessons']) > 1)} {', '.join(summary['only_lessons'])}"]
             if summary.get("only_lessons") else [])
        lines.append(plain_text(
            f"graded now: only {', '.join(chosen)} (STUDENT=, LESSON=); every other learner's and lesson's "
            f"results are as stored in autograded/ ({summary.get('kept', 0)} kept"
            + (f", {summary['not_graded']} never graded, shown as not graded yet" if summary.get("not_graded") else "")
            + "); every file below is written for the whole class"))
    return lines


def _times_lines(summary):
    """How late hand-ins were found, and which had a time the learner's stamp did not give."""
    lines = []
    if summary.get("late"):
        lines.append(f"{summary['late']} hand-in{'s' * (summary['late'] > 1)} came after the due date (or the "
                     f"learner's extension, extensions.csv), by the hand-in's time: flagged in the late column of "
                     f"grades_by_exercise.csv, penalised as nbgrader's late-penalty setting says (grades.csv, "
                     f"grades_lms.csv) and said on the feedback pages")
    if summary.get("by_exchange"):
        lines.append(f"{summary['by_exchange']} collected hand-in{'s' * (summary['by_exchange'] > 1)} timed by the "
                     f"exchange's own change time, not timestamp.txt (missing, unreadable or earlier: each named "
                     f"below); grades.csv's timestamp is the time that counted")
    if summary.get("untimed"):
        lines.append(f"{summary['untimed']} hand-in{'s' * (summary['untimed'] > 1)} of a lesson with a due date "
                     f"had no timestamp.txt and no record of make collect (copied in by hand): never counted late")
    return lines


#: The most lines any one list of the summary names: a class of 2,000 (or a flood of junk folders) gives counts and
#: the first few, and where the rest are.
MOST_NAMED = 50


def _bounded(title, named, rest):
    """``title (count):`` then the first ``MOST_NAMED`` of ``named`` and, past them, how many more and where."""
    lines = [f"{title} ({len(named)}):", *(plain_text(f"  {line}") for line in named[:MOST_NAMED])]
    if len(named) > MOST_NAMED:
        lines.append(f"  ... and {len(named) - MOST_NAMED} more: {rest}")
    return lines


def _named_lines(results, summary):
    """What matters first: what the machine failed on (nothing was written), then each error, timeout, memory and
    tampering by learner, lesson and exercise, then what was found in submitted/ (and what make collect refused
    before what it skipped); each list bounded (``_bounded``)."""
    lines = []
    if summary.get("machine"):
        lines += _bounded("NOT GRADED because the grader's machine failed, not the learners (graded again on the "
                          "next run)", [f"{student} {lesson}: {why}" for student, lesson, why in summary["machine"]],
                          "each is graded again by the next `make grade`")
    for status in ("error", "timeout", "memory", "tampered"):
        named = [f"{r.student_id} {r.lesson} {r.exercise}: {r.note}" for r in results if r.status == status]
        if named:
            lines += _bounded(status, named, f"the rows of status {status} in grades_by_exercise.csv")
    notices = sorted(summary.get("notices") or (), key=lambda notice: " skipped " in notice)  # refusals first
    if notices:
        lines += _bounded("in submitted/ and make collect's record", notices,
                          "make collect's record of each lesson, submitted/.collected/<lesson>.json")
    return lines


def summary_text(results, summary):
    """What ``make grade`` prints: the counts, then every error, timeout, memory and tampering by learner, lesson
    and exercise, what was found in submitted/ (and what make collect refused), and what the machine (not a
    learner) failed on."""
    counts = Counter(r.status for r in results if r.exercise != NOTEBOOK)
    lines = [_counts_line(summary), *_choices_lines(summary), *_times_lines(summary)]
    if summary.get("history"):
        lines.append(f"{summary['history']} earlier result{'s' * (summary['history'] > 1)} of changed submissions "
                     f"kept in autograded/<student_id>/<lesson>/history/")
    if summary["unsafe"]:
        lines.append("WARNING: graded WITHOUT a sandbox (UNSAFE=1): the learners' code ran under your account")
    if summary.get("limits"):
        lines.append(f"limits: {summary['limits']}")
    lines.append("exercises: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + " (error: the answer could not be "
                 "run at all, or was not graded; an answer that raised on a check is failed)")
    lines += _named_lines(results, summary)
    lines.append("scores: grades.csv (as nbgrader export writes it), grades_by_exercise.csv and grades_lms.csv "
                 "(one row per learner, for Canvas's or Moodle's gradebook import); "
                 "feedback pages: feedback/<student_id>/index.html")
    return "\n".join(lines)
