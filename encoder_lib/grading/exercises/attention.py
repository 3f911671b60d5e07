"""Lesson 01's exercises: the softmax and scaled dot-product attention."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import scaled_dot_product_attention, softmax
from ..in_words import number, numbers, softmax_row_off, span
from ..symptoms import Finding
from ._base import Exercise, Mistake, cases, normal, square_probe

# --- softmax ---------------------------------------------------------------------


KEEPDIMS_IDEA = (
    "A reduction along an axis (`x.max(axis=-1)`, `e.sum(axis=-1)`) removes that axis: from (2, 3, 5) it gives "
    "(2, 3). numpy then lines shapes up from the right, so (2, 3, 5) and (2, 3) do not match, and a square "
    "(3, 3) array silently pairs each row with the wrong number. `keepdims=True` keeps the reduced axis with "
    "length 1, (2, 3, 1), which broadcasts back along that axis. See [The softmax](#The-softmax).")
KEEPDIMS_STEP = (
    "For x of shape (2, 3): `x.max(axis=-1)` has shape (2,), one maximum per row; `x.max(axis=-1, keepdims=True)` "
    "has shape (2, 1). Then `x - x.max(axis=-1, keepdims=True)` subtracts row 0's maximum from every entry of "
    "row 0 and row 1's from row 1. Print the shapes of each step of your function on a (2, 3) input to see "
    "which one lost its axis.")


AXIS_IDEA = (
    "`axis` says which axis holds one softmax's scores: with `axis=-1` (the default) each row of the last axis "
    "is normalised on its own, with `axis=0` each column. Every reduction in your function, the maximum and the "
    "sum, must run along that same axis and keep it (`keepdims=True`), so that each group of scores sums to 1 by "
    "itself. See [The softmax](#The-softmax).")
AXIS_STEP = (
    "For the (4, 3) array with `axis=0`, each of the 3 columns is one softmax: `x.max(axis=0, keepdims=True)` "
    "has shape (1, 3), one maximum per column, and the sum along axis 0 is (1, 3) as well. After dividing, "
    "`weights.sum(axis=0)` prints (1, 1, 1). Try that print on your result: the axis whose sums are all 1 is the "
    "axis your function normalised over.")


def softmax_cases(rng, hidden):
    if hidden:
        shape = tuple(int(n) for n in rng.integers(1, 6, size=rng.integers(1, 4)))
        axis = int(rng.integers(-len(shape), len(shape)))
        return cases((f"random scores {shape}, axis={axis}", [normal(rng, *shape) * 5], {"axis": axis}),
                     ("scores near 1000", [1000 + normal(rng, 3, 4)], {}))
    return cases(
        ("the row (1, 2, 3)", [np.array([1.0, 2.0, 3.0])], {}),
        ("batched scores (2, 3, 5), last axis", [normal(rng, 2, 3, 5)], {}),
        ("large scores, rows (1000, 999, 0) and (0, 1, -1000)",
         [np.array([[1000.0, 999.0, 0.0], [0.0, 1.0, -1000.0]])], {}),
        ("axis=0 of a (4, 3) array", [normal(rng, 4, 3)], {"axis": 0}),
        ("a square (3, 3) array, last axis", [normal(rng, 3, 3) * 2], {}),
    )


def softmax_without_max(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def softmax_wrong_axis(x, axis=-1):
    return softmax(x, axis=0)


def softmax_over_every_entry(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()


def softmax_with_one_global_maximum(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)


def softmax_max_without_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_sum_without_keepdims(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)


def softmax_model(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)  # each row's own maximum (along `axis`) is subtracted from it
    e = np.exp(shifted)  # the shifted scores are exponentiated
    return e / e.sum(axis=axis, keepdims=True)  # each row is divided by its own sum (along `axis`)


def weights_sum_to_one(ev):
    """Softmax's weights sum to 1 along ``axis``: if not, along which axis (or over everything) they do."""
    got = ev.got_array()
    if got is None or got.shape != ev.expected.shape or not np.isfinite(got).all():
        return None
    axis = ev.value("axis") % got.ndim
    sums = got.sum(axis=axis)
    if np.allclose(sums, 1, atol=1e-6):
        return None
    said = f"{ev.where()} a softmax's weights sum to 1 along `axis` ({ev.value('axis')}); yours sum to {span(sums, target=1)}"
    if got.size > got.shape[axis] and np.isclose(got.sum(), 1, atol=1e-6):
        return Finding("sums:everything", said + ", and the whole array sums to 1.")
    other = next((a for a in range(got.ndim) if a != axis and np.allclose(got.sum(axis=a), 1, atol=1e-6)), None)
    if other is not None:
        return Finding("sums:other-axis", said + f", and along axis {other - got.ndim} they do sum to 1.")
    return Finding("sums", said + ".")


def weights_follow_the_scores(ev):
    """A softmax keeps the order of the scores along ``axis``: the larger score gets the larger weight."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all():
        return None
    axis = ev.value("axis") % x.ndim
    order = np.argsort(np.moveaxis(x, axis, -1), axis=-1, kind="stable")
    ranked = np.take_along_axis(np.moveaxis(got, axis, -1), order, axis=-1)
    backwards = np.diff(ranked, axis=-1) < -1e-9
    if backwards.any():
        row = np.argwhere(backwards.any(axis=-1))[0]
        scores = np.moveaxis(x, axis, -1)[tuple(row)]
        weights = np.moveaxis(got, axis, -1)[tuple(row)]
        return Finding("order", f"{ev.where()} a softmax gives the larger score the larger weight along `axis`, but "
                                f"in one row of yours the scores{ev.quote(scores)} get the weights "
                                f"{number_list(weights)}.")
    rows_scores, rows_weights = np.moveaxis(x, axis, -1), np.moveaxis(got, axis, -1)
    row = softmax_row_off(rows_weights, rows_scores)
    if row is not None and np.allclose(got.sum(axis=axis), 1, atol=1e-6):
        return Finding("ratios", f"{ev.where()} along `axis` a softmax's weights are proportional to exp(score), "
                                 f"but one row of yours gets {numbers(rows_weights[row], 3)} for the "
                                 f"scores{ev.quote(rows_scores[row])}.")
    return None


def number_list(values):
    return "(" + ", ".join(number(v, 3) for v in values[:6]) + (", ..." if len(values) > 6 else "") + ")"


SOFTMAX = Exercise(
    name="softmax", lesson="01_attention", points=2,
    formula=r"\mathrm{softmax}(x)_i = \frac{e^{x_i - m}}{\sum_j e^{x_j - m}},\quad m = \max_j x_j",
    cases=softmax_cases, reference=softmax, model=softmax_model,
    mistakes=(
        Mistake("softmax_without_max",
                "exp overflows on large scores: subtract each row's maximum before np.exp "
                "(softmax(x) = softmax(x - max), and exp(1000) is inf)", softmax_without_max, hints=(
                    "`np.exp(1000)` is `inf` in float64 (the largest float is about 1.8e308, and e^710 is already "
                    "larger), and inf / inf is NaN. A softmax only depends on the differences between scores: "
                    "softmax(x) = softmax(x - c) for any constant c along the row, because e^-c cancels between "
                    "numerator and sum. With c the row's maximum, every exponent is at most 0. See "
                    "[The softmax](#The-softmax), where `softmax(scores + 100)` equals `softmax(scores)`.",
                    "The row (1000, 999, 0): its maximum is 1000, and 1000 - max gives (0, -1, -1000); `exp` of "
                    "those is (1, 0.368, 0), which sum to 1.368, so the weights are (0.731, 0.269, 0). No "
                    "exponent is above 0, so nothing overflows; the tiny one underflows to 0, which is harmless. "
                    "One line does the shift for every row: `x - x.max(axis=axis, keepdims=True)`.")),
        Mistake("softmax_wrong_axis",
                "softmax over axis 0 whatever `axis` says: normalise along `axis` (the last one by default), "
                "so each row of weights sums to 1", softmax_wrong_axis, hints=(AXIS_IDEA, AXIS_STEP)),
        Mistake("softmax_over_every_entry",
                "normalised over every entry at once: sum along `axis` with keepdims=True", softmax_over_every_entry,
                hints=(AXIS_IDEA, AXIS_STEP)),
        Mistake("softmax_with_one_global_maximum",
                "the maximum subtracted is the whole array's, not each row's: a row far below it (the row "
                "(0, 1, -1000) beside a 1000) has every exp underflow to 0, and 0 / 0 is NaN; subtract "
                "x.max(axis=axis, keepdims=True)", softmax_with_one_global_maximum, hints=(
                    "Subtracting a constant leaves a softmax unchanged only if it is the same constant for the whole "
                    "row. `x.max()` with no axis is one number for the whole array: a row whose scores are all far "
                    "below it gets exponents like -1000, which underflow to 0, and 0 / 0 is NaN. Each row needs "
                    "its own maximum. See [The softmax](#The-softmax).",
                    "Rows (1000, 999, 0) and (0, 1, -1000): the whole array's maximum is 1000, so row 1 becomes "
                    "(-1000, -999, -2000), whose `exp` is (0, 0, 0) in float64: its sum is 0. Each row's own "
                    "maximum, 1000 and 1, gives (0, -1, -1000) and (-1, 0, -1001): both rows then have an "
                    "exponent of 0, so their sums are at least 1. `x.max(axis=axis, keepdims=True)` is the "
                    "maximum of each row.")),
        Mistake("softmax_max_without_keepdims",
                "a maximum without keepdims=True: x.max(axis=axis) drops the axis, so x - max no longer lines up "
                "with x (shapes (2, 3, 5) and (2, 3) do not broadcast, and a square array subtracts each column's "
                "maximum from each row); keep it with keepdims=True", softmax_max_without_keepdims,
                hints=(KEEPDIMS_IDEA, KEEPDIMS_STEP)),
        Mistake("softmax_sum_without_keepdims",
                "a sum without keepdims=True: e.sum(axis=axis) drops the axis, so it no longer lines up with e "
                "(shapes (2, 3, 5) and (2, 3) do not broadcast); keep it with keepdims=True",
                softmax_sum_without_keepdims, hints=(KEEPDIMS_IDEA, KEEPDIMS_STEP)),
    ),
    properties=(weights_sum_to_one, weights_follow_the_scores),
    hints=(
        "A softmax turns one row of scores into weights: exponentiate every score, then divide each by the row's "
        "sum, so the weights are positive and add up to 1. Subtracting the row's largest score first changes "
        "nothing in the result (the factor e^-max cancels) but keeps `exp` from overflowing on scores like "
        "1000. \"Row\" means along `axis`: every reduction (the maximum, the sum) runs along that axis only. "
        "The lesson's section [The softmax](#The-softmax) shows all three effects.",
        "Take the row (1, 2, 3). Its maximum is 3; subtracting it gives (-2, -1, 0), and `exp` of those is "
        "(0.135, 0.368, 1), which sum to 1.503. Dividing by 1.503 gives (0.090, 0.245, 0.665): positive, summing "
        "to 1, the largest score with the largest weight. For many rows at once, a reduction such as "
        "`x.max(axis=axis, keepdims=True)` keeps the reduced axis with length 1, so it lines up with `x` again.",
    ),
)

# --- scaled dot-product attention --------------------------------------------------


SCALE_IDEA = (
    "A dot product of two random d_k-dimensional vectors grows like sqrt(d_k): its variance is d_k. Without "
    "dividing the scores by sqrt(d_k), wide keys give huge scores and the softmax saturates to one-hot weights; "
    "dividing by d_k instead over-corrects and flattens them. The lesson's section on why the scores are divided by sqrt(d_k) measures the variance, and the widget in [Try it](#Try-it) shows the weights saturate.")
SCALE_STEP = (
    "With d_k = 4, sqrt(d_k) = 2: a score q \u00b7 k = 6 becomes 3 before the softmax. In code the scale comes from "
    "the queries' last axis, `d_k = q.shape[-1]`, and the scores are divided by `np.sqrt(d_k)`, once, before "
    "the softmax. Print your scores' spread (`scores.std()`) on random q and k of d_k = 64: scaled, it is "
    "near 1; unscaled, near 8.")


def attention_probes(rng):
    return square_probe("q, k and v (4, 4): as many positions as features", normal(rng, 4, 4), normal(rng, 4, 4),
                        normal(rng, 4, 4))


def attention_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3)))
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


def attention_model(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2)  # each query is compared with every key (q times k with its last two axes swapped)
    scaled = scores / np.sqrt(q.shape[-1])  # the scores are divided by sqrt(d_k), d_k the last axis of q
    weights = softmax(scaled, axis=-1)  # each query's scores become weights over the keys (the last axis)
    return weights @ v, weights  # each query's output is its weights times the values, returned before the weights


def _inverse_root(d):
    return 1 / np.sqrt(d)


def _attention_outputs(ev):
    """The answer's (out, weights) as arrays of the right shapes, or None."""
    out, weights = ev.got_array(0), ev.got_array(1)
    if out is None or weights is None or out.shape != ev.expected[0].shape or weights.shape != ev.expected[1].shape:
        return None
    return out, weights


def attention_weights_sum_over_the_keys(ev):
    """Each query's weights (a row: the last axis, one entry per key) sum to 1."""
    found = _attention_outputs(ev)
    if found is None or not np.isfinite(found[1]).all():
        return None
    weights = found[1]
    sums = weights.sum(axis=-1)
    if np.allclose(sums, 1, atol=1e-6):
        return None
    said = (f"{ev.where()} each query's weights (a row, one entry per key) sum to 1; yours sum to "
            f"{span(sums, target=1)}")
    if weights.ndim >= 2 and np.allclose(weights.sum(axis=-2), 1, atol=1e-6):
        return Finding("weights:over-queries", said + ", and each column of yours (axis -2) sums to 1.")
    return Finding("weights:sum", said + ".")


def attention_output_is_weights_times_values(ev):
    """The output is the answer's own weights times v: each query's output is a weighted mean of the values."""
    found = _attention_outputs(ev)
    if found is None:
        return None
    out, weights = found
    v = ev.value("v")
    mine = weights @ v
    if np.allclose(out, mine, atol=1e-6):
        return None
    gap = float(np.abs(out - mine).max())
    return Finding("out:not-weights-times-v",
                   f"{ev.where()} the output is the weights times the values, but your out is not your weights @ v "
                   f"(they differ by up to {number(gap, 3)}).")


def fitted_temperature(weights, scores):
    """t with weights = softmax(scores * t) in every row (to 1e-6), or None: read off the log-weights."""
    if weights.shape != scores.shape or not (weights > 1e-12).all():
        return None
    logs = np.log(weights)
    a = scores - scores.mean(axis=-1, keepdims=True)
    b = logs - logs.mean(axis=-1, keepdims=True)
    denominator = float((a * a).sum())
    if denominator < 1e-12:
        return None
    t = float((a * b).sum()) / denominator
    return t if np.allclose(weights, softmax(scores * t), atol=1e-6) else None


def attention_scale(ev):
    """Which scale of q kᵀ the answer's weights are a softmax of: 1/sqrt(d_k) is right."""
    found = _attention_outputs(ev)
    if found is None:
        return None
    q, k = ev.value("q"), ev.value("k")
    d_k, seq_q, seq_k = q.shape[-1], q.shape[-2], k.shape[-2]
    t = fitted_temperature(found[1], q @ np.swapaxes(k, -1, -2))
    if t is None or abs(t * np.sqrt(d_k) - 1) < 1e-6:
        return None
    named = {1.0: "1 (no scaling)", 1 / d_k: f"1/d_k = 1/{d_k}", np.sqrt(d_k): f"sqrt(d_k) = {number(np.sqrt(d_k))}",
             1 / np.sqrt(seq_q): f"1/sqrt({seq_q}), with {seq_q} the number of queries",
             1 / np.sqrt(seq_k): f"1/sqrt({seq_k}), with {seq_k} the number of keys"}
    words = next((w for f, w in named.items() if abs(t - f) < 1e-6 * max(1, f)), number(t, 4))
    return Finding("attention:scale",
                   f"{ev.where()} your weights are the softmax of q k\u1d40 times {words}; the scale is "
                   f"1/sqrt(d_k) = 1/{number(np.sqrt(d_k))}, from the last axis of q.")


SCALED_DOT_PRODUCT_ATTENTION = Exercise(
    name="scaled_dot_product_attention", lesson="01_attention", points=2,
    formula=r"\mathrm{attention}(q, k, v) = \mathrm{softmax}\!\left(\frac{q k^\top}{\sqrt{d_k}}\right) v",
    cases=attention_cases, reference=scaled_dot_product_attention, model=attention_model, probes=attention_probes,
    mistakes=(
        Mistake("attention_without_scaling",
                "no 1/sqrt(d_k) scaling: divide the scores q k^T by sqrt(d_k) before the softmax",
                partial(attention_scaled, factor=np.sqrt), hints=(SCALE_IDEA, SCALE_STEP)),
        Mistake("attention_divided_by_d_k",
                "scores divided by d_k: the scale is 1/sqrt(d_k), the square root of the key size",
                partial(attention_scaled, factor=_inverse_root), hints=(SCALE_IDEA, SCALE_STEP)),
        Mistake("attention_weights_over_the_queries",
                "softmax over the queries: each query's weights (a row, the last axis) must sum to 1",
                attention_weights_over_the_queries),
        Mistake("attention_returns_weights_first",
                "returned (weights, out): return the output first, then the weights", attention_returns_weights_first),
        Mistake("attention_with_k_dot_T",
                "k.T reverses every axis of a batched k, (2, 4, 6, 8) -> (8, 6, 4, 2); swap only the last two: "
                "np.swapaxes(k, -1, -2)", attention_with_k_dot_T, hints=(
                    "For a 2-D k of shape (seq_k, d_k), `k.T` is (d_k, seq_k), which is what q @ k\u1d40 needs. For a "
                    "batch, `.T` reverses every axis: (2, 4, 6, 8) becomes (8, 6, 4, 2), and the batch axes end up "
                    "at the back. Only the last two axes should swap, whatever stands in front of them. The "
                    "lesson's shape table in [The idea](#The-idea) says which axis is which.",
                    "With q and k of shape (2, 4, 6, 8): `np.swapaxes(k, -1, -2)` has shape (2, 4, 8, 6), and "
                    "q @ that is (2, 4, 6, 6), one score per query and key in each of the 2 x 4 batches. "
                    "`k.T` would be (8, 6, 4, 2), which matmul cannot pair with (2, 4, 6, 8). Print `k.shape` and "
                    "the shape you transpose it to.")),
    ),
    uses=("softmax",), may_call=("softmax",),
    properties=(attention_weights_sum_over_the_keys, attention_output_is_weights_times_values, attention_scale),
    outputs=("out", "weights"),
    hints=(
        "Each query compares itself with every key by a dot product: q @ k\u1d40 gives one score per (query, key) "
        "pair, shape (..., seq_q, seq_k). Divided by sqrt(d_k), a softmax over the last axis turns each query's "
        "row of scores into weights that sum to 1, and weights @ v mixes the value rows with those weights. The "
        "function returns both, output first. The section [Attention on a small example](#Attention-on-a-small-example) "
        "shows the weights and checks out[0] = weights[0] @ v.",
        "One query q = (1, 0), two keys (1, 0) and (0, 1), values (1) and (3), so d_k = 2. The scores are "
        "(1, 0) / sqrt(2) = (0.707, 0); their softmax is (0.670, 0.330); the output is 0.670 x 1 + 0.330 x 3 = "
        "1.660. For a batch, the same happens in every batch entry at once: scores of shape (..., seq_q, seq_k). "
        "Check that your weights' rows sum to 1 and that out equals weights @ v.",
    ),
)

EXERCISES = (SOFTMAX, SCALED_DOT_PRODUCT_ATTENTION)
