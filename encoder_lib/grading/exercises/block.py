"""Lesson 05's exercises: the padding mask, positional encoding and the whole block.

The code of its exercises: block.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures
from ...attention import masked_softmax, softmax
from ...block import encoder_block
from ...positional import positional_encoding
from ...attention import multi_head_attention
from ...ffn import feed_forward
from ...norm import layer_norm
from ..compare import NotApplicable
from ..in_words import index, numbers, softmax_row_off, span
from ..symptoms import Finding
from ._base import cases, load_exercises, normal, random_block


# --- the masked softmax ----------------------------------------------------------


def masked_cases(rng):
    return cases(
        ("scores (2, 3, 3), the last key of sequence 0 padded",
         [normal(rng, 2, 3, 3), np.array([[False, False, True], [False, False, False]])], {}),
        ("a sequence that is all padding", [normal(rng, 2, 2, 3), np.array([[False, True, True], [True, True, True]])], {}),
        ("no mask", [normal(rng, 3, 4)], {"padding_mask": None}),
    )


def padding_of(rng, kind, shape):
    """A padding mask of ``shape`` (..., seq): "some" (the first position real, the last padded where there are
    two, the others at random), "all" (one sequence all padding, the others as "some") or "none" (None)."""
    if kind == "none":
        return None
    mask = rng.random(shape) < 0.5
    mask[..., -1] = True
    mask[..., 0] = False
    if kind == "all":
        mask.reshape(-1, shape[-1])[0] = True  # a view: the first sequence
    return mask


def seq_of(point, name="seq"):
    """The point's sequence length, at least 2 where its mask has "some" padding (a real position and a padded
    one)."""
    return max(point[name], 2) if point["mask"] == "some" else point[name]


def masked_draw(rng, point):
    """Scores (..., seq_q, seq_k) and a mask (..., seq_k) of the same batch axes; "far": scores from -30000 to
    30000, the first query's all below -20000."""
    shape = (*point.lead, point["seq_q"], seq_of(point, "seq_k"))
    if point.regime == "far":
        scores = rng.uniform(-30000, 30000, shape)
        scores[..., 0, :] = -20000 - np.abs(scores[..., 0, :])
    else:
        scores = normal(rng, *shape) * 3
    mask = padding_of(rng, point["mask"], (*point.lead, shape[-1]))
    if mask is None:
        return f"scores {shape}, no mask", [scores], {}
    return f"scores {shape}, mask {mask.shape} ({point['mask']} padding)", [scores, mask], {}


def masked_softmax_model(scores, padding_mask=None):
    if padding_mask is not None:  # step: if_padding_mask
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)  # step: scores
    top = scores.max(axis=-1, keepdims=True)  # step: top
    top = np.where(np.isfinite(top), top, 0.0)  # step: top_of_all_padding
    e = np.exp(scores - top)  # step: e
    total = e.sum(axis=-1, keepdims=True)  # step: total
    return e / np.where(total > 0, total, 1.0)  # step: result


def mask_after_the_softmax(scores, padding_mask=None):
    weights = softmax(scores)
    return weights if padding_mask is None else weights * ~padding_mask[..., None, :]


def mask_with_the_wrong_polarity(scores, padding_mask=None, *, fill=None):
    """The mask flipped: the real keys left out. ``fill=None`` as the library does it (a row with every key left
    out gets zeros), else ``fill`` (-1e9) in place of their scores, which gives such a row equal weights."""
    if padding_mask is None:
        return masked_softmax(scores)
    if fill is None:
        return masked_softmax(scores, ~padding_mask)
    return softmax(np.where(padding_mask[..., None, :], scores, fill))


def mask_nan_for_an_all_padding_row(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mask_on_the_queries(scores, padding_mask=None, *, fill=-1e9, own_softmax=False):
    if padding_mask is None:
        raise NotApplicable
    scores = np.where(padding_mask[..., :, None], fill, scores)
    return mask_nan_for_an_all_padding_row(scores) if own_softmax else softmax(scores)


def mask_through_the_library_softmax(scores, padding_mask=None):
    if padding_mask is None:
        raise NotApplicable
    return softmax(np.where(padding_mask[..., None, :], -np.inf, scores))


def masked_weights(ev):
    """Padded keys get weight 0; each row with a real key sums to 1 over the real keys; all-padding rows are 0."""
    got, mask = ev.got_array(), ev.value("padding_mask")
    if got is None or got.shape != ev.expected.shape or mask is None or not np.isfinite(got).all():
        return None
    keys = np.broadcast_to(mask[..., None, :], got.shape)
    leaked = np.abs(np.where(keys, got, 0)).max()
    if leaked > 1e-9:
        at = np.argwhere(keys & (np.abs(got) > 1e-9))[0]
        return Finding("mask:padded-weight",
                       f"{ev.where()} padded keys (padding_mask True, along the last axis) get weight 0, but your "
                       f"weights{index(at)} is {got[tuple(at)]:.4g} at a padded key.")
    scores = ev.value("scores")
    row = softmax_row_off(got, scores, ~keys)
    if row is not None:
        keep = ~keys[row]
        return Finding("mask:not-a-softmax",
                       f"{ev.where()} over the real keys each row of weights is a softmax of its scores, w_j "
                       f"proportional to exp(s_j), but your row {index(row)} gets {numbers(got[row][keep], 3)} for "
                       f"the scores{ev.quote(scores[row][keep])}.")
    real_rows = ~mask.all(axis=-1)
    sums = got.sum(axis=-1)
    wanted = np.broadcast_to(real_rows[..., None], sums.shape).astype(float)
    if not np.allclose(sums, wanted, atol=1e-6):
        bad = np.argwhere(~np.isclose(sums, wanted, atol=1e-6))[0]
        return Finding("mask:sums",
                       f"{ev.where()} each query's weights over the real keys sum to 1 (0 for a sequence that is all "
                       f"padding); your row {index(bad)} sums to {span(sums[tuple(bad)], target=float(wanted[tuple(bad)]))}.")
    return None


# --- positional encoding -----------------------------------------------------------


def positional_cases(rng):
    return cases(("seq_len 4, d_model 6", [4, 6], {}), ("seq_len 50, d_model 16", [50, 16], {}),
                 ("seq_len 3, odd d_model 5 (the last sine has no cosine)", [3, 5], {}))


def positional_draw(rng, point):
    return f"seq_len {point['seq_len']}, d_model {point['d_model']}", [point["seq_len"], point["d_model"]], {}


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


def positional_reference_model(seq_len, d_model):
    positions = np.arange(seq_len)[:, None]  # step: positions
    pairs = np.arange(0, d_model, 2)  # step: pairs
    angles = positions / 10000 ** (pairs / d_model)  # step: angles
    pe = np.zeros((seq_len, d_model))  # step: zeros
    pe[:, 0::2] = np.sin(angles)  # step: sines
    pe[:, 1::2] = np.cos(angles[:, : d_model // 2])  # step: cosines
    return pe  # step: result


def positional_encoding_odd_d_model(seq_len, d_model):
    """Every angle given to the cosines too: right for an even d_model, a broadcast error for an odd one."""
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


def positional_encoding_odd_d_model_too_few_angles(seq_len, d_model):
    if d_model % 2 == 0:
        raise NotApplicable  # an even d_model has d_model // 2 pairs: right
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model - 1, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def positional_reference(seq_len, d_model):
    return positional_encoding(seq_len, d_model, dtype=np.float64)


def positional_row_zero_and_pairs(ev):
    """Row 0 reads (0, 1, 0, 1, ...); each pair of columns (2i, 2i + 1) is a sine and cosine of one angle."""
    got = ev.got_array()
    if got is None or got.shape != ev.expected.shape or not np.isfinite(got).all():
        return None
    d_model = got.shape[-1]
    row0 = np.where(np.arange(d_model) % 2 == 0, 0.0, 1.0)
    if not np.allclose(got[0], row0, atol=1e-6):
        if got.shape[0] > 1 and np.allclose(got[0], ev.expected[1], atol=1e-6):
            return None  # the shift by one says it better
        return Finding("pe:row0",
                       f"{ev.where()} row 0 (position 0, where every angle is 0) reads (0, 1, 0, 1, ...): sin 0 "
                       f"in the even columns, cos 0 in the odd ones; yours reads {numbers(got[0], 3)}.")
    pairs = d_model // 2
    if pairs and got.shape[0] > 1 and np.allclose(got[:, 0:2 * pairs:2] ** 2 + got[:, 1:2 * pairs:2] ** 2, 1,
                                                  atol=1e-6):
        turned = np.arctan2(got[1, 0:2 * pairs:2], got[1, 1:2 * pairs:2])  # each pair's angle at position 1
        wanted = 1 / 10000 ** (2 * np.arange(pairs) / d_model)
        bad = np.flatnonzero(~np.isclose(turned, wanted, rtol=1e-6, atol=1e-9))
        if len(bad):
            i = int(bad[0])
            return Finding("pe:frequency",
                           f"{ev.where()} from position 0 to 1 the pair of columns ({2 * i}, {2 * i + 1}) turns by "
                           f"1 / 10000^({2 * i}/{d_model}) = {wanted[i]:.6g} radians; yours turns by {turned[i]:.6g} "
                           f"(read off its sine and cosine at position 1).")
    if pairs and not np.allclose(got[:, 0:2 * pairs:2] ** 2 + got[:, 1:2 * pairs:2] ** 2, 1, atol=1e-6):
        return Finding("pe:pairs",
                       f"{ev.where()} each pair of columns (2i, 2i + 1) holds the sine and the cosine of one angle, "
                       f"so sin\u00b2 + cos\u00b2 = 1 in every pair; in yours it does not.")
    return None


# --- the block -----------------------------------------------------------------------


def block_cases(rng):
    return cases(
        ("the lesson's fixture, post-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {}),
        ("the lesson's fixture, pre-norm", [fixtures.lesson_input(), fixtures.lesson_block_params(), 2], {"norm": "pre"}),
        ("(2, 5, 8), 2 heads, d_ff 12, post-norm, a padding mask",
         [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2],
         {"padding_mask": np.array([[False] * 5, [False] * 3 + [True] * 2])}),
        ("(2, 5, 8), 2 heads, d_ff 12, pre-norm", [normal(rng, 2, 5, 8), random_block(rng, 8, 12), 2], {"norm": "pre"}),
    )


def block_draw(rng, point):
    """x of the point's sizes, a random block, its norm and mask; "large": x of about 100."""
    n_heads, d = point["n_heads"], point["n_heads"] * point["d_head"]
    x = normal(rng, *point.lead, seq_of(point), d) * (100.0 if point.regime == "large" else 1.0)
    said, kwargs = norm_and_mask(rng, point, x)
    return (f"x {x.shape}, {n_heads} heads, d_ff {2 * d + 1}, {said}", [x, random_block(rng, d, 2 * d + 1), n_heads],
            kwargs)


def norm_and_mask(rng, point, x):
    """``(words, kwargs)``: the point's norm and padding mask (``padding_of``) for a block's or a stack's ``x``."""
    kwargs = {"norm": point["norm"]}
    mask = padding_of(rng, point["mask"], x.shape[:-1])
    if mask is not None:
        kwargs["padding_mask"] = mask
    return f"{point['norm']}-norm, " + (f"a mask {mask.shape}" if mask is not None else "no mask"), kwargs


def block_model(x, params, n_heads, norm="post", padding_mask=None):
    n1, n2 = params["norm1"], params["norm2"]  # step: norms
    if norm == "post":  # step: if_post
        a = multi_head_attention(x, n_heads, params["attn"], padding_mask=padding_mask)[0]  # step: post_attention
        h = layer_norm(x + a, n1["gamma"], n1["beta"])  # step: post_h
        f = feed_forward(h, params["ffn"])  # step: post_ffn
        return layer_norm(h + f, n2["gamma"], n2["beta"])  # step: post_result
    normed = layer_norm(x, n1["gamma"], n1["beta"])  # step: pre_normed
    h = x + multi_head_attention(normed, n_heads, params["attn"], padding_mask=padding_mask)[0]  # step: pre_h
    f = feed_forward(layer_norm(h, n2["gamma"], n2["beta"]), params["ffn"])  # step: pre_ffn
    return h + f  # step: pre_result


def post_norm_block_output(ev, norm=None):
    """A post-norm block ends with norm2: its output rows, norm2's gamma and beta undone, have mean 0 and the
    variance the right ones have; measured facts only."""
    got = ev.got_array()
    if got is None or got.shape != ev.expected.shape or (norm or ev.value("norm")) != "post" or \
            not np.isfinite(got).all() or np.allclose(got, ev.expected, atol=1e-6):
        return None
    norm2 = ev.value("params")["norm2"]
    if np.any(np.abs(norm2["gamma"]) < 1e-9):
        return None
    z = (got - norm2["beta"]) / norm2["gamma"]
    right = (ev.expected - norm2["beta"]) / norm2["gamma"]
    means, variances, wanted = z.mean(axis=-1), z.var(axis=-1), right.var(axis=-1)
    if not np.allclose(means, 0, atol=1e-6):
        return Finding("block:post-output",
                       f"{ev.where()} a post-norm block's last step is LN2, so its output rows, with norm2's gamma "
                       f"and beta undone, have mean 0; yours have means {span(means, target=0)}.")
    if np.abs(variances - wanted).max() > 1e-3:  # more than eps makes of a row's variance: it tells them apart
        return Finding("block:post-variance",
                       f"{ev.where()} a post-norm block's output rows, with norm2's gamma and beta undone, have "
                       f"variance {span(wanted)}; yours have mean 0 and variances "
                       f"{span(variances, target=float(np.median(wanted)))}.")
    return Finding("block:normalised-as-ln2",
                   f"{ev.where()} your output's rows are normalised as LN2's output is (mean 0 and variance "
                   f"{span(variances)} with norm2's gamma and beta undone), and differ from the right ones.")


def switched_off(params, part):
    """A block's params with one sub-layer's parameters all 0: that sub-layer then outputs 0."""
    return {**params, part: {name: np.zeros_like(value) for name, value in params[part].items()}}


def block_probes(rng, norms=("post", "pre")):
    """The probes of a block: a small random block with its attention, then its FFN, switched off."""
    x, params = normal(rng, 2, 5, 8), random_block(rng, 8, 12)
    mask = np.array([[False] * 5, [False] * 3 + [True] * 2])
    probes = []
    for norm in norms:
        for part in ("attn", "ffn"):
            kwargs = {"padding_mask": mask} if len(norms) == 1 else {"norm": norm, "padding_mask": mask}
            probes.append((f"{part}-off:{norm}", f"a {norm}-norm block with its {part} switched off",
                           [x, switched_off(params, part), 2], kwargs))
    return probes


def locate_in_block(probed):
    """Which of the block's probes (each sub-layer switched off) the answer gets right: measured, said as it is."""
    if any(ok is None for ok in probed.values()):
        return None  # it raised on a probe: its error says more
    for norm in ("post", "pre"):
        attn_off, ffn_off = probed.get(f"attn-off:{norm}"), probed.get(f"ffn-off:{norm}")
        if attn_off is None or ffn_off is None:
            continue
        said = {True: "right", False: "wrong"}
        return Finding(f"locate:{norm}:attn-off-{said[attn_off]}:ffn-off-{said[ffn_off]}",
                       f"A {norm}-norm block of yours was also run with each sub-layer switched off (its weights all "
                       f"0): it is {said[attn_off]} with the attention switched off, and {said[ffn_off]} with the FFN "
                       f"switched off.")
    return None


def block_with_placements_swapped(x, params, n_heads, norm="post", padding_mask=None):
    other = "pre" if norm == "post" else "post"
    return encoder_block(x, params, n_heads, norm=other, padding_mask=padding_mask)


def block_without_residual(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask, residual=False)


def block_without_the_mask(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, params, n_heads, norm=norm)


def block_with_one_norm_for_both(x, params, n_heads, norm="post", padding_mask=None):
    return encoder_block(x, {**params, "norm2": params["norm1"]}, n_heads, norm=norm, padding_mask=padding_mask)


#: The lesson's exercises, as block.toml declares them.
EXERCISES = load_exercises(globals())
