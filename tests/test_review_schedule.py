"""The review's schedule: FSRS in the notebooks (fsrs, PyPI) and on the website (ts-fsrs, npm) bring each question
back at the same time for the same answers, over weeks of simulated learners; and the words the README, lesson 00
and the website's review page say of the schedule are what it does."""

import json
import random
import re
import subprocess

import nbformat
import pytest

from encoder_lib.questions import record
from tools.course import ROOT
from tools.site import review

DAY = record.DAY
T0 = 1_772_438_400.0  # 2026-03-02 08:00 UTC
# The page's scheduler (static/schedule.js) with the library the page loads (the UMD build copied to assets/, run as
# a plain script in a global scope of its own, as the browser runs it: it sets the global FSRS), in Node: each
# history's due time after each answer.
RUNNER = r"""
const fs = require('fs');
const page = {};
require('vm').runInNewContext(fs.readFileSync(process.argv[1], 'utf8'), page);
const schedule = require(process.argv[2]);
const settings = JSON.parse(process.argv[3]);
const dueAt = schedule.scheduler(page.FSRS, settings);
const histories = JSON.parse(fs.readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(histories.map((answers) => answers.map((_, k) => dueAt(answers.slice(0, k + 1))))));
"""


def page_due_times(histories):
    from conftest import in_ci, need_node

    need_node("the website's review schedules with ts-fsrs in the browser; Node runs the same script")
    if not review.LIBRARY.is_file():
        (pytest.fail if in_ci() else pytest.skip)("ts-fsrs is not installed: npm ci (make test runs it)")
    result = subprocess.run(["node", "-e", RUNNER, str(review.LIBRARY), str(ROOT / "tools/site/static/schedule.js"),
                             json.dumps(review.settings())], input=json.dumps(histories), capture_output=True,
                            text=True, timeout=300, check=True)
    return json.loads(result.stdout)


def learner(rng, weeks):
    """One learner's answers to one question over ``weeks``: on the days they open the review, a question that is
    due is answered (right with the learner's own chance); now and then it is answered again the same day (the
    lesson re-run), or before it is due."""
    answers, t, end = [], T0 + rng.uniform(0, DAY), T0 + weeks * 7 * DAY
    chance = rng.uniform(0.3, 0.95)
    while t < end and len(answers) < record.KEPT:
        answers.append([round(t, 3), rng.random() < chance])
        due, how = record.due_at(answers), rng.random()
        if how < 0.6:  # when it is due, or some days late
            t = due + rng.choice([0, rng.uniform(0, 3 * DAY)])
        elif how < 0.8:  # again the same day
            t += rng.uniform(60, DAY / 2)
        else:  # before it is due, or long after
            t += rng.uniform(0, 10 * DAY)
    return answers


def test_the_notebooks_and_the_website_bring_every_question_back_at_the_same_time_over_weeks_of_answers():
    rng = random.Random(53)
    histories = [learner(rng, weeks=rng.choice([2, 4, 8, 26])) for _ in range(400)]
    histories += [[[T0 + k * DAY, right] for k, right in enumerate(pattern)]
                  for pattern in ([True] * 12, [False] * 12, [True, False] * 6, [False] + [True] * 11)]
    page = page_due_times(histories)
    compared = 0
    for answers, dues in zip(histories, page):
        for k, due in enumerate(dues):
            notebook = record.due_at(answers[:k + 1])
            assert abs(due - notebook) < 1e-3, (answers[:k + 1], (due - notebook) / DAY)
            compared += 1
    assert compared > 2000  # weeks of answers: every due time after every answer


def test_the_page_s_settings_and_library_are_the_notebooks_fsrs():
    import fsrs

    assert review.settings() == {"desired_retention": record.SCHEDULER.desired_retention,
                                 "maximum_days": record.SCHEDULER.maximum_interval}
    assert not record.SCHEDULER.learning_steps and not record.SCHEDULER.relearning_steps
    assert not record.SCHEDULER.enable_fuzzing
    assert tuple(record.SCHEDULER.parameters) == tuple(fsrs.scheduler.DEFAULT_PARAMETERS)
    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]["node_modules/ts-fsrs"]
    assert lock["version"].startswith("5.") and lock["license"] == "MIT"  # FSRS-6, as fsrs 6


def waits_said(text):
    """The waits a text says a question right every time has: the numbers in '(11, 46 and 163 days'."""
    found = re.search(r"\((\d+), (\d+) and (\d+) days", text)
    return [int(n) for n in found.groups()] if found else None


def test_a_miss_makes_the_next_wait_shorter_and_a_right_answer_longer_as_the_pages_say():
    rights = [True] * 4
    assert record.waits([False]) == [1] and record.waits([True])[:1] == [2]
    for k in range(0, 8):  # k right answers, then a miss, then right again
        waits = record.waits([True] * k + [False, True, True])
        assert waits[k] == 1 or waits[k] < waits[k - 1], waits
        assert waits[k + 1] > waits[k] and waits[k + 2] > waits[k + 1], waits
    assert max(record.waits([True] * 10)) == record.MAXIMUM_DAYS
    words = review.schedule_words()
    assert waits_said(words) == record.waits(rights)[1:] and "a day later" in words and "2 days later" in words


def test_the_readme_and_lesson_00_say_when_a_question_comes_back_as_it_does():
    readme = " ".join((ROOT / "README.md").read_text().split())
    start = nbformat.read(ROOT / "notebooks/00_start_here/00_start_here.ipynb", as_version=4)
    lesson = " ".join(" ".join(c.source for c in start.cells if c.cell_type == "markdown").split())
    waits = record.waits([True] * 4)
    for name, text in (("README.md", readme), ("lesson 00", lesson)):
        assert "FSRS" in text, name
        assert waits_said(text) == waits[1:], f"{name} should say the waits {waits[1:]}"
        assert "miss the first time comes back a day later" in text and "right 2 days later" in text, name
        assert f"{record.MAXIMUM_DAYS} days at most" in text and "a miss makes it shorter" in text, name
        assert "3 and then 7" not in text and "three times in a row" not in text, name
