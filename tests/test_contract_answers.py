"""Issue 49's measures on answers the checks were not written from (``tests/contract_answers.py``): every wrong answer,
wrong along one promise beyond its values, fails the self-check and the grader's checks (here and, slow, in the
grader's sandbox, with the self-check's own words), none is told a cause it does not have, and every right answer
passes."""

import hashlib
import math

import numpy as np
import pytest
from scipy.special import erf

import encoder_lib as el
from contract_answers import CAUSES, DIMENSIONS, RIGHT, WRONG
from encoder_lib.grading import EXERCISES
from encoder_lib.grading.contract import said as contract_said
from encoder_lib.grading.self_check import run_cases, verdict_for
from encoder_lib.grading.verdict import judge

SECRET = 20261205  # any course's secret: the grader's hidden checks, as it draws them
#: The wrong answers whose results differ from one run to the next: random numbers, or a cache keyed by id(x).
NOT_REPEATABLE = {"softmax_random_tie_break", "block_stochastic_depth", "encoder_layerdrop", "layer_norm_cache_by_id"}


def answer(contract):
    """The answer's function, defined as a notebook defines it (with the names its first cell imports)."""
    namespace = {"np": np, "el": el, "erf": erf, "math": math, "__name__": "__main__"}
    exec(contract.source, namespace)  # noqa: S102 - the tests' own answers
    return namespace[contract.exercise]


def misleading(verdict, contract):
    """The verified causes a verdict names that are not the answer's (none of ``CAUSES``' words)."""
    said = [c.sentence + " " + (c.mistake.name if c.mistake is not None else "") for c in verdict.causes]
    return [s for s in said if not any(words in s for words in CAUSES[contract.key])]


@pytest.mark.parametrize("contract", WRONG, ids=lambda c: c.key)
def test_a_wrong_answer_fails_the_self_check_and_the_grader_and_is_told_what_it_breaks(contract):
    fn = answer(contract)
    mine = verdict_for(fn)
    assert not mine.passed, f"told 'Well done': {contract.cause}"
    assert not verdict_for(fn, secret=SECRET).passed, "passed the grader's hidden checks"
    assert misleading(mine, contract) == [], f"{contract.cause} was told: {misleading(mine, contract)}"
    assert mine.specific(), f"told only where and by how much: {mine.explanation()}"


@pytest.mark.parametrize("contract", RIGHT, ids=lambda c: c.key)
def test_a_right_answer_written_its_own_way_keeps_every_promise(contract):
    fn = answer(contract)
    assert verdict_for(fn).passed, verdict_for(fn).report()
    assert verdict_for(fn, secret=SECRET).passed


def test_forty_wrong_answers_cover_every_dimension_and_ten_right_ones_stand_beside_them():
    assert len(WRONG) == 40 and len(RIGHT) == 10
    assert {c.key for c in WRONG} == set(CAUSES)
    assert {c.dimension for c in WRONG} == set(DIMENSIONS)


@pytest.fixture(scope="module")
def box():
    from conftest import need_bubblewrap
    from course_grader import sandbox

    need_bubblewrap("the grader's sandbox runs the answers")
    with sandbox.Sandbox() as running:
        yield running


@pytest.mark.slow
@pytest.mark.parametrize("contract", WRONG + RIGHT, ids=lambda c: c.key)
def test_the_grader_and_the_hand_in_service_give_the_self_check_s_verdict_in_the_sandbox(box, contract):
    """Through the sandbox (make grade's and the hand-in service's path), the same checks give the same marks and
    words as the self-check's judge on them, and the hand-in's preview is the self-check's own verdict."""
    from course_grader import sandbox
    from course_grader.cases import hidden_cases, public_cases, visible_cases
    from course_grader.marking import grade_answer, marked

    name, fn = contract.exercise, answer(contract)
    cases = visible_cases(name) + hidden_cases(name, SECRET, hashlib.sha256(contract.source.encode()).hexdigest())
    outcomes = run_cases(fn, cases + public_cases(name))  # in the sandbox's order: the public checks last
    expected = marked(judge(EXERCISES[name], cases, outcomes[:len(cases)]))
    got = grade_answer(box, name, contract.source, SECRET, sandbox.Limits(), previewed=True)
    assert (got.status == "passed") == (contract.dimension == "right")
    if contract.key in NOT_REPEATABLE:  # another run draws other numbers, or Python puts arrays at other addresses
        assert got.status == expected.status and set(got.diagnosis.split(" | ")) & contract_said.NOT_A_FUNCTION
        return
    assert (got.status, got.note, got.mistake, got.diagnosis) == \
        (expected.status, expected.note, expected.mistake, expected.diagnosis), (got, expected)
    shown = [(c, o) for c, o in zip(cases + public_cases(name), outcomes) if not c.hidden]
    preview = judge(EXERCISES[name], [c for c, _ in shown], [o for _, o in shown])
    assert got.preview["status"] == ("passed" if preview.passed else "failed")
    assert got.preview["note"] == preview.note()
