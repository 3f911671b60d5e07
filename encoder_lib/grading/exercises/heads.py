"""Lesson 02's exercises: splitting and merging heads, and multi-head attention.

The code of its exercises: heads.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures
from ...attention import merge_heads, scaled_dot_product_attention, softmax, split_heads
from ...attention import multi_head_attention  # heads.toml's reference
from ..compare import NotApplicable
from ..in_words import shape_text, span
from ..symptoms import Finding
from ._base import cases, load_exercises, normal, random_attention_params, square_probe


# --- split_heads -----------------------------------------------------------------


def split_cases(rng):
    return cases(
        ("the lesson's input (3, 4) into 2 heads", [fixtures.lesson_input()], {"n_heads": 2}),
        ("(2, 5, 12) into 3 heads", [normal(rng, 2, 5, 12)], {"n_heads": 3}),
    )


def split_draw(rng, point):
    n_heads, d_head = point["n_heads"], point["d_head"]
    x = normal(rng, *point.lead, point["seq"], n_heads * d_head)
    return f"{x.shape} into {n_heads} heads of {d_head}", [x], {"n_heads": n_heads}


def split_heads_without_transpose(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, n_heads, seq, d_model // n_heads)


def split_heads_interleaved(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.moveaxis(x.reshape(*lead, seq, d_model // n_heads, n_heads), -1, -3)


def split_heads_for_a_batch_only(x, n_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)


def split_heads_for_one_sequence_only(x, n_heads):
    seq, d_model = x.shape
    return x.reshape(seq, n_heads, d_model // n_heads).transpose(1, 0, 2)


def split_heads_model(x, n_heads):
    *lead, seq, d_model = x.shape  # step: shape
    cut = x.reshape(*lead, seq, n_heads, d_model // n_heads)  # step: cut
    return np.swapaxes(cut, -3, -2)  # step: result


def heads_shape(ev):
    """split_heads gives (..., n_heads, seq, d_head): the head axis in front of the positions."""
    got = ev.got_array()
    x, n_heads = ev.value("x"), ev.value("n_heads")
    if got is None or got.shape == ev.expected.shape or got.size != x.size:
        return None
    *lead, seq, d_model = x.shape
    if got.shape == (*lead, seq, n_heads, d_model // n_heads):
        return Finding("heads:no-swap",
                       f"{ev.where()} your result has shape {shape_text(got.shape)}, (..., seq, n_heads, d_head); "
                       f"split_heads puts the head axis before seq, {shape_text(ev.expected.shape)}.")
    return None


# --- merge_heads -----------------------------------------------------------------


def merge_cases(rng):
    return cases(
        ("2 heads of (3, 2)", [normal(rng, 2, 3, 2)], {}),
        ("a batch (2, 3, 5, 4)", [normal(rng, 2, 3, 5, 4)], {}),
    )


def merge_draw(rng, point):
    x = normal(rng, *point.lead, point["n_heads"], point["seq"], point["d_head"])
    return f"{x.shape}: {point['n_heads']} heads", [x], {}


def merge_heads_model(x):
    *lead, n_heads, seq, d_head = x.shape  # step: shape
    together = np.swapaxes(x, -3, -2)  # step: together
    return together.reshape(*lead, seq, n_heads * d_head)  # step: result


def merge_heads_without_transpose(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)


def merge_heads_in_the_wrong_order(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.moveaxis(x, -3, -1).reshape(*lead, seq, n_heads * d_head)  # (..., seq, d_head, n_heads)


def merge_heads_swapping_the_last_two_axes(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(x, -1, -2).reshape(*lead, seq, n_heads * d_head)


def merge_heads_for_a_batch_only(x):
    batch, n_heads, seq, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)


# --- multi-head attention --------------------------------------------------------


def mha_probes(rng):
    return square_probe("x (8, 8): as many positions as features, 2 heads, with projections", normal(rng, 8, 8), 2,
                        params=random_attention_params(rng, 8))


def mha_cases(rng):
    return cases(
        ("the lesson's fixture, 2 heads, identity projections", [fixtures.lesson_input(), 2], {}),
        ("(2, 5, 8), 2 heads, with projections", [normal(rng, 2, 5, 8), 2], {"params": random_attention_params(rng, 8)}),
        ("(4, 12), 3 heads, with projections", [normal(rng, 4, 12), 3], {"params": random_attention_params(rng, 12)}),
    )


def mha_draw(rng, point):
    """x of the point's sizes, with random projections or (``projections`` "none") identity ones; "large": x of
    about 30, so that the scores reach the thousands."""
    n_heads, d = point["n_heads"], point["n_heads"] * point["d_head"]
    x = normal(rng, *point.lead, point["seq"], d) * (100.0 if point.regime == "large" else 1.0)
    if point["projections"] == "none":
        return f"x {x.shape}, {n_heads} heads, identity projections", [x, n_heads], {}
    return f"x {x.shape}, {n_heads} heads, with projections", [x, n_heads], {"params": random_attention_params(rng, d)}


def mha_model(x, n_heads, params=None, *, scale_by_d_model=False, split=split_heads, project=True, biases=True,
              heads=True):
    """Multi-head attention with one thing changed: what an answer computes when it gets that one thing wrong."""
    d_model = x.shape[-1]
    if params is None:
        if not biases:
            raise NotApplicable  # without projections there are no biases to forget
        q = k = v = x
    else:
        q, k, v = (x @ params[f"w_{n}"] + (params[f"b_{n}"] if biases else 0) for n in "qkv")
    if heads:
        q, k, v = (split(t, n_heads) for t in (q, k, v))
        scale = np.sqrt(d_model if scale_by_d_model else d_model // n_heads)
        weights = softmax(q @ np.swapaxes(k, -1, -2) / scale)
        out = merge_heads(weights @ v)
    else:  # one attention over all of d_model, as scaled_dot_product_attention(q, k, v) gives it
        out, weights = scaled_dot_product_attention(q, k, v)
    if params is not None and project:
        out = out @ params["w_o"] + (params["b_o"] if biases else 0)
    return out, weights


def mha_split_without_transpose(*args, **kwargs):
    """Heads split by a reshape without the transpose: ``mha_model`` with that split, called as the exercise is."""
    return mha_model(*args, split=split_heads_without_transpose, **kwargs)


def mha_reference_model(x, n_heads, params=None):
    q = k = v = x  # step: without_params
    if params is not None:  # step: if_params
        q = x @ params["w_q"] + params["b_q"]  # step: q
        k = x @ params["w_k"] + params["b_k"]  # step: k
        v = x @ params["w_v"] + params["b_v"]  # step: v
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)  # step: split
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # step: scores
    weights = softmax(scores, axis=-1)  # step: weights
    out = merge_heads(weights @ v)  # step: merged
    if params is not None:  # step: if_params_out
        out = out @ params["w_o"] + params["b_o"]  # step: projected
    return out, weights  # step: result


def mha_weights(ev):
    """The weights have one (seq, seq) matrix per head, each row summing to 1; which heads' weights are right."""
    if not isinstance(ev.got, tuple) or len(ev.got) != 2:
        return None
    weights, right = ev.got_array(1), ev.expected_array(1)
    if weights is None:
        return None
    if weights.shape != right.shape:
        return Finding("mha:weights-shape",
                       f"{ev.where()} your weights have shape {shape_text(weights.shape)}; the weights hold one "
                       f"(seq, seq) matrix per head, {shape_text(right.shape)}.")
    if not np.isfinite(weights).all():
        return None
    sums = weights.sum(axis=-1)
    if not np.allclose(sums, 1, atol=1e-6):
        return Finding("mha:weights-sum",
                       f"{ev.where()} each row of each head's weights sums to 1 (a softmax over the keys); "
                       f"yours sum to {span(sums, target=1)}.")
    heads = np.moveaxis(weights, -3, 0).reshape(weights.shape[-3], -1)
    wanted = np.moveaxis(right, -3, 0).reshape(right.shape[-3], -1)
    ok = [h for h in range(len(heads)) if np.allclose(heads[h], wanted[h], atol=1e-6)]
    if 0 < len(ok) < len(heads):
        return Finding("mha:some-heads",
                       f"{ev.where()} the weights of head{'s' * (len(ok) > 1)} {', '.join(map(str, ok))} are right "
                       f"and those of the other heads are not.")
    if not ok and np.allclose(ev.got_array(0), ev.expected_array(0), atol=1e-6):
        return None
    return None


#: The lesson's exercises, as heads.toml declares them.
EXERCISES = load_exercises(globals())
