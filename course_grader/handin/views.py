"""What a learner is shown of a hand-in: the course's one setting decides what before the due date.

``c.EncoderCourse.hand_in_feedback``: ``"checks"`` (the default: per exercise the points, the visible checks'
verdict, the verified cause or what was measured, the first hint), ``"counts"`` (also how many hidden checks
passed) or ``"off"`` (an exam: "handed in at", nothing of the grading). Never a hidden check's input or result,
never a solution: before the due date the words come from ``marking.preview``, judged on the visible cases alone.
After the learner's due date (their extension, else the lesson's), the full note of the feedback page.
"""

from ..files import plain_text
from ..submissions import NOTEBOOK

MODES = ("checks", "counts", "off")
MACHINE_FAILED = ("not graded here: the grader's machine failed on it, not your answer ({why}); your teacher's "
                  "`make grade` grades it")
#: Said where the visible checks pass and the points were lost on the hidden ones: what was measured, no input.
HIDDEN_ONLY = ("Your answer passes every check you can see, but not the hidden ones, which draw other sizes, batch "
               "axes and values from the whole input space the exercise's docstring allows: try yours on those.")
FEEDBACK_OFF = ("Your teacher has turned immediate feedback off for this lesson: your hand-in is kept, and graded "
                "with the class; the feedback comes after the due date.")


class Refusal(Exception):
    """A request refused: its HTTP status and the sentence the learner reads."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status, self.message = status, message


def feedback_mode(config_value):
    """The setting's value, checked: ValueError naming it and what it may be."""
    value = "checks" if config_value is None else config_value
    if value not in MODES:
        raise ValueError(f"c.EncoderCourse.hand_in_feedback in nbgrader_config.py must be one of "
                         f"{', '.join(map(repr, MODES))}, got {config_value!r}")
    return value


def _exercise(row, preview, *, full, counts):
    item = {"exercise": row["exercise"], "points": row["points"], "max_points": row["max_points"],
            "status": row["status"]}
    if full:
        item["note"] = plain_text(row.get("note") or "")
        return item
    preview = preview or {}
    item["note"] = plain_text(preview.get("note") or "")
    if preview.get("status") == "passed" and row["status"] != "passed":
        item["note"] = HIDDEN_ONLY
    item["hint"] = preview.get("hint") or ""
    if isinstance(preview.get("visible"), list):
        item["visible"] = preview["visible"]
    if counts and isinstance(preview.get("hidden"), list):
        item["hidden"] = preview["hidden"]
    return item


def learner_view(summary, verdict, *, mode, due, now):
    """The JSON a learner's kernel (and the service's page) shows: ``summary`` (the hand-in's key, lesson, time,
    state and place in line) and, once graded, its verdict as ``mode`` allows before ``due`` (naive UTC, or None:
    no due date) at ``now``."""
    view = dict(summary)
    if verdict is None:
        return view
    if verdict.get("failure"):
        view["message"] = MACHINE_FAILED.format(why=plain_text(str(verdict["failure"]))[:300])
        return view
    full = due is not None and now >= due
    view["full"] = full
    if mode == "off" and not full:
        view["message"] = FEEDBACK_OFF
        return view
    rows = [r for r in verdict.get("results") or () if r.get("exercise") != NOTEBOOK]
    previews = verdict.get("previews") or {}
    view["exercises"] = [_exercise(r, previews.get(r["exercise"]), full=full, counts=mode == "counts") for r in rows]
    view["points"] = sum(r["points"] for r in rows)
    view["max_points"] = sum(r["max_points"] for r in rows)
    tampered = [r for r in verdict.get("results") or () if r.get("exercise") == NOTEBOOK]
    if tampered:
        view["message"] = plain_text(tampered[0].get("note") or "")
    return view
