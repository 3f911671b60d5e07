"""Measured numbers, shapes and indices as a learner reads them in a sentence: 0.3333, (2, 5), [1, 0]."""

import numpy as np


def number(v, digits=4):
    """A number as a learner reads it: 0.3333, 1e-05, -2, inf."""
    v = float(v)
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v))
    return f"{v:.{digits}g}"


def numbers(values, digits=4, most=6):
    """``(0.09, 0.2447, 0.6652)``: a short vector, cut after ``most`` entries."""
    values = list(np.ravel(values))
    text = ", ".join(number(v, digits) for v in values[:most])
    return f"({text}{', ...' if len(values) > most else ''})"


def index(ix):
    return "[" + ", ".join(str(int(i)) for i in ix) + "]"


def span(values, digits=3, target=None):
    """``0.148`` or ``0.148 to 0.185``: the range of some measured values; with ``target`` (what they should be),
    with as many digits as it takes to tell them from it (1.003, not 1)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if target is not None:
        while digits < 12 and any(number(v, digits) == number(target, digits) and not np.isclose(v, target, rtol=0,
                                                                                                 atol=1e-12)
                                  for v in (lo, hi)):
            digits += 1
    if np.isclose(lo, hi, rtol=10.0 ** -digits, atol=1e-12):
        return number(lo, digits)
    return f"{number(lo, digits)} to {number(hi, digits)}"


def shape_text(shape):
    return "(" + ", ".join(str(int(s)) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def softmax_row_off(weights, scores, keep=None):
    """The first row (an index into the leading axes) whose weights are not a softmax of its scores up to a
    constant shift: log(w) - s must be one number across the row's kept entries. None if every row is."""
    for i in np.ndindex(weights.shape[:-1]):
        on = np.ones(weights.shape[-1], dtype=bool) if keep is None else keep[i]
        w, sc = weights[i][on], scores[i][on]
        if len(w) < 2 or (w <= 0).any():
            continue
        gaps = np.log(w) - sc
        if np.ptp(gaps) > 1e-6:
            return i
    return None
