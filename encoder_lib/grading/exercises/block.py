"""Lesson 05's exercises: the padding mask, positional encoding and the whole block."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import masked_softmax, softmax
from ...block import encoder_block
from ...positional import positional_encoding
from ..compare import NotApplicable
from ._base import Exercise, Mistake, cases, normal, random_block

# --- the masked softmax ----------------------------------------------------------


def masked_cases(rng, hidden):
    if hidden:
        batch, seq_q, seq_k = (int(n) for n in rng.integers(1, 5, size=3))
        mask = rng.random((batch, seq_k)) < 0.4
        return cases((f"random scores ({batch}, {seq_q}, {seq_k}) and mask",
                      [normal(rng, batch, seq_q, seq_k) * 3, mask], {}))
    return cases(
        ("scores (2, 3, 3), the last key of sequence 0 padded",
         [normal(rng, 2, 3, 3), np.array([[False, False, True], [False, False, False]])], {}),
        ("a sequence that is all padding", [normal(rng, 2, 2, 3), np.array([[False, True, True], [True, True, True]])], {}),
        ("no mask", [normal(rng, 3, 4)], {"padding_mask": None}),
    )


def mask_after_the_softmax(scores, padding_mask=None):
    weights = softmax(scores)
    return weights if padding_mask is None else weights * ~padding_mask[..., None, :]


def mask_with_the_wrong_polarity(scores, padding_mask=None):
    return masked_softmax(scores, None if padding_mask is None else ~padding_mask)


def mask_nan_for_an_all_padding_row(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


MASK_ON_QUERIES = ("the mask is applied to the queries: padding_mask[..., :, None] lines it up with the rows of the "
                   "scores (one per query), but it marks keys, the last axis: use padding_mask[..., None, :]")


def mask_on_the_queries(scores, padding_mask=None, *, fill=-1e9, own_softmax=False):
    if padding_mask is None:
        raise NotApplicable
    scores = np.where(padding_mask[..., :, None], fill, scores)
    return mask_nan_for_an_all_padding_row(scores) if own_softmax else softmax(scores)


def mask_through_the_library_softmax(scores, padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return softmax(np.where(padding_mask[..., None, :], -np.inf, scores))


MASKED_SOFTMAX = Exercise(
    name="masked_softmax", lesson="05_encoder_block", points=2,
    formula=r"w = \mathrm{softmax}(s + m),\quad m_j = -\infty \text{ where key } j \text{ is padding, else } 0",
    cases=masked_cases, reference=masked_softmax,
    mistakes=(
        Mistake("mask_after_the_softmax",
                "the mask is applied after the softmax: set padded scores to -inf before it, "
                "so the real keys' weights still sum to 1", mask_after_the_softmax),
        Mistake("mask_with_the_wrong_polarity",
                "the mask has the wrong polarity: True marks padding, so those keys get weight 0",
                mask_with_the_wrong_polarity),
        Mistake("mask_nan_for_an_all_padding_row",
                "a sequence that is all padding gives NaN: give such rows zero weights", mask_nan_for_an_all_padding_row),
        Mistake("mask_on_the_queries", MASK_ON_QUERIES, mask_on_the_queries),
        Mistake("mask_on_the_queries_own_softmax", MASK_ON_QUERIES,
                partial(mask_on_the_queries, fill=-np.inf, own_softmax=True)),
        Mistake("mask_on_the_queries_at_minus_infinity", MASK_ON_QUERIES, partial(mask_on_the_queries, fill=-np.inf)),
        Mistake("mask_all_padding_row_through_the_library_softmax",
                "a sequence that is all padding has every score at -inf, and a softmax of that is 0 / 0: give "
                "such rows zero weights (find them with padding_mask.all(axis=-1)), or write a softmax that does",
                mask_through_the_library_softmax),
    ),
    uses=("softmax",), may_call=("softmax",),
)

# --- positional encoding -----------------------------------------------------------


def positional_cases(rng, hidden):
    if hidden:
        seq_len, d_model = int(rng.integers(1, 30)), 2 * int(rng.integers(1, 17))
        odd = 2 * int(rng.integers(1, 9)) + 1
        return cases((f"seq_len {seq_len}, d_model {d_model}", [seq_len, d_model], {}),
                     (f"seq_len {seq_len}, odd d_model {odd}", [seq_len, odd], {}))
    return cases(("seq_len 4, d_model 6", [4, 6], {}), ("seq_len 50, d_model 16", [50, 16], {}),
                 ("seq_len 3, odd d_model 5 (the last sine has no cosine)", [3, 5], {}))


def positional_model(seq_len, d_model, *, swap=False, exponent_i=False, halves=False, per_column=False):
    """The sinusoidal encoding with one thing changed: sine and cosine, the exponent, the column layout."""
    pos = np.arange(seq_len)[:, None]
    if per_column:  # column j's exponent j / d_model, in place of the pair's 2i / d_model
        angle = pos / 10000 ** (np.arange(d_model) / d_model)
        return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
    i = np.arange((d_model + 1) // 2)  # an odd d_model has one more sine column than cosine columns
    angle = pos / 10000 ** ((i if exponent_i else 2 * i) / d_model)
    first, second = (np.cos(angle), np.sin(angle)) if swap else (np.sin(angle), np.cos(angle))
    if halves:
        return np.concatenate([first, second[:, : d_model // 2]], axis=-1)
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = first, second[:, : d_model // 2]
    return pe


def positional_encoding_odd_d_model(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def positional_reference(seq_len, d_model):
    return positional_encoding(seq_len, d_model, dtype=np.float64)


POSITIONAL_ENCODING = Exercise(
    name="positional_encoding", lesson="05_encoder_block", points=2,
    formula=r"PE_{p,\,2i} = \sin\!\left(p / 10000^{2i/d}\right),\quad PE_{p,\,2i+1} = \cos\!\left(p / 10000^{2i/d}\right)",
    cases=positional_cases, reference=positional_reference,
    mistakes=(
        Mistake("sine_and_cosine_swapped",
                "sine and cosine swapped: sine goes in the even columns 0, 2, 4, ..., cosine in the odd ones",
                partial(positional_model, swap=True)),
        Mistake("positional_encoding_exponent_of_i",
                "the exponent: the pair of columns (2i, 2i+1) uses 10000^(2i / d_model)",
                partial(positional_model, exponent_i=True)),
        Mistake("positional_encoding_in_halves",
                "sines and cosines must interleave (even, odd columns), not fill the first and second half",
                partial(positional_model, halves=True)),
        Mistake("positional_encoding_exponent_per_column",
                "the exponent is per pair of columns, not per column: columns 2i and 2i+1 share the angle "
                "pos / 10000^(2i / d_model), so column j uses 2 * (j // 2), not j",
                partial(positional_model, per_column=True)),
        Mistake("positional_encoding_odd_d_model",
                "an odd d_model has one more even column than odd ones ((d_model + 1) // 2 sines, d_model // 2 "
                "cosines): give the odd columns the first d_model // 2 angles, angle[:, : d_model // 2]",
                positional_encoding_odd_d_model),
    ),
)

# --- the block -----------------------------------------------------------------------


def block_cases(rng, hidden):
    if hidden:
        n_heads, d_head = int(rng.integers(1, 4)), int(rng.integers(2, 4))
        d, seq, batch = n_heads * d_head, int(rng.integers(2, 6)), int(rng.integers(1, 3))
        norm = ("post", "pre")[int(rng.integers(2))]
        mask = rng.random((batch, seq)) < 0.3
        mask[:, 0] = False
        return cases((f"random x ({batch}, {seq}, {d}), {n_heads} heads, {norm}-norm, with a mask",
                      [normal(rng, batch, seq, d), random_block(rng, d, 2 * d + 1), n_heads],
                      {"norm": norm, "padding_mask": mask}))
    return cases(
        ("the lesson's fixture, post-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {}),
        ("the lesson's fixture, pre-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {"norm": "pre"}),
        ("(2, 5, 8), 2 heads, d_ff 12, post-norm, a padding mask",
         [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2],
         {"padding_mask": np.array([[False] * 5, [False] * 3 + [True] * 2])}),
        ("(2, 5, 8), 2 heads, d_ff 12, pre-norm", [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2], {"norm": "pre"}),
    )


def block_with_placements_swapped(x, params, n_heads, norm="post", padding_mask=None):
    other = "pre" if norm == "post" else "post"
    return encoder_block(x, params, n_heads, norm=other, padding_mask=padding_mask)


def block_without_residual(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask, residual=False)


def block_without_the_mask(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, params, n_heads, norm=norm)


def block_with_one_norm_for_both(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, {**params, "norm2": params["norm1"]}, n_heads, norm=norm, padding_mask=padding_mask)


ATTENTION_PARTS = ("softmax", "masked_softmax", "scaled_dot_product_attention", "split_heads", "merge_heads",
                   "multi_head_attention")
#: What the block's exercises may call: its parts, as the library has them.
BLOCK_PARTS = ATTENTION_PARTS + ("feed_forward", "relu", "gelu", "layer_norm", "post_norm", "pre_norm")

ENCODER_BLOCK = Exercise(
    name="encoder_block", lesson="05_encoder_block", points=2,
    formula=r"\text{post: } x \leftarrow \mathrm{LN}(x + \mathrm{MHA}(x)),\ x \leftarrow \mathrm{LN}(x + \mathrm{FFN}(x));"
            r"\quad \text{pre: } x \leftarrow x + \mathrm{MHA}(\mathrm{LN}(x)),\ x \leftarrow x + \mathrm{FFN}(\mathrm{LN}(x))",
    cases=block_cases, reference=encoder_block,
    mistakes=(
        Mistake("block_with_placements_swapped",
                "post-norm and pre-norm swapped: post is LN(x + f(x)), pre is x + f(LN(x))",
                block_with_placements_swapped),
        Mistake("block_without_residual",
                "the residual connection is missing: each sub-layer's output is added to its input",
                block_without_residual),
        Mistake("block_without_the_mask", "the padding mask is not passed on to the attention", block_without_the_mask),
        Mistake("block_with_one_norm_for_both",
                "norm1's parameters used for both norms: the second Add & Norm uses params['norm2']",
                block_with_one_norm_for_both),
    ),
    uses=("masked_softmax", "post_norm", "pre_norm"), may_call=BLOCK_PARTS,
)

EXERCISES = (MASKED_SOFTMAX, POSITIONAL_ENCODING, ENCODER_BLOCK)
