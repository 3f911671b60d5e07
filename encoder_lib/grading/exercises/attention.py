"""Lesson 01's exercises: the softmax and scaled dot-product attention."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import scaled_dot_product_attention, softmax
from ._base import Exercise, Mistake, cases, normal

# --- softmax ---------------------------------------------------------------------


def softmax_cases(rng, hidden):
    if hidden:
        shape = tuple(rng.integers(1, 6, size=rng.integers(1, 4)))
        axis = int(rng.integers(-len(shape), len(shape)))
        return cases((f"random scores {shape}, axis={axis}", [normal(rng, *shape) * 5], {"axis": axis}),
                     ("scores near 1000", [1000 + normal(rng, 3, 4)], {}))
    return cases(
        ("the row (1, 2, 3)", [np.array([1.0, 2.0, 3.0])], {}),
        ("batched scores (2, 3, 5), last axis", [normal(rng, 2, 3, 5)], {}),
        ("large scores, rows (1000, 999, 0) and (0, 1, -1000)",
         [np.array([[1000.0, 999.0, 0.0], [0.0, 1.0, -1000.0]])], {}),
        ("axis=0 of a (4, 3) array", [normal(rng, 4, 3)], {"axis": 0}),
    )


def softmax_without_max(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_wrong_axis(x, axis=-1):
    axis = axis % x.ndim
    other = 0 if axis == x.ndim - 1 else x.ndim - 1
    return softmax(x, axis=other)


def softmax_over_every_entry(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_with_one_global_maximum(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)


def softmax_sum_without_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


SOFTMAX = Exercise(
    name="softmax", lesson="01_attention", points=2,
    formula=r"\mathrm{softmax}(x)_i = \frac{e^{x_i - m}}{\sum_j e^{x_j - m}},\quad m = \max_j x_j",
    cases=softmax_cases, reference=softmax,
    mistakes=(
        Mistake("softmax_without_max",
                "exp overflows on large scores: subtract each row's maximum before np.exp "
                "(softmax(x) = softmax(x - max), and exp(1000) is inf)", softmax_without_max),
        Mistake("softmax_wrong_axis",
                "softmax over the wrong axis: normalise along `axis` (the last one by default), "
                "so each row of weights sums to 1", softmax_wrong_axis),
        Mistake("softmax_over_every_entry",
                "normalised over every entry at once: sum along `axis` with keepdims=True", softmax_over_every_entry),
        Mistake("softmax_with_one_global_maximum",
                "the maximum subtracted is the whole array's, not each row's: a row far below it (the row "
                "(0, 1, -1000) beside a 1000) has every exp underflow to 0, and 0 / 0 is NaN; subtract "
                "x.max(axis=axis, keepdims=True)", softmax_with_one_global_maximum),
        Mistake("softmax_sum_without_keepdims",
                "a sum without keepdims=True: e.sum(axis=axis) drops the axis, so it no longer lines up with e "
                "(shapes (2, 3, 5) and (2, 3) do not broadcast); keep it with keepdims=True",
                softmax_sum_without_keepdims),
    ),
)

# --- scaled dot-product attention --------------------------------------------------


def attention_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
        s_q, s_k, d_k, d_v = (int(n) for n in rng.integers(1, 7, size=4))
        d_k += 2
        return cases((f"random q {lead + (s_q, d_k)}, k {lead + (s_k, d_k)}, v {lead + (s_k, d_v)}",
                      [normal(rng, *lead, s_q, d_k) * 2, normal(rng, *lead, s_k, d_k) * 2,
                       normal(rng, *lead, s_k, d_v)], {}))
    return cases(
        ("the lesson's tie case (output 7)", fixtures.lesson_tie_case(), {}),
        ("3 queries, 5 keys, d_k 4, d_v 2", [normal(rng, 3, 4) * 2, normal(rng, 5, 4) * 2, normal(rng, 5, 2)], {}),
        ("a batch (2, 4, 6, 8)", [normal(rng, 2, 4, 6, 8), normal(rng, 2, 4, 6, 8), normal(rng, 2, 4, 6, 8)], {}),
    )


def attention_scaled(q, k, v, *, factor):
    """Attention with the queries multiplied by ``factor(d_k)``: the library's 1/sqrt(d_k) times that."""
    return scaled_dot_product_attention(q * factor(q.shape[-1]), k, v)


def attention_with_k_dot_T(q, k, v):
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v, weights


def attention_weights_over_the_queries(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = softmax(scores, axis=-2)
    return weights @ v, weights


def attention_returns_weights_first(q, k, v):
    return scaled_dot_product_attention(q, k, v)[::-1]


def _inverse_root(d):
    return 1 / np.sqrt(d)


SCALED_DOT_PRODUCT_ATTENTION = Exercise(
    name="scaled_dot_product_attention", lesson="01_attention", points=2,
    formula=r"\mathrm{attention}(q, k, v) = \mathrm{softmax}\!\left(\frac{q k^\top}{\sqrt{d_k}}\right) v",
    cases=attention_cases, reference=scaled_dot_product_attention,
    mistakes=(
        Mistake("attention_without_scaling",
                "no 1/sqrt(d_k) scaling: divide the scores q k^T by sqrt(d_k) before the softmax",
                partial(attention_scaled, factor=np.sqrt)),
        Mistake("attention_divided_by_d_k",
                "scores divided by d_k: the scale is 1/sqrt(d_k), the square root of the key size",
                partial(attention_scaled, factor=_inverse_root)),
        Mistake("attention_weights_over_the_queries",
                "softmax over the queries: each query's weights (a row, the last axis) must sum to 1",
                attention_weights_over_the_queries),
        Mistake("attention_returns_weights_first",
                "returned (weights, out): return the output first, then the weights", attention_returns_weights_first),
        Mistake("attention_with_k_dot_T",
                "k.T reverses every axis of a batched k, (2, 4, 6, 8) -> (8, 6, 4, 2); swap only the last two: "
                "np.swapaxes(k, -1, -2)", attention_with_k_dot_T),
    ),
    uses=("softmax",), may_call=("softmax",),
)

EXERCISES = (SOFTMAX, SCALED_DOT_PRODUCT_ATTENTION)
