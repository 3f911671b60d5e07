"""The exercises: the notebooks' solutions pass, every catalogued mistake is named and fails, and
an answer is graded on its own."""

import contextlib
import io
import linecache
import math
import re
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
    namespace = {"np": np, "el": el, "erf": erf, "math": math}
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


# Exercises that are not one library function, and the library call that computes the same
NOT_IN_THE_LIBRARY = {
    "bert_block": 'el.encoder_block(x, params, n_heads, norm="post", padding_mask=padding_mask, activation="gelu", '
                  'eps=1e-12)',
}


def test_each_exercise_has_the_library_function_s_name_and_arguments():
    import inspect

    for name, (_, source) in ANSWERS.items():
        mine = inspect.signature(define(source)[name])
        if name in NOT_IN_THE_LIBRARY:
            assert not hasattr(el, name)
            library = inspect.signature(grading.EXERCISES[name].reference)
        else:
            library = inspect.signature(getattr(el, name))
        assert list(mine.parameters) == list(library.parameters)[: len(mine.parameters)], name


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_solution_passes_its_self_check_and_hidden_tests(name):
    fn = define(ANSWERS[name][1])[name]
    ok, report = check(fn)
    assert ok, report
    assert passes_hidden_cases(fn), grading.check(fn, secret=SECRET)[1]
    grading.visible_tests(fn)


def test_every_catalogued_mistake_has_a_learner_s_version_and_every_version_a_mistake():
    """tests/mistakes/ and the exercises' definitions name the same mistakes (a version's model must exist)."""
    models = {m.name for e in grading.EXERCISES.values() for m in e.mistakes}
    versions = {w.model for w in MISTAKES}
    assert sorted(models - versions) == [], "mistakes with no learner's version in tests/mistakes/"
    assert sorted(versions - models) == [], "learners' versions whose mistake no exercise defines"
    assert len({w.id for w in MISTAKES}) == len(MISTAKES), "two learners' versions share an id: give one a variant"
    names = [m.name for e in grading.EXERCISES.values() for m in e.mistakes]
    assert len(set(names)) == len(names), "two mistakes share a name"


def test_each_lesson_s_mistakes_live_in_that_lesson_s_file():
    import mistakes
    from encoder_lib.grading.exercises import LESSONS

    for module in LESSONS:
        short = module.__name__.rsplit(".", 1)[1]
        lessons = {w.lesson for w in getattr(mistakes, short).MISTAKES}
        assert lessons == {e.lesson for e in module.EXERCISES}, short


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_self_check_names_each_catalogued_mistake_and_the_hidden_tests_fail_it(mistake):
    assert ANSWERS[mistake.exercise][0] == mistake.lesson
    fn = define(mistake.source)[mistake.exercise]
    ok, report = check(fn)
    assert not ok
    assert mistake.explanation in report, report
    assert not passes_hidden_cases(fn)
    with pytest.raises(AssertionError, match="known mistake gives"):
        grading.visible_tests(fn)


@pytest.mark.parametrize("name", sorted(grading.EXERCISES))
def test_every_exercise_has_at_least_three_catalogued_mistakes_that_its_visible_tests_catch(name):
    """A learner's three likeliest mistakes are named, and the visible tests fail each with words."""
    mine = [m for m in MISTAKES if m.exercise == name]
    assert len(mine) >= 3, f"{name}: {len(mine)} catalogued mistakes"
    for mistake in mine:
        fn = define(mistake.source)[name]
        with pytest.raises(AssertionError) as failed:
            grading.visible_tests(fn)
        message = str(failed.value)
        described = [c.description for c in grading.compare.build_cases(grading.EXERCISES[name])]
        assert any(message.startswith(f"{name}, {d}: ") for d in described), message
        assert any(words in message for words in ("got ", "it raised", "shape", "NaN", "tuple", "returned")), message
        assert mistake.explanation in message, message


def test_the_catalogue_covers_the_mistakes_the_course_promises_to_recognise():
    promised = {"softmax_without_max", "softmax_wrong_axis", "attention_without_scaling", "attention_divided_by_d_k",
                "mask_after_the_softmax", "mask_with_the_wrong_polarity", "split_heads_without_transpose",
                "merge_heads_in_the_wrong_order", "relu_after_the_second_layer", "ffn_missing_bias",
                "layer_norm_over_the_sequence", "layer_norm_unbiased_variance", "layer_norm_eps_outside_the_root",
                "post_norm_written_as_pre_norm", "post_norm_without_residual", "post_norm_on_the_sublayer_input",
                "sine_and_cosine_swapped", "one_set_of_parameters_for_every_layer",
                # issue 15's list: what learners wrote that got no name before
                "attention_without_biases", "pre_norm_adds_the_normalised_input", "positional_encoding_exponent_per_column",
                "softmax_grad_sum_over_the_wrong_axis", "attention_with_k_dot_T", "softmax_sum_without_keepdims",
                "ffn_ignores_activation", "encoder_without_the_mask", "merge_heads_swapping_the_last_two_axes",
                "split_heads_for_a_batch_only", "mask_on_the_queries", "softmax_with_one_global_maximum",
                "positional_encoding_odd_d_model", "mask_all_padding_row_through_the_library_softmax",
                "layer_norm_eps_outside_the_root", "attention_without_scaling"}
    assert promised <= {m.id for m in MISTAKES}


@pytest.mark.parametrize("name", sorted(grading.EXERCISES))
def test_calling_the_library_s_own_function_does_not_pass(name):
    if name in NOT_IN_THE_LIBRARY:
        fn = define(f"def {name}(x, params, n_heads, padding_mask=None):\n    return {NOT_IN_THE_LIBRARY[name]}\n")[name]
    else:
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


def test_the_grader_runs_bert_block_on_inputs_the_lesson_does_not_show():
    """Its hidden inputs are random token sequences through the model's embedding layer, for the model's own
    block 1, drawn anew for each graded submission: none is an input the lesson shows, no table can hold them,
    and two submissions never get the same."""
    from encoder_lib.grading.exercises.pretrained import LESSON_SENTENCES, minilm_params

    exercise = grading.EXERCISES["bert_block"]
    shown = [args[0] for _, args, _ in exercise.cases(np.random.default_rng(0))]

    def hidden(submission):
        rngs = grading.compare.hidden_rngs(SECRET, "bert_block", submission=submission)
        cases = grading.compare.build_cases(exercise, rngs, visible=False)
        return [case for case in cases if "MiniLM" in case.description]  # beside them, small random blocks

    first, second = hidden("ab" * 32), hidden("cd" * 32)
    assert len(first) == len(second) == grading.compare.HIDDEN_SEEDS  # once a seed (the space's `once`)
    for case in first:
        (x, params, n_heads), kwargs = case.args, case.kwargs
        assert x.shape[0] == 2 and x.shape[-1] == 384 and params is minilm_params(1) and n_heads == 12
        assert kwargs["padding_mask"][1].any() and not kwargs["padding_mask"][0].any()
        assert not any(x.shape == s.shape and np.allclose(x, s) for s in shown)
        assert not any(sentence in case.description for sentence in LESSON_SENTENCES)
    assert not any(np.array_equal(a.args[0], b.args[0]) for a in first for b in second)


def optional_arguments(name):
    """The optional parameters of an exercise as the learner writes it (its solution cell), with defaults."""
    import inspect

    signature = inspect.signature(define(ANSWERS[name][1])[name])
    return {p.name: p.default for p in signature.parameters.values() if p.default is not inspect.Parameter.empty}


def given(case, name, default, reference):
    import inspect

    bound = inspect.signature(reference).bind(*case.args, **case.kwargs).arguments
    if name not in bound:
        return False
    value = bound[name]
    return value is not default and not (isinstance(value, (str, int, float)) and value == default)


@pytest.mark.parametrize("hidden", [False, True], ids=["visible", "hidden"])
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_cases_cover_every_combination_of_optional_arguments(name, hidden):
    """gamma alone, beta alone, both, neither; a non-default eps; every choice of a string option; a mask
    given and not: a mistake in any of them fails some check (issue 20: three wrong answers passed for want
    of one)."""
    import itertools

    exercise = grading.EXERCISES[name]
    rngs = grading.compare.hidden_rngs(SECRET, name) if hidden else ()
    cases = grading.compare.build_cases(exercise, rngs)[len(grading.compare.build_cases(exercise)) if hidden else 0:]
    optional = optional_arguments(name)
    nones = [n for n, d in optional.items() if d is None]
    for combination in itertools.product([False, True], repeat=len(nones)):
        wanted = dict(zip(nones, combination))
        assert any(all(given(c, n, None, exercise.reference) == w for n, w in wanted.items()) for c in cases), \
            f"{name}: no {'hidden' if hidden else 'visible'} case with {wanted}"
    for n, default in optional.items():
        if default is not None:
            assert any(given(c, n, default, exercise.reference) for c in cases), \
                f"{name}: no {'hidden' if hidden else 'visible'} case passes {n} other than its default {default!r}"


def _model_with_steps(code_comment, steps):
    """An exercise read from a table whose model ``f`` ends its one line in ``code_comment``."""
    from encoder_lib.grading.exercises._base import read_exercises

    lines = ["def f(x):\n", f"    return x  {code_comment}\n"]
    filename = f"<model {code_comment}>"
    namespace = {"__name__": "m"}
    exec(compile("".join(lines), filename, "exec"), namespace)  # noqa: S102
    linecache.cache[filename] = (0, None, lines, filename)  # where inspect.getsource reads the model's lines
    table = {"lesson": "01", "points": 1, "formula": "x", "cases": "f", "reference": "f", "model": "f",
             "draw": "f", "space": {"regimes": {"ordinary": "a few units"}}, "hints": ["idea", "step"],
             "steps": steps}
    try:
        return read_exercises({"f": table}, namespace, "m.toml")[0]
    finally:
        linecache.cache.pop(filename, None)


def test_a_model_s_step_words_come_from_the_exercise_s_file_not_its_comments():
    """A learner reads "in the step where ..." from [<exercise>.steps]; the model's comment is only the key."""
    from encoder_lib.grading.variants import parsed

    exercise = grading.EXERCISES["softmax"]
    assert dict(exercise.steps)["shifted"] == "each row's own maximum (along `axis`) is subtracted from it"
    ideas = parsed(exercise).model.ideas
    assert sorted(ideas.values()) == sorted(words for _, words in exercise.steps)
    assert _model_with_steps("# step: same", {"same": "x is returned"}).steps == (("same", "x is returned"),)


@pytest.mark.parametrize("comment, steps, problem", [
    ("# step: result", {}, "steps.result: missing: f marks a step `# step: result`"),
    ("# step: result", {"result": "x is returned", "other": "words"}, "steps.other: no line of f ends in"),
    ("# x is returned", {"result": "x is returned"}, "steps.result: no line of f ends in"),
    ("# step: result", {"result": 3}, "steps.result: not a string"),
])
def test_the_loader_refuses_step_words_that_do_not_match_the_model(comment, steps, problem):
    from encoder_lib.grading.exercises._base import ExerciseFileError

    with pytest.raises(ExerciseFileError, match=re.escape("m.toml: exercise 'f': " + problem)):
        _model_with_steps(comment, steps)


def test_every_exercise_model_step_has_words():
    """Every line of every exercise's model that says a step names its words (none left as a bare comment)."""
    import inspect
    import textwrap

    from encoder_lib.grading.variants.model import step_keys

    for name, exercise in grading.EXERCISES.items():
        source = textwrap.dedent(inspect.getsource(getattr(exercise.model, "func", exercise.model)))
        assert step_keys(source), f"{name}'s model marks no step"
        assert set(step_keys(source).values()) == {key for key, _ in exercise.steps}, name
