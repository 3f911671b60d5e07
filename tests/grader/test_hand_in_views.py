"""What a learner is shown of a graded hand-in (``course_grader.handin.views``), as the course's one setting says:
the visible checks' verdict and the first hint ("checks"), with the hidden checks' counts ("counts"), or nothing of
the grading ("off", an exam); after the due date, each exercise's full note; a machine's failure said as one.
"""

import datetime

import pytest

from course_grader.handin.views import FEEDBACK_OFF, feedback_mode, learner_view

DUE = datetime.datetime(2026, 12, 10, 17, 0)
BEFORE, AFTER = DUE - datetime.timedelta(hours=1), DUE + datetime.timedelta(seconds=1)
SUMMARY = {"lesson": "01_attention", "key": "01_attention/x", "handed_in": "2026-12-10T16:00:00Z", "state": "graded"}
HIDDEN_NOTE = "q (3, 7, 5), k (3, 9, 5): the values differ from the right ones by up to 0.3"
VERDICT = {
    "failure": None,
    "results": [
        {"exercise": "softmax", "points": 2.0, "max_points": 2.0, "status": "passed", "note": ""},
        {"exercise": "scaled_dot_product_attention", "points": 0.0, "max_points": 2.0, "status": "failed",
         "note": HIDDEN_NOTE + ". no 1/sqrt(d_k) scaling"},
        {"exercise": "(notebook)", "points": 0.0, "max_points": 0.0, "status": "tampered",
         "note": "a locked cell was changed"}],
    "previews": {
        "softmax": {"status": "passed", "note": "", "hint": "", "visible": [5, 5], "hidden": [9, 9]},
        "scaled_dot_product_attention": {"status": "failed", "note": "3 queries, 5 keys: no 1/sqrt(d_k) scaling",
                                         "hint": "**What is wrong.** ...", "visible": [1, 3], "hidden": [2, 9]}}}


def view(mode, now, due=DUE, verdict=VERDICT):
    return learner_view(SUMMARY, verdict, mode=mode, due=due, now=now)


def test_before_the_due_date_the_visible_verdict_and_first_hint_never_a_hidden_check_s_note():
    shown = view("checks", BEFORE)
    attention = shown["exercises"][1]
    assert (attention["points"], attention["note"], attention["visible"]) == (0.0, VERDICT["previews"][
        "scaled_dot_product_attention"]["note"], [1, 3])
    assert attention["hint"].startswith("**What is wrong.**") and "hidden" not in attention
    assert HIDDEN_NOTE not in str(shown) and (shown["points"], shown["max_points"]) == (2.0, 4.0)
    assert shown["message"] == "a locked cell was changed" and not shown["full"]


def test_counts_adds_how_many_hidden_checks_passed_and_nothing_else_of_them():
    attention = view("counts", BEFORE)["exercises"][1]
    assert attention["hidden"] == [2, 9] and HIDDEN_NOTE not in str(attention)


def test_off_shows_the_hand_in_and_nothing_of_its_grading_until_the_due_date():
    shown = view("off", BEFORE)
    assert shown["message"] == FEEDBACK_OFF and "exercises" not in shown and "points" not in shown
    assert view("off", AFTER, due=None)["message"] == FEEDBACK_OFF, "no due date: off stays off"


@pytest.mark.parametrize("mode", ["checks", "counts", "off"])
def test_after_the_due_date_every_setting_shows_the_full_notes(mode):
    shown = view(mode, AFTER)
    assert shown["full"] and shown["exercises"][1]["note"].startswith(HIDDEN_NOTE)
    assert "hint" not in shown["exercises"][1]


def test_a_machine_s_failure_is_said_as_one_not_as_the_answer_s():
    shown = view("checks", BEFORE, verdict={"failure": "the worker died", "results": []})
    assert "grader's machine failed" in shown["message"] and "not your answer" in shown["message"]
    assert "exercises" not in shown


def test_waiting_is_shown_as_waiting():
    assert learner_view({**SUMMARY, "state": "waiting"}, None, mode="checks", due=DUE, now=BEFORE)["state"] == \
        "waiting"


def test_the_setting_names_itself_and_what_it_may_be():
    assert feedback_mode(None) == "checks"
    with pytest.raises(ValueError, match=r"c.EncoderCourse.hand_in_feedback .* 'checks', 'counts', 'off'"):
        feedback_mode("all")


def test_an_answer_right_only_on_the_visible_checks_is_told_the_hidden_ones_failed_and_nothing_of_them():
    verdict = {**VERDICT, "previews": {**VERDICT["previews"], "scaled_dot_product_attention": {
        "status": "passed", "note": "", "hint": "", "visible": [3, 3], "hidden": [4, 9]}}}
    attention = view("checks", BEFORE, verdict=verdict)["exercises"][1]
    assert attention["points"] == 0 and "not the hidden ones" in attention["note"] and HIDDEN_NOTE not in str(attention)
