"""The diagnosis of answers no catalogued mistake explains: every property and probe names a wrong answer,
and none flags a right one.

Each row of ``NAMED`` (``tests/wrong_answers.py``) is a wrong answer, written as a
learner would (or, for a few probes, an output made by hand), and the property or
probe that must say what is wrong with it. The test calls that one property or probe on the
answer's failing checks, so that what another finding would say first does
not hide it; ``test_every_property_and_probe_has_a_wrong_answer`` keeps the
table complete.
"""

import re

import numpy as np
import pytest

from encoder_lib.grading import EXERCISES, compare, diagnosis, verdict as feedback
from encoder_lib.grading.self_check import run_cases
from test_exercises import ANSWERS, SECRET, check, define
from wrong_answers import NAMED, ON_HIDDEN_CASES


def failing_evidence(name, source=None, outputs=None):
    """``[Evidence]`` of the visible checks an answer fails (``source`` a learner's cell, or ``outputs`` a function
    of a case giving the output by hand)."""
    exercise = EXERCISES[name]
    cases = compare.build_cases(exercise)
    if source is not None:
        outcomes = run_cases(define(source)[name], cases)
    else:
        outcomes = [feedback.Outcome(value=outputs(case)) for case in cases]
    return [diagnosis.Evidence(exercise, c, o) for c, o in zip(cases, outcomes)
            if not feedback.check_case(c, o).ok]


PROPERTIES = {f"{name}.{getattr(p, 'func', p).__name__}": p for name, e in EXERCISES.items() for p in e.properties}
PROBES = {p.__name__: p for p in diagnosis.PROBES}


def _run_one(name, function, wrong):
    if callable(wrong):
        evidence = failing_evidence(name, outputs=wrong)
    else:
        evidence = failing_evidence(name, source=wrong)
    assert evidence, f"{name}: the wrong answer passes every visible check"
    found = []
    for ev in evidence:
        finding = function(ev)
        if finding is not None:
            found.append(finding)
    return found


@pytest.mark.parametrize("name, which, key, wrong", NAMED, ids=[f"{r[1]}-{r[2]}" for r in NAMED])
def test_each_property_and_probe_names_a_wrong_answer(name, which, key, wrong):
    function = PROPERTIES.get(which) or PROBES[which]
    found = _run_one(name, function, wrong)
    assert any(f.key.startswith(key) for f in found), [f.key for f in found]
    for finding in found:
        assert finding.sentence.startswith("On the check \u201c") or finding.key.startswith("pattern"), finding
        assert 10 <= len(finding.sentence.split()) <= 90, finding.sentence


def test_every_property_and_probe_has_a_wrong_answer():
    named = {row[1] for row in NAMED}
    assert sorted(set(PROPERTIES) - named) == []
    assert sorted(set(PROBES) - named) == []


def _every_case(exercise):
    rngs = compare.hidden_rngs(SECRET, exercise.name)
    return compare.build_cases(exercise, rngs, probes=True)


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_no_property_or_probe_flags_a_right_answer(name):
    """On the right output of every visible, hidden and probe case, every property and probe says nothing."""
    exercise = EXERCISES[name]
    functions = list(exercise.properties) + list(diagnosis.PROBES)
    for case in _every_case(exercise):
        ev = diagnosis.Evidence(exercise, case, feedback.Outcome(value=case.expected))
        for function in functions:
            assert function(ev) is None, (case.description, getattr(function, "__name__", function))


def test_the_pattern_across_checks_is_said_only_when_it_separates_them():
    exercise = EXERCISES["layer_norm"]
    cases = compare.build_cases(exercise)
    with_beta = [c for c in cases if diagnosis.features(exercise, c)["beta"] == "given"]
    results = [(c, not any(c is w for w in with_beta)) for c in cases]
    finding = diagnosis.pattern(exercise, results)
    assert finding is not None and "beta given" in finding.sentence
    assert diagnosis.pattern(exercise, [(c, True) for c in cases]) is None
    assert diagnosis.pattern(exercise, [(c, i > 1) for i, c in enumerate(cases)]) is None  # nothing shared


@pytest.mark.parametrize("wrong, words", [
    ('''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0] * 2,
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
''', "in the attention sub-layer"),
    ('''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"], activation="gelu"), params["norm2"]["gamma"],
                    params["norm2"]["beta"])
''', "in the FFN sub-layer"),
])
def test_the_block_s_probes_locate_the_sub_layer(wrong, words):
    passed, report = check(define(wrong)["encoder_block"])
    assert not passed and words in report, report


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_a_right_answer_gets_no_diagnosis_and_no_hint_prompt(name):
    passed, report = check(define(ANSWERS[name][1])[name])
    assert passed, report
    for words in ("What the checks measured", "Likely mistake", "behave like", "behaves like", "Stuck?",
                  "changed its input"):
        assert words not in report, report


@pytest.mark.parametrize("name, wrong", ON_HIDDEN_CASES)
def test_a_hidden_check_s_inputs_are_never_quoted(name, wrong):
    """What the diagnosis says of a hidden case names no number of its inputs (the grader keeps them hidden),
    while on the same inputs shown as a visible case it may."""
    exercise = EXERCISES[name]
    cases = compare.build_cases(exercise, compare.hidden_rngs(SECRET, name))
    fn = define(wrong)[name]
    outcomes = run_cases(fn, cases)
    hidden = [(c, o) for c, o in zip(cases, outcomes) if c.hidden and not feedback.check_case(c, o).ok]
    assert hidden, "the wrong answer passes every hidden case"
    for case, outcome in hidden:
        ev = diagnosis.Evidence(exercise, case, outcome)
        inputs = [v for v in case.args + tuple(case.kwargs.values()) if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
        quoted = {diagnosis.number(v, 3) for a in inputs for v in a.ravel()} - {"0", "1", "-1"}
        for probe in list(exercise.properties) + list(diagnosis.PROBES):
            finding = probe(ev)
            if finding is not None:
                said = set(re.findall(r"-?\d+\.\d+", finding.sentence))
                assert not said & quoted, (finding.sentence, said & quoted)
