"""Lesson 01's exercises: the softmax and scaled dot-product attention.

The code of its exercises: attention.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures
from ...attention import scaled_dot_product_attention, softmax
from ..in_words import number, numbers, softmax_row_off, span
from ..symptoms import Finding
from ._base import cases, load_exercises, normal, square_probe

# --- softmax ---------------------------------------------------------------------


def softmax_cases(rng):
    return cases(
        ("the row (1, 2, 3)", [np.array([1.0, 2.0, 3.0])], {}),
        ("batched scores (2, 3, 5), last axis", [normal(rng, 2, 3, 5)], {}),
        ("large scores, rows (1000, 999, 0) and (0, 1, -1000)",
         [np.array([[1000.0, 999.0, 0.0], [0.0, 1.0, -1000.0]])], {}),
        ("axis=0 of a (4, 3) array", [normal(rng, 4, 3)], {"axis": 0}),
        ("a square (3, 3) array, last axis", [normal(rng, 3, 3) * 2], {}),
    )


def softmax_draw(rng, point):
    """Scores of the point's batch shape and row length, the row along ``axis`` (first, last or inner)."""
    x = scores_in(rng, point.regime, (*point.lead, point["row"]))
    axis = {"first": 0, "last": -1, "inner": -2}[point["axis"]]
    axis = axis if -x.ndim <= axis < x.ndim else -1
    x = np.moveaxis(x, -1, axis)
    return f"scores {x.shape}, axis={axis}", [x], {"axis": axis}


def scores_in(rng, regime, shape):
    """Scores of ``shape`` in a regime: "ordinary" (a few units), "large" (near 1000) or "wide" (each row spans
    -1000 to 1000: its first entry -1000 and its last 1000, where it has two)."""
    if regime == "large":
        return 1000 + normal(rng, *shape) * 3
    if regime == "wide":
        x = rng.uniform(-1000, 1000, shape)
        if shape[-1] > 1:
            x[..., 0], x[..., -1] = -1000.0, 1000.0
        return x
    return normal(rng, *shape) * 5


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
    shifted = x - x.max(axis=axis, keepdims=True)  # step: shifted
    e = np.exp(shifted)  # step: e
    return e / e.sum(axis=axis, keepdims=True)  # step: result


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


# --- scaled dot-product attention --------------------------------------------------


def attention_probes(rng):
    return square_probe("q, k and v (4, 4): as many positions as features", normal(rng, 4, 4), normal(rng, 4, 4),
                        normal(rng, 4, 4))


def attention_cases(rng):
    return cases(
        ("the lesson's tie case (output 7)", fixtures.lesson_tie_case(), {}),
        ("3 queries, 5 keys, d_k 4, d_v 2", [normal(rng, 3, 4) * 2, normal(rng, 5, 4) * 2, normal(rng, 5, 2)], {}),
        ("a batch (2, 4, 6, 8)", [normal(rng, 2, 4, 6, 8), normal(rng, 2, 4, 6, 8), normal(rng, 2, 4, 6, 8)], {}),
    )


def attention_draw(rng, point):
    """q, k and v of the point's sizes; "large": each times 100, so that the scores reach the tens of thousands."""
    lead, s_q, s_k, d_k, d_v = point.lead, point["seq_q"], point["seq_k"], point["d_k"], point["d_v"]
    scale = 100.0 if point.regime == "large" else 2.0
    q, k = normal(rng, *lead, s_q, d_k) * scale, normal(rng, *lead, s_k, d_k) * scale
    v = normal(rng, *lead, s_k, d_v) * (scale if point.regime == "large" else 1.0)
    return f"q {q.shape}, k {k.shape}, v {v.shape}", [q, k, v], {}


def attention_scaled(q, k, v, *, factor):
    """Attention with the queries multiplied by ``factor(d_k)``: the library's 1/sqrt(d_k) times that."""
    return scaled_dot_product_attention(q * factor(q.shape[-1]), k, v)


def attention_without_scaling(*args, **kwargs):
    """The scores not divided by sqrt(d_k): ``attention_scaled`` by sqrt(d_k), called as the exercise is."""
    return attention_scaled(*args, factor=np.sqrt, **kwargs)


def attention_divided_by_d_k(*args, **kwargs):
    """The scores divided by d_k: ``attention_scaled`` by 1/sqrt(d_k), called as the exercise is."""
    return attention_scaled(*args, factor=_inverse_root, **kwargs)


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
    scores = q @ np.swapaxes(k, -1, -2)  # step: scores
    scaled = scores / np.sqrt(q.shape[-1])  # step: scaled
    weights = softmax(scaled, axis=-1)  # step: weights
    return weights @ v, weights  # step: result


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


#: The lesson's exercises, as attention.toml declares them.
EXERCISES = load_exercises(globals())
