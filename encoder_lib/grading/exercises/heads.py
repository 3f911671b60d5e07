"""Lesson 02's exercises: splitting and merging heads, and multi-head attention."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import merge_heads, multi_head_attention, scaled_dot_product_attention, softmax, split_heads
from ..compare import NotApplicable
from ._base import Exercise, Mistake, cases, normal, random_attention_params

# --- split_heads -----------------------------------------------------------------


def split_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
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


SPLIT_HEADS = Exercise(
    name="split_heads", lesson="02_multi_head_attention", points=1,
    formula=r"(\ldots, s, d_{\mathrm{model}}) \to (\ldots, h, s, d_{\mathrm{model}} / h)",
    cases=split_cases, reference=split_heads,
    mistakes=(
        Mistake("split_heads_without_transpose",
                "heads split by a reshape without the transpose, which mixes positions: reshape to "
                "(..., seq, n_heads, d_head), then swap the seq and head axes", split_heads_without_transpose),
        Mistake("split_heads_interleaved",
                "head h must take columns h*d_head to (h+1)*d_head; yours takes every n_heads-th column "
                "(reshape to (..., seq, n_heads, d_head), not (..., seq, d_head, n_heads))", split_heads_interleaved),
        Mistake("split_heads_for_a_batch_only",
                "written for a batch (3 axes) only: x may be (seq, d_model) or have any number of batch axes in "
                "front; unpack it as *lead, seq, d_model = x.shape and reshape to (*lead, seq, n_heads, d_head)",
                split_heads_for_a_batch_only),
        Mistake("split_heads_for_one_sequence_only",
                "written for one sequence (2 axes) only: x may have batch axes in front; unpack it as "
                "*lead, seq, d_model = x.shape and swap axes -3 and -2 (np.swapaxes works for any number of axes)",
                split_heads_for_one_sequence_only),
    ),
)

# --- merge_heads -----------------------------------------------------------------


def merge_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 4, size=rng.integers(0, 3)))
        n_heads, seq, d_head = (int(n) for n in rng.integers(2, 5, size=3))
        return cases((f"random {lead + (n_heads, seq, d_head)}", [normal(rng, *lead, n_heads, seq, d_head)], {}))
    return cases(
        ("2 heads of (3, 2)", [normal(rng, 2, 3, 2)], {}),
        ("a batch (2, 3, 5, 4)", [normal(rng, 2, 3, 5, 4)], {}),
    )


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
    cases=merge_cases, reference=merge_heads,
    mistakes=(
        Mistake("merge_heads_without_transpose",
                "heads merged by a reshape without the transpose, which mixes positions: swap the head and "
                "seq axes first, to (..., seq, n_heads, d_head)", merge_heads_without_transpose),
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
                merge_heads_for_a_batch_only),
    ),
)

# --- multi-head attention --------------------------------------------------------


def mha_cases(rng, hidden):
    if hidden:
        lead = tuple(rng.integers(1, 3, size=rng.integers(0, 2)))
        n_heads, d_head, seq = (int(n) for n in rng.integers(2, 5, size=3))
        d = n_heads * d_head
        return cases((f"random x {lead + (seq, d)}, {n_heads} heads, with projections",
                      [normal(rng, *lead, seq, d), n_heads], {"params": random_attention_params(rng, d)}))
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


MULTI_HEAD_ATTENTION = Exercise(
    name="multi_head_attention", lesson="02_multi_head_attention", points=2,
    formula=r"\mathrm{MHA}(x) = \mathrm{concat}_h\!\left(\mathrm{attention}(x W_q^h + b_q^h,\, x W_k^h + b_k^h,\,"
            r" x W_v^h + b_v^h)\right) W_o + b_o",
    cases=mha_cases, reference=multi_head_attention,
    mistakes=(
        Mistake("attention_scaled_by_d_model",
                "scores scaled by sqrt(d_model): each head's scale is sqrt(d_head), d_head = d_model / n_heads",
                partial(mha_model, scale_by_d_model=True)),
        Mistake("attention_heads_split_without_transpose",
                "heads split by a reshape without the transpose, which mixes positions",
                partial(mha_model, split=split_heads_without_transpose)),
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
)

EXERCISES = (SPLIT_HEADS, MERGE_HEADS, MULTI_HEAD_ATTENTION)
