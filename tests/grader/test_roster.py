"""One learner, one name (issue 39, item 3): the ids in submitted/ set against the roster (``course_grader.roster``).

Look-alike ids were graded as new learners and never flagged: ``daemon `` (a trailing space), ``dаemon`` (a
Cyrillic а), ``jose`` with a combining accent beside the roster's ``josé``; they printed like the real learner's
rows, and an LMS import that trims or normalises ids would put the attacker's 0 over the victim's 4. The whole
pipeline with them: tests/grader/test_grader_resilience.py."""

from course_grader.roster import match, skeleton

ROSTER = ["josé", "daemon", "ada"]


def test_the_other_unicode_form_of_a_roster_id_is_that_learner_and_is_said():
    matched = match(["jose\u0301", "ada"], ROSTER)
    assert matched.graded == {"jose\u0301": "josé", "ada": "ada"} and matched.held == []
    assert any("is the roster's 'josé' written in another Unicode form" in n for n in matched.notices)


def test_a_look_alike_is_held_and_says_whom_it_looks_like_and_why_and_a_stranger_is_graded_and_said():
    matched = match(["daemon", "daemon ", "d\u0430emon", "dae\u200bmon", "stranger"], ROSTER)
    assert matched.graded == {"daemon": "daemon", "stranger": "stranger"}
    assert sorted(matched.held) == sorted(["daemon ", "d\u0430emon", "dae\u200bmon"])
    said = "\n".join(matched.notices)
    assert "looks like the roster's 'daemon' (a space at an end)" in said
    assert "(a character that only looks like another (CYRILLIC SMALL LETTER A))" in said
    assert "(an invisible character)" in said and "'stranger' is not on the course's roster: graded" in said
    assert "\u200b" not in said  # the notices are plain text


def test_without_a_roster_the_plainer_of_two_look_alikes_is_graded_and_the_other_held():
    matched = match(["daemon ", "daemon", "bob"], [])
    assert matched.graded == {"daemon": "daemon", "bob": "bob"} and matched.held == ["daemon "]
    assert "looks like submitted/'daemon', graded instead (a space at an end)" in matched.notices[0]


def test_a_skeleton_is_what_an_id_prints_as():
    assert skeleton("d\u0430emon ") == skeleton("Daemon") == skeleton("dae\u200bmon") == "daemon"
    assert skeleton("josé") == skeleton("jose\u0301") == "jose" and skeleton("ada") != skeleton("adam")
