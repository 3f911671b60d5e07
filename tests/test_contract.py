"""What every exercise promises beyond its values (``encoder_lib.grading.contract``): one set of checks for all of
them, derived from the lesson's cases with the library's own function as the oracle; every promise a check asks for
is in the exercise's statement, and every edge case a statement names is a check."""

import functools

import nbformat
import numpy as np
import pytest

from encoder_lib.grading import EXERCISES, contract, wire
from encoder_lib.grading.self_check import verdict_for
from tools.course import lesson_notebooks


@functools.cache
def statements():
    """``{exercise: its statement}``: the markdown cell above its answer cell, and the answer cell's docstring."""
    found = {}
    for path in lesson_notebooks():
        cells = nbformat.read(path, as_version=4).cells
        for before, cell in zip(cells, cells[1:]):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith("_answer"):
                found[grade_id.removesuffix("_answer")] = before.source + "\n" + cell.source.split('"""')[1]
    return found


def as_answer(exercise):
    """The library's own function, named as the exercise is: what every contract check asks of an answer."""
    def answer(*args, **kwargs):
        return exercise.reference(*args, **kwargs)

    answer.__name__ = exercise.name
    return answer


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_library_s_own_function_keeps_every_promise_its_checks_ask_for(name):
    verdict = verdict_for(as_answer(EXERCISES[name]))
    assert verdict.passed, verdict.report()


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_exercise_is_checked_for_each_promise_its_inputs_can_break(name):
    exercise = EXERCISES[name]
    kinds = {c.how.kind for c in contract.build(exercise) if c.how is not None}
    assert {"again", "names"} <= kinds, kinds
    lesson = contract.build(exercise)[0]
    if any(isinstance(a, np.ndarray) for a in wire.arrays_in([lesson.args, lesson.kwargs])):
        assert {"rolled", "refilled", "layout", "dtype"} <= kinds, kinds
    assert {c.how.words.split("=")[0] for c in contract.build(exercise) if c.how is not None and
            c.how.kind == "refused"} == set(exercise.space.refuse)


#: The words every statement says of the promises its checks ask for (an exercise of whole numbers, positional
#: encoding, has no dtype in or layout to keep).
PROMISES = ("a new array", "same result for the same input on every call", "no random numbers",
            "any memory layout", "read-only", "by position or by name", "float32 in, float32 out")


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_statement_says_the_promises_its_checks_ask_for(name):
    said = " ".join(statements()[name].split())
    wanted = PROMISES if name != "positional_encoding" else ("a new float64 array on every call",
                                                             "by position or by name", "600 positions")
    assert [w for w in wanted if w not in said] == [], said
    for argument in EXERCISES[name].space.refuse:
        assert f"`{argument}`" in said and "ValueError" in said, (name, argument)


#: Each edge case a statement names, and the feature of the exercise's space whose checks take it.
EDGES = {
    "softmax": [("as large as 1000", "regime", "large")],
    "masked_softmax": [("all padding come out as zeros", "mask", "all")],
    "positional_encoding": [("odd `d_model`", "d_model", 5), ("600 positions", "seq_len", 600)],
    "gelu": [("a 0-d array", "smallest", "()")],
    "layer_norm": [("1e8", "regime", "far"), ("1e4", "regime", "offset")],
    "layer_norm_grad": [("1e8", "regime", "far"), ("`gamma` is None", "affine", "none")],
    "softmax_grad": [("all 0 for a fully masked row", "regime", "all-masked")],
    "mean_pool": [("all padding zeros", "mask", "all"), ("counts even where its vector is all zeros", "regime", "zeros")],
    "bert_block": [("all padding reads nothing", "mask", "all"), ("rows near 1e4", "regime", "offset")],
    "multi_head_attention": [("`params=None`", "projections", "none")],
}


@pytest.mark.parametrize("name, phrase, feature, value", [(n, *e) for n, edges in EDGES.items() for e in edges])
def test_every_edge_a_statement_names_is_a_check(name, phrase, feature, value):
    exercise = EXERCISES[name]
    assert phrase in " ".join(statements()[name].split()), phrase
    if feature == "smallest":
        assert any(c.how.words == value for c in contract.build(exercise) if c.how and c.how.kind == "smallest")
    else:
        assert value in (exercise.space.regimes if feature == "regime" else exercise.space.sizes[feature])
