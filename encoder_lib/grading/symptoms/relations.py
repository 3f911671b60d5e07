"""How a wrong answer's output relates to the right one (the right one plus an input, times a constant, wrong
past a value), and where in the exercise's input space it goes wrong: measured, never a guess at why."""

import numpy as np

from ..in_words import number
from .evidence import Finding


# ---------------------------------------------------------------- general facts: how it relates to the right one


#: Constants a ratio is named by when it is one of them (to 1e-6): what a scale slip gives.
_NAMED_RATIOS = {"2": 2.0, "1/2": 0.5, "sqrt(2)": 2 ** 0.5, "1/sqrt(2)": 2 ** -0.5, "-1": -1.0}


def _ratio_words(ratio):
    return next((name for name, value in _NAMED_RATIOS.items() if abs(ratio - value) < 1e-6), number(ratio, 6))


def fact_relation(ev):
    """An output that is exactly the right one plus one of the inputs (or minus it), or the right one times one
    constant: the relation measured, in the output's own words."""
    if ev.raised is not None:
        return None
    for name, got, expected in ev.outputs():
        if not (np.isfinite(got).all() and np.isfinite(expected).all()) or got.size < 2:
            continue
        gap = got - expected
        for input_name, value in ev.inputs.items():
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.shape == got.shape and \
                    np.abs(value).max() > 1e-3:
                for sign, words in ((1, "plus"), (-1, "minus")):
                    if np.allclose(gap, sign * value, rtol=1e-6, atol=1e-6):
                        return Finding(f"relation:{words}-input", f"{ev.where()} your {name} is exactly the right one "
                                                                  f"{words} the input `{input_name}`.")
        found = _constant_ratio(got, expected)
        if found is not None:
            return Finding("relation:ratio", f"{ev.where()} your {name} is exactly the right one times "
                                             f"{_ratio_words(found)}, at every entry.")
    return None


def _constant_ratio(got, expected):
    """The one constant ``got / expected`` is at every entry (not 1, not 0), or None."""
    big = np.abs(expected) > 1e-6
    if big.sum() < 2:
        return None
    ratio = float(np.median(got[big] / expected[big]))
    if abs(ratio - 1) < 1e-3 or abs(ratio) < 1e-9 or len(np.unique(np.round(np.abs(expected[big]), 9))) < 3 or \
            not np.allclose(got, ratio * expected, rtol=1e-6, atol=1e-9):
        return None  # near 1 (a rounding), or an output of two magnitudes (a normalised pair), whose ratio says little
    return ratio


def fact_threshold(ev):
    """Where the output is computed entry by entry from one input of its shape (GELU: the reference on the entries
    in another order gives its output in that order): the inputs the answer is right on are all on one side of a
    value, those it is wrong on all on the other."""
    found = _entrywise(ev)
    if found is None:
        return None
    x, wrong = found
    for side, below in (("below", True), ("above", False)):
        if (x[wrong].max() < x[~wrong].min()) if below else (x[wrong].min() > x[~wrong].max()):
            if ev.case.hidden:
                return Finding(f"threshold:{side}", f"{ev.where()} your result is right for every input on one "
                                                    f"side of a value and wrong for every input {side} it.")
            edge, last = (x[~wrong].min(), x[wrong].max()) if below else (x[~wrong].max(), x[wrong].min())
            return Finding(f"threshold:{side}", f"{ev.where()} your result is right for every input "
                                                f"{'from' if below else 'up to'} {number(edge, 3)} "
                                                f"{'up' if below else 'down'}, and wrong for every input {side} "
                                                f"{number(last, 3)}.")
    return None


def _entrywise(ev):
    """``(inputs, wrong)``, both flat, where the exercise maps its one float input entry by entry to an output of
    its shape; None otherwise."""
    if ev.raised is not None or isinstance(ev.expected, tuple):
        return None
    named = [(n, v) for n, v in ev.inputs.items() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    got, expected = ev.got_array(), ev.expected_array()
    if len(named) != 1 or got is None or got.shape != expected.shape or named[0][1].shape != got.shape or \
            got.size < 3:
        return None
    name, x = named[0]
    order = np.argsort(x.ravel(), kind="stable")
    shuffled = ev.reference(**{name: x.ravel()[order]})
    if shuffled is None or not np.allclose(shuffled, expected.ravel()[order], rtol=1e-12, atol=1e-12):
        return None
    wrong = ~np.isclose(got.ravel(), expected.ravel(), rtol=1e-6, atol=1e-6, equal_nan=True)
    return (x.ravel(), wrong) if wrong.any() and not wrong.all() else None


# ---------------------------------------------------------------- across the checks: where the space fails


def _point_values(point):
    """A drawn check's point as ``{feature: value}``: its regime, its number of batch axes, each of its sizes."""
    return {"regime": point.words, "lead": len(point.lead), **point.sizes}


def _listed(values, words):
    said = [words(v) for v in sorted(values, key=str)]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " or " + said[-1]


#: How a size's named values read in a sentence (the spaces' ``sizes`` whose values are words).
VALUE_WORDS = {"mask": {"some": "a mask with some padding", "all": "a mask with a sequence all padding",
                        "none": "no mask"},
               "affine": {"both": "gamma and beta", "gamma": "gamma only", "beta": "beta only",
                          "none": "no gamma or beta"},
               "norm": {"post": "post-norm", "pre": "pre-norm"},
               "projections": {"random": "random projections", "none": "identity projections"},
               "axis": {"first": "the first axis as `axis`", "last": "the last axis as `axis`",
                        "inner": "an inner axis as `axis`"},
               "eps": {"default": "the default eps"}}


def _feature_words(feature):
    if feature == "regime":
        return lambda v: str(v)
    if feature == "lead":
        return lambda v: f"{v} batch ax{'i' if v == 1 else 'e'}s"
    return lambda v: VALUE_WORDS.get(feature, {}).get(v, f"{feature} {v}")


def fact_where_the_space_fails(checks):
    """Among the checks drawn from the exercise's input space (``(point, passed)`` pairs), a feature of the points
    (the regime, the number of batch axes, one of the sizes), or two together, that parts every passing check from
    every failing one: the inputs the answer is wrong on, measured, never a guess at why. None where none does, where
    a check drawn from no point (the lesson's, whose features are not known) fails, so that the split may not hold on
    it, or where two features each part the checks (a coincidence of the draw as likely as a cause)."""
    if not all(ok for point, ok in checks if point is None):
        return None
    drawn = [(_point_values(point), ok) for point, ok in checks if point is not None]
    if not any(ok for _, ok in drawn) or all(ok for _, ok in drawn):
        return None
    features = [f for f in dict.fromkeys(("regime", "lead", *drawn[0][0])) if all(f in v for v, _ in drawn)]
    parting = [f for f in features if not {v[f] for v, ok in drawn if ok} & {v[f] for v, ok in drawn if not ok}]
    if len(parting) > 1:
        return None
    for feature in parting:
        passing = {v[feature] for v, ok in drawn if ok}
        failing = {v[feature] for v, ok in drawn if not ok}
        if _seen_twice(drawn, feature, failing):
            words = _feature_words(feature)
            return Finding(f"space:{feature}", f"Of the checks drawn from all the inputs the exercise allows, every "
                                               f"one with {_listed(passing, words)} passes, and every one with "
                                               f"{_listed(failing, words)} fails.")
    declared = [f for f in features if f in ("regime", "lead", *_grid_of(checks))]  # the corners the space names
    for i, first in enumerate(declared):
        for second in declared[i + 1:]:
            found = _parted_by_two(drawn, first, second)
            if found:
                return found
    return None


def _seen_twice(drawn, feature, values):
    """Does each of ``values`` of ``feature`` fail on two checks or more (not one check's chance)?"""
    return all(sum(1 for v, ok in drawn if not ok and v[feature] == value) >= 2 for value in values)


def _grid_of(checks):
    return next((point.grid for point, _ in checks if point is not None), ())


def _parted_by_two(drawn, first, second):
    """The checks that fail are exactly those with ``first`` among its failing values and ``second`` among its
    own: a Finding that says so, or None."""
    failing = [v for v, ok in drawn if not ok]
    values = {f: {v[f] for v in failing} for f in (first, second)}
    both = [ok for v, ok in drawn if v[first] in values[first] and v[second] in values[second]]
    if any(both) or any(values[f] == {v[f] for v, _ in drawn} for f in (first, second)) or \
            not all(_seen_twice(drawn, f, values[f]) for f in (first, second)):
        return None  # a passing check has both, or one feature takes every value among the failing: not two
    said = " and ".join(_listed(values[f], _feature_words(f)) for f in (first, second))
    return Finding(f"space:{first}+{second}", f"Of the checks drawn from all the inputs the exercise allows, every "
                                              f"one with {said} fails, and every other passes.")
