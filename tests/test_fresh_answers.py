"""Issue 37's measures on answers the checks were not written from (``tests/fresh_answers.py``): no wrong answer
passes the self-check or the grader's hidden checks, none is told a cause it does not have, and every right
answer, however it is written, passes."""

import math

import numpy as np
import pytest
from scipy.special import erf

import encoder_lib as el
from encoder_lib.grading.self_check import verdict_for
from fresh_answers import CAUSES, RIGHT, WRONG

SECRET = 20261205  # any course's secret: the grader's hidden checks, as it draws them


def answer(fresh):
    """The answer's function, defined as a notebook defines it (with the names its first cell imports)."""
    namespace = {"np": np, "el": el, "erf": erf, "math": math}
    exec(fresh.source, namespace)  # noqa: S102 - the tests' own answers
    return namespace[fresh.exercise]


def told(verdict, fresh):
    """``(accurate causes, misleading causes)`` of a verdict, by the words ``CAUSES`` allows its answer."""
    allowed = CAUSES[fresh.key]
    said = [c.sentence + " " + (c.mistake.name if c.mistake is not None else "") for c in verdict.causes]
    misleading = [s for s in said if not any(words in s for words in allowed)]
    return len(said) - len(misleading), misleading


@pytest.mark.parametrize("fresh", WRONG, ids=lambda f: f.key)
def test_a_wrong_answer_fails_the_self_check_and_the_grader_and_is_told_no_cause_it_lacks(fresh):
    fn = answer(fresh)
    mine = verdict_for(fn)
    assert not mine.passed, f"told 'Well done': {fresh.cause}"
    assert not verdict_for(fn, secret=SECRET).passed, "passed the grader's hidden checks"
    _, misleading = told(mine, fresh)
    assert misleading == [], f"{fresh.cause} was told: {misleading}"
    assert mine.specific(), f"told only where and by how much: {mine.explanation()}"


@pytest.mark.parametrize("fresh", RIGHT, ids=lambda f: f.key)
def test_a_right_answer_written_its_own_way_passes_everywhere(fresh):
    fn = answer(fresh)
    assert verdict_for(fn).passed, verdict_for(fn).report()
    assert verdict_for(fn, secret=SECRET).passed


def test_every_wrong_answer_has_the_words_its_cause_may_be_told_in():
    assert {f.key for f in WRONG} == set(CAUSES)
    assert sum(f.fixture_only for f in WRONG) == len(WRONG) // 2 == 20
