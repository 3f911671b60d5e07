"""The feedback on a wrong answer is never wrong about its cause.

A cause is said only when a variant of the right answer reproduces what the
answer computed on every case (``encoder_lib.grading.causes``); otherwise only
what was measured, each rule with what the answer gives (``symptoms``). These
tests pin both halves: every exercise's model is its right answer, no rule
fires on a right answer and each fires on the wrong answer written for it, a
measurement never asks or guesses, a hidden check's inputs are never quoted,
and on wrong answers written blind (``tests/natural_mistakes.py``) nothing
passes and nothing named is another cause than the answer's own.
"""

import re

import numpy as np
import pytest

from encoder_lib.grading import EXERCISES, compare, in_words, symptoms
from encoder_lib.grading.self_check import run_cases, verdict_for
from encoder_lib.grading.verdict import Outcome, check_case
from natural_causes import CAUSES, SECOND
from natural_mistakes import NATURAL
from test_exercises import ANSWERS, SECRET, check, define
from wrong_answers import MEASURED, OLDER, ON_HIDDEN_CASES


def every_case(exercise, seeds=2):
    return compare.build_cases(exercise, compare.hidden_rngs(SECRET, exercise.name, count=seeds), probes=True)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_each_exercise_s_model_is_its_right_answer(name):
    """The error model's base: every edit of it is a wrong answer only if the model itself is the right one."""
    exercise = EXERCISES[name]
    for case in every_case(exercise):
        model = exercise.model(*compare.callable_inputs(case.args), **compare.callable_inputs(case.kwargs))
        assert compare.close(model, case.expected, equal_nan=True), case.description


RULES = {f"{name}.{getattr(p, 'func', p).__name__}": p for name, e in EXERCISES.items() for p in e.properties}
FACTS = {f.__name__: f for f in symptoms.RELATIONS + symptoms.GENERAL}


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_no_rule_and_no_fact_fires_on_a_right_answer(name):
    exercise = EXERCISES[name]
    for case in every_case(exercise):
        ev = symptoms.Evidence(exercise, case, Outcome(value=case.expected))
        for rule in list(exercise.properties) + list(symptoms.RELATIONS) + list(symptoms.GENERAL):
            assert rule(ev) is None, (case.description, getattr(rule, "__name__", rule))


def failing_evidence(name, wrong):
    """``[Evidence]`` of the visible checks a wrong answer fails (a learner's cell, or outputs made by hand)."""
    exercise = EXERCISES[name]
    cases = compare.build_cases(exercise)
    outcomes = run_cases(define(wrong)[name], cases) if isinstance(wrong, str) else \
        [Outcome(value=wrong(case)) for case in cases]
    return [symptoms.Evidence(exercise, c, o) for c, o in zip(cases, outcomes) if not check_case(c, o).ok]


@pytest.mark.parametrize("name, which, key, wrong", MEASURED, ids=[f"{r[1]}-{r[2]}" for r in MEASURED])
def test_each_rule_and_fact_says_what_its_wrong_answer_breaks_without_a_question(name, which, key, wrong):
    rule = RULES.get(which) or FACTS[which]
    evidence = failing_evidence(name, wrong)
    assert evidence, f"{name}: the wrong answer passes every visible check"
    found = [f for f in (rule(ev) for ev in evidence) if f is not None]
    assert any(f.key.startswith(key) for f in found), [f.key for f in found]
    for finding in found:
        assert finding.sentence.startswith(("On the check \u201c", "A ")), finding.sentence
        assert "?" not in finding.sentence and 8 <= len(finding.sentence.split()) <= 90, finding.sentence


def test_every_rule_and_fact_has_a_wrong_answer():
    named = {row[1] for row in MEASURED}
    assert sorted(set(RULES) - named) == [] and sorted(set(FACTS) - named) == []


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_right_answer_gets_no_diagnosis_and_no_hint_prompt(name):
    passed, report = check(define(ANSWERS[name][1])[name])
    assert passed, report
    for words in ("What the checks measured", "gives exactly what", "none gives exactly", "Stuck?",
                  "changed its input"):
        assert words not in report, report


@pytest.mark.parametrize("name, wrong", ON_HIDDEN_CASES)
def test_a_hidden_check_s_inputs_are_never_quoted(name, wrong):
    """What the feedback says of a hidden case names no number of its inputs (the grader keeps them hidden)."""
    exercise = EXERCISES[name]
    cases = compare.build_cases(exercise, compare.hidden_rngs(SECRET, name))
    outcomes = run_cases(define(wrong)[name], cases)
    hidden = [(c, o) for c, o in zip(cases, outcomes) if c.hidden and not check_case(c, o).ok]
    assert hidden, "the wrong answer passes every hidden case"
    for case, outcome in hidden:
        inputs = [v for v in case.args + tuple(case.kwargs.values()) if isinstance(v, np.ndarray)]
        quoted = {in_words.number(v, 3) for a in inputs for v in a.ravel()} - {"0", "1", "-1"}
        said = " ".join(f.sentence for f in symptoms.measure(exercise, [symptoms.Evidence(exercise, case, outcome)]))
        assert not set(re.findall(r"-?\d+\.\d+", said)) & quoted, said


@pytest.mark.parametrize("result, words", [
    ([0.09, 0.24, 0.67], "it returned a list, not a plain numpy array"),
    (np.array([0.09, 0.24, 0.67]) + 1e6j, "complex numbers"),
    (np.array([0, 0, 1]), "an array of int64"),
    (np.array(["0.09", "0.24", "0.67"], dtype=object), "an array of object"),
    (np.zeros((3000, 3000), dtype=np.uint8), "an array of uint8"),
    (np.zeros(4), "the result has shape (4,), expected (3,)"),
])
def test_a_result_that_cannot_be_the_answer_fails_at_once_and_says_why(result, words):
    case = compare.build_cases(EXERCISES["softmax"])[0]  # the row (1, 2, 3)
    checked = check_case(case, Outcome(value=result))
    assert not checked.ok and words in checked.problem, checked.problem


def test_the_same_answer_gets_the_same_verdict_whatever_the_machine_s_load():
    """The search's budget counts calls, not seconds: two runs give the same causes, word for word."""
    wrong = next(n for n in NATURAL if n.key == "bert_block_pre_norm")
    fn = define(wrong.source)[wrong.exercise]
    assert verdict_for(fn).explanation() == verdict_for(fn).explanation()


def _accurate(cause, allowed):
    said = cause.sentence + " " + (cause.mistake.name if cause.mistake is not None else "")
    return any(phrase in said for phrase in allowed)


@pytest.mark.slow
def test_no_natural_wrong_answer_passes_and_none_is_told_another_cause():
    """The 152 wrong answers written blind: every one fails, and every cause it is told is its own; the table
    says how many are told their cause, how many only what was measured."""
    counts = {"told the cause": 0, "told what was measured": 0, "changed its inputs": 0}
    misleading, passed = [], []
    for wrong in NATURAL:
        verdict = verdict_for(define(wrong.source)[wrong.exercise])
        if verdict.passed:
            passed.append(wrong.key)
            continue
        assert not (verdict.causes and verdict.symptoms), wrong.key  # one verdict: causes, or measurements
        allowed = CAUSES.get(wrong.key, ()) + SECOND.get(wrong.key, ())
        wrong_causes = [c.sentence for c in verdict.causes if not _accurate(c, allowed)]
        if wrong_causes:
            misleading.append((wrong.key, wrong_causes))
        counts["told the cause" if verdict.causes else "changed its inputs" if verdict.changed and
               not verdict.symptoms else "told what was measured"] += 1
    print(f"\nnatural wrong answers: {len(NATURAL)}; " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    assert passed == [] and misleading == []


@pytest.mark.parametrize("name, wrong", OLDER, ids=[f"{r[0]}-{i}" for i, r in enumerate(OLDER)])
def test_an_older_wrong_answer_fails_and_is_told_causes_or_measurements_never_both(name, wrong):
    verdict = verdict_for(define(wrong)[name])
    assert not verdict.passed and not (verdict.causes and verdict.symptoms)
    for cause in verdict.causes:
        assert "?" not in cause.sentence
