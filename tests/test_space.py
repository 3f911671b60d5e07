"""Every check is drawn from the inputs an exercise's docstring allows (``encoder_lib.grading.space``), and an answer's
precision is part of the answer: the self-check's generated checks and the grader's hidden ones come from one space,
reach past the lesson's inputs, and a float32 step anywhere fails with words that say what was measured."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import erf

import encoder_lib as el
from encoder_lib.grading import EXERCISES, compare
from encoder_lib.grading.exercises._base import ExerciseFileError, read_exercises
from encoder_lib.grading.self_check import verdict_for
from encoder_lib.grading.space import Space


def largest(value):
    values = value if isinstance(value, tuple) else (value,)
    return max(float(np.abs(v).max()) for v in values if np.size(v))


def first_rank(case):
    arrays = [a for a in case.args if isinstance(a, np.ndarray)]
    return arrays[0].ndim if arrays else None


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_generated_checks_reach_every_corner_of_the_grid_and_every_value_of_the_space(name):
    space = EXERCISES[name].space
    for seed in (0, 1):
        points = space.points(np.random.default_rng(seed))
        options = {n: space._options(n) for n in ("lead", "regime", *space.sizes)}
        seen = {"lead": {len(p.lead) for p in points}, "regime": {p.regime for p in points},
                **{n: {p.sizes[n] for p in points} for n in space.sizes}}
        assert all(set(options[n]) <= seen[n] for n in options), (seed, seen)
        corners = {tuple(len(p.lead) if g == "lead" else p.regime if g == "regime" else p.sizes[g]
                         for g in space.grid) for p in points}
        assert corners == set(itertools.product(*(options[g] for g in space.grid)))


#: Exercises whose outputs cannot exceed a bound that the lesson's checks already reach: weights, sines.
BOUNDED = {"masked_softmax": 1.0, "positional_encoding": 1.0}


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_the_self_check_s_generated_checks_reach_past_the_lesson_s_inputs(name):
    """Larger outputs than any lesson's check (a result clipped at the lesson's range fails), and, where batch axes
    are allowed, ranks the lesson never shows."""
    exercise = EXERCISES[name]
    lesson = compare.build_cases(exercise)
    drawn = compare.build_cases(exercise, generated=True, visible=False)
    assert drawn and all(c.point is not None and not c.hidden for c in drawn)
    widest = max(largest(c.expected) for c in lesson)
    assert max(largest(c.expected) for c in drawn) > 1.01 * widest or widest == BOUNDED.get(name), name
    if exercise.space.lead[1] > 0:
        assert {first_rank(c) for c in drawn} - {first_rank(c) for c in lesson}, name


def test_the_grader_s_hidden_checks_come_from_the_same_space_with_the_course_s_secret():
    exercise = EXERCISES["split_heads"]
    hidden = compare.build_cases(exercise, compare.hidden_rngs(7, "split_heads"), visible=False)
    assert hidden and all(c.hidden and c.point is not None for c in hidden)
    assert {c.point.sizes["n_heads"] for c in hidden} == set(exercise.space.sizes["n_heads"])
    again = compare.build_cases(exercise, compare.hidden_rngs(7, "split_heads"), visible=False)
    other = compare.build_cases(exercise, compare.hidden_rngs(8, "split_heads"), visible=False)
    assert all(np.array_equal(a.args[0], b.args[0]) for a, b in zip(hidden, again))
    assert not all(a.args[0].shape == b.args[0].shape and np.allclose(a.args[0], b.args[0])
                   for a, b in zip(hidden, other))


def test_a_space_says_which_of_its_keys_is_wrong():
    base = {"lesson": "01", "points": 1, "formula": "x", "cases": "f", "reference": "f", "draw": "f", "model": "f",
            "hints": ["idea", "step"]}

    def f(x):
        return x

    for space, words in (({"regimes": {"a": "b"}, "sizes": {"n": [1]}, "grid": ["m"]}, "grid names 'm'"),
                         ({"regimes": {"a": "b"}, "shapes": [1]}, "space.shapes: not a key of a space"),
                         ({"regimes": {}}, "at least one regime"),
                         ({"regimes": {"a": "b"}, "lead": [2, 1]}, r"lead is \[2, 1\]"),
                         ({"regimes": {"a": "b"}, "once": ["c"]}, "once names a regime")):
        with pytest.raises(ExerciseFileError, match=words):
            read_exercises({"f": {**base, "space": space}}, {"f": f, "__name__": "m"}, "m.toml")
    point = Space({"a": "words"}, sizes={"n": (1,)}).points(np.random.default_rng(0))[0]
    with pytest.raises(KeyError, match="no size 'm'"):
        point["m"]


def answer(source, name):
    namespace = {"np": np, "el": el, "erf": erf, "math": math}
    exec(source, namespace)  # noqa: S102 - the tests' own answers
    return namespace[name]


@pytest.mark.parametrize("source, words", [
    ("def gelu(x):\n    return (0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32)\n",
     "the result is float32, but the inputs are float64"),
    ("def gelu(x):\n    return (0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32).astype(np.float64)\n",
     "every number in it is a float32 number"),
    ("def gelu(x):\n    x = x.astype(np.float32).astype(np.float64)\n    return 0.5 * x * (1 + erf(x / np.sqrt(2)))\n",
     "a right answer in float64 agrees to 12 or more"),
    ("def gelu(x):\n    return (0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float16)\n",
     "keeps about 3 digits"),
])
def test_a_result_at_a_lower_precision_fails_and_is_told_what_was_measured_and_no_cause(source, words):
    verdict = verdict_for(answer(source, "gelu"))
    report = verdict.report()
    assert not verdict.passed and words in report.lower()
    assert verdict.causes == [] and "Tried" not in verdict.explanation()
    assert report.lower().count(words) == 1, report  # said once, in full; each check says it in a few words


def test_a_right_answer_in_float64_agrees_to_far_more_digits_than_the_checks_ask():
    for name, exercise in EXERCISES.items():
        for case in compare.build_cases(exercise, compare.hidden_rngs(3, name), generated=True):
            model = exercise.model(*compare.callable_inputs(case.args), **compare.callable_inputs(case.kwargs))
            assert compare.close(model, case.expected, tolerance=compare.CHECK / 1000), (name, case.description)


def test_an_undefined_name_is_named_with_where_it_comes_from_and_nothing_else_is_tried():
    namespace = {"np": np, "el": el, "erf": erf}  # a notebook whose first cell was not run again after `import math`
    exec("def gelu(x):\n    return 0.5 * x * (1 + erf(x / math.sqrt(2)))\n", namespace)  # noqa: S102
    verdict = verdict_for(namespace["gelu"])
    assert "`math` is not defined where your answer ran" in verdict.explanation()
    assert "first code cell imports" in verdict.explanation() and "Tried" not in verdict.explanation()
    exec("def gelu(x):\n    return 0.5 * x * (1 + erff(x / np.sqrt(2)))\n", namespace)  # noqa: S102
    assert "spelling of `erff`" in verdict_for(namespace["gelu"]).explanation()


def test_two_answers_that_only_raise_the_same_errors_are_not_told_the_same_cause():
    """PyTorch's weight layout, (out, in), raises on every check but where the weights are square: no cause is said
    from errors alike (w1 and w2 swapped raise the same), only what was measured."""
    verdict = verdict_for(answer('''
def feed_forward(x, params, activation="relu"):
    h = x @ params["w1"].T + params["b1"]
    h = np.maximum(h, 0) if activation == "relu" else gelu(h)
    return h @ params["w2"].T + params["b2"]
''', "feed_forward"))
    assert not verdict.passed
    assert all("transposed" in c.sentence for c in verdict.causes), [c.sentence for c in verdict.causes]


def test_where_the_space_fails_is_said_by_the_feature_that_parts_the_checks():
    verdict = verdict_for(answer('''
def split_heads(x, n_heads):
    if x.ndim > 3:
        raise ValueError("only up to a batch")
    *lead, seq, d = x.shape
    return np.swapaxes(x.reshape(*lead, seq, n_heads, d // n_heads), -2, -3).copy()
''', "split_heads"))
    assert "every one with 0 batch axes or 1 batch axis passes, and every one with 2 batch axes fails" in \
        verdict.explanation()
