"""The exercises: the notebooks' solutions pass, every catalogued mistake is named and fails, and
an answer is graded on its own."""

import contextlib
import io
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy.special import erf

import encoder_lib as el
from encoder_lib import grading
from mistakes import MISTAKES

ROOT = Path(__file__).resolve().parent.parent


def answer_cells():
    """{exercise: (assignment, source of the solution)} from the instructor notebooks."""
    found = {}
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
            if grade_id.endswith("_answer"):
                found[grade_id.removesuffix("_answer")] = (path.parent.name, cell.source)
    return found


ANSWERS = answer_cells()


def define(source):
    """Run an answer's source as a notebook would, with the names notebooks import."""
    namespace = {"np": np, "el": el, "erf": erf}
    exec(source, namespace)
    return namespace


SECRET = 20261130  # any course's secret: hidden cases as a grader would draw them


def check(fn):
    """What ``grading.self_check`` prints, and whether every check passed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        grading.self_check(fn)
    return grading.check(fn)[0], out.getvalue()


def passes_hidden_cases(fn):
    return grading.check(fn, secret=SECRET)[0]


def test_there_are_at_least_14_exercises_and_each_is_in_a_notebook():
    assert len(grading.EXERCISES) >= 14
    assert sorted(ANSWERS) == sorted(grading.EXERCISES)


def test_each_exercise_has_the_library_function_s_name_and_arguments():
    import inspect

    for name, (_, source) in ANSWERS.items():
        mine = inspect.signature(define(source)[name])
        library = inspect.signature(getattr(el, name))
        assert list(mine.parameters) == list(library.parameters)[: len(mine.parameters)], name


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_solution_passes_its_self_check_and_hidden_tests(name):
    fn = define(ANSWERS[name][1])[name]
    ok, report = check(fn)
    assert ok, report
    assert passes_hidden_cases(fn), grading.check(fn, secret=SECRET)[1]
    grading.visible_tests(fn)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_self_check_names_each_catalogued_mistake_and_the_hidden_tests_fail_it(mistake):
    assert ANSWERS[mistake.exercise][0] == mistake.assignment
    fn = define(mistake.source)[mistake.exercise]
    ok, report = check(fn)
    assert not ok
    assert mistake.says.lower() in report.lower(), report
    assert not passes_hidden_cases(fn)
    with pytest.raises(AssertionError, match="Likely mistake"):
        grading.visible_tests(fn)


def test_the_catalogue_covers_the_mistakes_the_course_promises_to_recognise():
    promised = {"softmax_without_max", "softmax_wrong_axis", "attention_without_scaling", "attention_divided_by_d_k",
                "mask_after_the_softmax", "mask_with_the_wrong_polarity", "split_heads_without_transpose",
                "merge_heads_in_the_wrong_order", "relu_after_the_second_layer", "ffn_missing_bias",
                "layer_norm_over_the_sequence", "layer_norm_unbiased_variance", "layer_norm_eps_outside_the_root",
                "post_norm_written_as_pre_norm", "post_norm_without_residual", "post_norm_on_the_sublayer_input",
                "sine_and_cosine_swapped", "one_set_of_parameters_for_every_layer"}
    assert promised <= {m.id for m in MISTAKES}


@pytest.mark.parametrize("name", sorted(grading.EXERCISES))
def test_calling_the_library_s_own_function_does_not_pass(name):
    fn = define(f"def {name}(*args, **kwargs):\n    return el.{name}(*args, **kwargs)\n")[name]
    ok, report = check(fn)
    assert not ok and "encoder_lib's own" in report, report
    with pytest.raises(AssertionError):
        grading.visible_tests(fn)


def test_an_unanswered_exercise_is_not_done_yet():
    fn = define("def softmax(x, axis=-1):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n")["softmax"]
    ok, report = check(fn)
    assert not ok and "not done yet" in report
    with pytest.raises(NotImplementedError):
        grading.visible_tests(fn)


def test_an_answer_is_graded_on_its_own_and_the_notebook_is_left_as_it_was():
    """A wrong softmax must not fail attention; afterwards the learner's names and the library are restored."""
    namespace = define(next(m.source for m in MISTAKES if m.id == "softmax_without_max"))
    exec(ANSWERS["scaled_dot_product_attention"][1], namespace)
    wrong_softmax, library_softmax = namespace["softmax"], el.softmax
    assert check(namespace["scaled_dot_product_attention"])[0]
    assert namespace["softmax"] is wrong_softmax
    assert el.softmax is library_softmax
    assert np.allclose(el.softmax(np.array([0.0, 0.0])), 0.5)
