"""Lesson 02's exercises: splitting and merging heads, and multi-head attention."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import merge_heads, multi_head_attention, scaled_dot_product_attention, softmax, split_heads
from ..compare import NotApplicable
from ..in_words import shape_text, span
from ..symptoms import Finding
from ._base import Exercise, Mistake, cases, normal, random_attention_params, square_probe

SPLIT_LINK = "[Splitting into heads, step by step](#Splitting-into-heads,-step-by-step)"
TRANSPOSE_IDEA = (
    "`reshape` only regroups numbers in their memory order, row by row. (seq, d_model) reshaped to (seq, "
    "n_heads, d_head) cuts each position's row into n_heads pieces, which is right; reshaping straight to "
    "(n_heads, seq, d_head) instead takes the first d_head numbers of position 0, then the next ones, and so "
    "mixes positions into heads. The head axis has to be moved in front of seq by a transpose. See "
    "[Why the transpose? A reshape alone mixes positions](#Why-the-transpose?-A-reshape-alone-mixes-positions).")
TRANSPOSE_STEP = (
    "For x = [[0, 1, 2, 3], [4, 5, 6, 7]] (2 positions, d_model 4) and 2 heads: reshaping to (2, 2, 2) gives "
    "[[[0, 1], [2, 3]], [[4, 5], [6, 7]]], indexed (seq, head, d_head). Swapping the first two axes gives "
    "[[[0, 1], [4, 5]], [[2, 3], [6, 7]]]: head 0 holds columns 0 and 1 of both positions, head 1 columns 2 and "
    "3. For any batch in front, swap axes -3 and -2 with `np.swapaxes`.")
BATCH_IDEA = (
    "The exercise's arrays may have any number of batch axes in front: (seq, d_model) for one sequence, "
    "(batch, seq, d_model), or more. Code that unpacks a fixed number of axes (`batch, seq, d = x.shape`) or "
    "transposes by position (`transpose(0, 2, 1, 3)`) works for one of these only. Name the last axes and keep "
    "the rest: `*lead, seq, d = x.shape`, and count axes from the end (-1, -2, -3). See " + SPLIT_LINK + ".")
BATCH_STEP = (
    "With `*lead, seq, d = x.shape`: for x of shape (5, 12), lead is [] ; for (2, 5, 12), lead is [2]. "
    "With 3 heads, a reshape that keeps `lead` in front and cuts the last axis gives (5, 3, 4) or (2, 5, 3, 4); "
    "a swap of axes -3 and -2, counted from the end, then moves the head axis in front of seq in both: (3, 5, 4) "
    "or (2, 3, 5, 4). Print the shapes for both inputs.")

# --- split_heads -----------------------------------------------------------------


def split_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3)))
        n_heads, d_head, seq = (int(n) for n in rng.integers(2, 5, size=3))
        return cases((f"random {lead + (seq, n_heads * d_head)} into {n_heads} heads",
                      [normal(rng, *lead, seq, n_heads * d_head)], {"n_heads": n_heads}))
    return cases(
        ("the lesson's input (3, 4) into 2 heads", [fixtures.lesson_input()], {"n_heads": 2}),
        ("(2, 5, 12) into 3 heads", [normal(rng, 2, 5, 12)], {"n_heads": 3}),
    )


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
    *lead, seq, d_model = x.shape  # the last two axes are positions and features, any batch axes in front
    cut = x.reshape(*lead, seq, n_heads, d_model // n_heads)  # each position's features are cut into n_heads slices of d_head, in order
    return np.swapaxes(cut, -3, -2)  # the head axis moves in front of the positions (axes -3 and -2 swap)


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


SPLIT_HEADS = Exercise(
    name="split_heads", lesson="02_multi_head_attention", points=1,
    formula=r"(\ldots, s, d_{\mathrm{model}}) \to (\ldots, h, s, d_{\mathrm{model}} / h)",
    cases=split_cases, reference=split_heads, model=split_heads_model,
    mistakes=(
        Mistake("split_heads_without_transpose",
                "heads split by a reshape without the transpose, which mixes positions: reshape to "
                "(..., seq, n_heads, d_head), then swap the seq and head axes", split_heads_without_transpose,
                hints=(TRANSPOSE_IDEA, TRANSPOSE_STEP)),
        Mistake("split_heads_interleaved",
                "head h must take columns h*d_head to (h+1)*d_head; yours takes every n_heads-th column "
                "(reshape to (..., seq, n_heads, d_head), not (..., seq, d_head, n_heads))", split_heads_interleaved),
        Mistake("split_heads_for_a_batch_only",
                "written for a batch (3 axes) only: x may be (seq, d_model) or have any number of batch axes in "
                "front; unpack it as *lead, seq, d_model = x.shape and reshape to (*lead, seq, n_heads, d_head)",
                split_heads_for_a_batch_only, hints=(BATCH_IDEA, BATCH_STEP)),
        Mistake("split_heads_for_one_sequence_only",
                "written for one sequence (2 axes) only: x may have batch axes in front; unpack it as "
                "*lead, seq, d_model = x.shape and swap axes -3 and -2 (np.swapaxes works for any number of axes)",
                split_heads_for_one_sequence_only, hints=(BATCH_IDEA, BATCH_STEP)),
    ),
    properties=(heads_shape,),
    hints=(
        "Multi-head attention cuts each position's d_model features into n_heads consecutive slices of d_head = "
        "d_model / n_heads: head 0 gets columns 0 to d_head - 1, head 1 the next d_head, and so on. The result "
        "puts the head axis in front of the positions, (..., n_heads, seq, d_head), so that each head is a "
        "separate (seq, d_head) attention problem. The section " + SPLIT_LINK + " prints every step's shape.",
        "On the lesson's (3, 4) input with 2 heads: d_head = 2; head 0 is columns 0 and 1 of all three rows, "
        "head 1 columns 2 and 3, so the result is (2, 3, 2). Check one number: result[1, 0, 0] must be x[0, 2], "
        "position 0's first number of the second slice. Two steps get there: a reshape that cuts the last axis, "
        "then a swap of the head and seq axes.",
    ),
)

# --- merge_heads -----------------------------------------------------------------


MERGE_STEP = (
    "Two heads of (3, 2), head 0 = [[0, 1], [2, 3], [4, 5]] and head 1 = [[6, 7], [8, 9], [10, 11]]: the merged "
    "result is (3, 4), and position 0's row must be (0, 1, 6, 7): head 0's slice, then head 1's; position 2's "
    "row is (4, 5, 10, 11). A row that reads (0, 1, 2, 3) took head 0's numbers in memory order, across "
    "positions. Check that merging what split_heads made gives back x.")


def merge_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(0, 3)))
        n_heads, seq, d_head = (int(n) for n in rng.integers(2, 5, size=3))
        return cases((f"random {lead + (n_heads, seq, d_head)}", [normal(rng, *lead, n_heads, seq, d_head)], {}))
    return cases(
        ("2 heads of (3, 2)", [normal(rng, 2, 3, 2)], {}),
        ("a batch (2, 3, 5, 4)", [normal(rng, 2, 3, 5, 4)], {}),
    )


def merge_heads_model(x):
    *lead, n_heads, seq, d_head = x.shape  # the last three axes are heads, positions and each head's features
    together = np.swapaxes(x, -3, -2)  # each position's heads come together: the head and position axes swap
    return together.reshape(*lead, seq, n_heads * d_head)  # each position's heads are joined into one row, head 0's slice first


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


MERGE_HEADS = Exercise(
    name="merge_heads", lesson="02_multi_head_attention", points=1,
    formula=r"(\ldots, h, s, d_{\mathrm{head}}) \to (\ldots, s, h \cdot d_{\mathrm{head}})",
    cases=merge_cases, reference=merge_heads, model=merge_heads_model,
    mistakes=(
        Mistake("merge_heads_without_transpose",
                "heads merged by a reshape without the transpose, which mixes positions: swap the head and "
                "seq axes first, to (..., seq, n_heads, d_head)", merge_heads_without_transpose,
                hints=(TRANSPOSE_IDEA, MERGE_STEP)),
        Mistake("merge_heads_in_the_wrong_order",
                "heads merged in the wrong order: head 0's columns must come first, then head 1's "
                "(move the head axis next to d_head as (n_heads, d_head), not (d_head, n_heads))",
                merge_heads_in_the_wrong_order),
        Mistake("merge_heads_swapping_the_last_two_axes",
                "the wrong axes swapped: seq and d_head (the last two); swap the head axis with seq, axes -3 and -2, "
                "to get (..., seq, n_heads, d_head) before the reshape", merge_heads_swapping_the_last_two_axes),
        Mistake("merge_heads_for_a_batch_only",
                "written for a batch (4 axes) only: x may be (n_heads, seq, d_head) or have any number of batch axes "
                "in front; unpack it as *lead, n_heads, seq, d_head = x.shape and use np.swapaxes(x, -3, -2)",
                merge_heads_for_a_batch_only, hints=(BATCH_IDEA, MERGE_STEP)),
    ),
    hints=(
        "merge_heads undoes split_heads: from (..., n_heads, seq, d_head) back to (..., seq, n_heads * d_head), "
        "with head 0's d_head numbers first in each position's row, then head 1's, and so on. As in the split, a "
        "reshape cannot move a whole axis: first swap the head and seq axes, so that each position's heads sit "
        "together, then reshape the last two axes into one. See [Attention in every head, then "
        "merge](#Attention-in-every-head,-then-merge).",
        MERGE_STEP,
    ),
)

# --- multi-head attention --------------------------------------------------------


def mha_probes(rng):
    return square_probe("x (8, 8): as many positions as features, 2 heads, with projections", normal(rng, 8, 8), 2,
                        params=random_attention_params(rng, 8))


def mha_cases(rng, hidden):
    if hidden:
        lead = tuple(int(n) for n in rng.integers(1, 3, size=rng.integers(0, 2)))
        n_heads, d_head, seq = (int(n) for n in rng.integers(2, 5, size=3))
        d = n_heads * d_head
        return cases((f"random x {lead + (seq, d)}, {n_heads} heads, with projections",
                      [normal(rng, *lead, seq, d), n_heads], {"params": random_attention_params(rng, d)}),
                     (f"random x ({seq}, {d}), {n_heads} heads, identity projections",
                      [normal(rng, seq, d), n_heads], {}))
    return cases(
        ("the lesson's fixture, 2 heads, identity projections", [fixtures.lesson_input(), 2], {}),
        ("(2, 5, 8), 2 heads, with projections", [normal(rng, 2, 5, 8), 2], {"params": random_attention_params(rng, 8)}),
        ("(4, 12), 3 heads, with projections", [normal(rng, 4, 12), 3], {"params": random_attention_params(rng, 12)}),
    )


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


def mha_reference_model(x, n_heads, params=None):
    q = k = v = x  # without params, queries, keys and values are x itself
    if params is not None:  # with params, each is a projection of x
        q = x @ params["w_q"] + params["b_q"]  # the queries: x times w_q, plus b_q
        k = x @ params["w_k"] + params["b_k"]  # the keys: x times w_k, plus b_k
        v = x @ params["w_v"] + params["b_v"]  # the values: x times w_v, plus b_v
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)  # q, k and v are each split into n_heads heads
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # each head compares its queries and keys, scaled by sqrt(d_head)
    weights = softmax(scores, axis=-1)  # each query's scores become weights over the keys, in every head
    out = merge_heads(weights @ v)  # each head's weighted values are merged back into d_model
    if params is not None:  # with params, the merged heads are projected
        out = out @ params["w_o"] + params["b_o"]  # the output projection: times w_o, plus b_o
    return out, weights  # the output is returned before the weights


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


MULTI_HEAD_ATTENTION = Exercise(
    name="multi_head_attention", lesson="02_multi_head_attention", points=2,
    formula=r"\mathrm{MHA}(x) = \mathrm{concat}_h\!\left(\mathrm{attention}(x W_q^h + b_q^h,\, x W_k^h + b_k^h,\,"
            r" x W_v^h + b_v^h)\right) W_o + b_o",
    cases=mha_cases, reference=multi_head_attention, model=mha_reference_model, probes=mha_probes,
    mistakes=(
        Mistake("attention_scaled_by_d_model",
                "scores scaled by sqrt(d_model): each head's scale is sqrt(d_head), d_head = d_model / n_heads",
                partial(mha_model, scale_by_d_model=True)),
        Mistake("attention_heads_split_without_transpose",
                "heads split by a reshape without the transpose, which mixes positions",
                partial(mha_model, split=split_heads_without_transpose), hints=(TRANSPOSE_IDEA, TRANSPOSE_STEP)),
        Mistake("attention_without_the_output_projection",
                "the output projection is missing: merge the heads, then apply w_o and b_o",
                partial(mha_model, project=False)),
        Mistake("attention_without_biases",
                "the biases are missing: each projection is x @ w + b (b_q, b_k, b_v, and b_o after w_o)",
                partial(mha_model, biases=False)),
        Mistake("attention_with_one_head",
                "one attention over all of d_model: split q, k and v into n_heads heads (split_heads) and give "
                "each head its own softmax", partial(mha_model, heads=False)),
    ),
    uses=("softmax", "scaled_dot_product_attention", "split_heads", "merge_heads"),
    may_call=("softmax", "masked_softmax", "scaled_dot_product_attention", "split_heads", "merge_heads"),
    properties=(mha_weights,),
    outputs=("out", "weights"),
    hints=(
        "Multi-head attention is four steps: project x to q, k and v (x @ w + b each, or x itself when params is "
        "None); split each into n_heads heads; run scaled dot-product attention in every head at once, on arrays "
        "of shape (..., n_heads, seq, d_head), so each head scales by its own sqrt(d_head); then merge the heads "
        "and apply the output projection, @ w_o + b_o. It returns the output and the weights, (..., n_heads, "
        "seq, seq). The sections from [Attention in every head, then "
        "merge](#Attention-in-every-head,-then-merge) on walk through it.",
        "On the lesson's (3, 4) fixture with 2 heads and params=None, q = k = v = x; split, each is (2, 3, 2); "
        "attention in both heads gives weights (2, 3, 3), each row summing to 1, and outputs (2, 3, 2); merged, "
        "the output is (3, 4). One line per step, e.g. `q = split_heads(x @ params[\"w_q\"] + params[\"b_q\"], "
        "n_heads)`; print each step's shape against that list.",
    ),
)

EXERCISES = (SPLIT_HEADS, MERGE_HEADS, MULTI_HEAD_ATTENTION)
