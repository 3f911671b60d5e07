"""The grader's note is the self-check's feedback, word for word: a wrong answer run in the sandbox gets the
sentences the notebook would have printed on the same cases (visible, probes and hidden), and what the
feedback named reaches grades_by_exercise.csv's mistake and diagnosis columns.

Checked on the catalogue's mistakes and on mutants of the solutions that nobody wrote a sentence for.
"""

import hashlib

import pytest

from encoder_lib.grading import EXERCISES, verdict as feedback
from course_grader import sandbox
from course_grader.cases import hidden_cases, visible_cases
from course_grader.files import plain_text
from course_grader.marking import NOT_ANSWERED, Marked, grade_answer, marked
from encoder_lib.grading.self_check import run_cases
from mistakes import MISTAKES
from test_feedback_mutants import some_mutants
from test_grader_parts import box  # noqa: F401  (the module's sandbox)
from benchmarks import mutants as m

SECRET = 7
#: lesson 08's cases carry a model's weights: its mistakes are graded end to end in test_grading_pipeline.
SLOW = {"bert_block", "mean_pool"}


def in_the_notebook(name, fn, source):
    """The ``Marked`` the grader should give: the self-check's verdict on the grader's own cases (the hidden ones
    drawn for this answer cell's ``source``)."""
    cases = visible_cases(name) + hidden_cases(name, SECRET, hashlib.sha256(source.encode()).hexdigest())
    verdict = feedback.judge(EXERCISES[name], cases, run_cases(fn, cases))
    return marked(verdict)


def in_the_grader(box, name, source):
    return grade_answer(box, name, source, SECRET, sandbox.Limits())


def same_marks(got, expected):
    assert got.status == expected.status, (got, expected)
    assert plain_text(got.note) == plain_text(expected.note)
    assert (got.mistake, got.diagnosis) == (expected.mistake, expected.diagnosis)


CATALOGUED = [w for w in MISTAKES if w.exercise not in SLOW]


@pytest.mark.parametrize("wrong", CATALOGUED, ids=[w.id for w in CATALOGUED])
def test_a_catalogued_mistake_gets_the_self_check_s_sentences_from_the_grader(box, wrong):  # noqa: F811
    from test_exercises import define

    fn = define(wrong.source)[wrong.exercise]
    expected = in_the_notebook(wrong.exercise, fn, wrong.source)
    got = in_the_grader(box, wrong.exercise, wrong.source)
    same_marks(got, expected)
    explanations = {m.name: m.explanation for m in EXERCISES[wrong.exercise].mistakes}
    named = [explanations[n] for n in got.mistake.split(" + ")]
    assert got.status == "failed" and wrong.explanation in named, got


@pytest.mark.parametrize("name", sorted(set(EXERCISES) - SLOW))
def test_a_mutant_nobody_wrote_a_sentence_for_gets_the_same_feedback_in_the_grader(box, name):  # noqa: F811
    picked = some_mutants(name, most=2)
    assert picked
    for judged in picked:
        fn = m.define(judged.mutant.source, name)
        same_marks(in_the_grader(box, name, judged.mutant.source), in_the_notebook(name, fn, judged.mutant.source))


def test_a_right_answer_gets_no_note_and_a_stub_is_not_answered(box):  # noqa: F811
    right = "def softmax(x, axis=-1):\n    e = np.exp(x - x.max(axis=axis, keepdims=True))\n" \
            "    return e / e.sum(axis=axis, keepdims=True)\n"
    assert in_the_grader(box, "softmax", right) == Marked("passed", EXERCISES["softmax"].points, "")
    stub = "def softmax(x, axis=-1):\n    raise NotImplementedError\n"
    assert in_the_grader(box, "softmax", stub)[:3] == ("not answered", 0, NOT_ANSWERED)
