"""Lesson 09's exercises: RMSNorm, rotary positions, and attention a block of keys at a time (an online softmax).

The code of its exercises: modern.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import math

import numpy as np

from ...attention import blockwise_attention
from ...norm import layer_norm, rms_norm
from ...positional import rope
from ..compare import NotApplicable
from ..in_words import span
from ..symptoms import Finding
from ._base import cases, load_exercises, normal

# --- RMSNorm -------------------------------------------------------------------------------------------------------


def rms_norm_cases(rng):
    return cases(
        ("the row (1, 2, 3, 4)", [np.array([1.0, 2.0, 3.0, 4.0])], {}),
        ("(2, 5, 6) with gamma", [normal(rng, 2, 5, 6), rng.uniform(0.5, 2, 6)], {}),
        ("rows of mean 3 and spread 1 (layer norm would take the 3 out)", [3 + normal(rng, 3, 6)], {}),
        ("rows of mean square about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3], {}),
        ("(3, 4) with gamma and eps=0.5", [normal(rng, 3, 4), rng.uniform(0.5, 2, 4)], {"eps": 0.5}),
    )


def rms_rows(rng, regime, shape):
    """Rows of ``shape``: "offset" (mean about 5, spread 1), "tiny" (mean square about 1e-7, below eps), "large"
    (about 1e4), else ("ordinary", "scaled") about 1 plus 3 times a normal."""
    if regime == "offset":
        return 5 + normal(rng, *shape)
    if regime == "tiny":
        return normal(rng, *shape) * 3e-4
    if regime == "large":
        return normal(rng, *shape) * 1e4
    return normal(rng, *shape) * 3 + 1


def rms_norm_draw(rng, point):
    x = rms_rows(rng, point.regime, (*point.lead, point["d"]))
    args, kwargs, words = [x], {}, "no gamma"
    if point["gamma"] == "given":  # "scaled": gamma of 5 to 10, outputs far larger than the lesson's
        size = rng.uniform(5, 10, point["d"]) if point.regime == "scaled" else rng.uniform(0.5, 2, point["d"])
        args.append(size * rng.choice([-1, 1], point["d"]))
        words = "gamma"
    if point["eps"] != "default":
        kwargs["eps"] = float(point["eps"])
        words += f", eps={point['eps']}"
    return f"x {x.shape}, {words}", args, kwargs


def rms_norm_model(x, gamma=None, eps=1e-5):
    mean_square = (x * x).mean(axis=-1, keepdims=True)  # step: mean_square
    y = x / np.sqrt(mean_square + eps)  # step: scaled
    if gamma is not None:  # step: if_gamma
        y = y * gamma  # step: gamma
    return y  # step: returned


def rms_norm_with_the_mean_taken_out(x, gamma=None, eps=1e-5):
    return layer_norm(x, gamma, eps=eps)


def rms_norm_variant(x, gamma=None, eps=1e-5, *, axis=-1, root=True, eps_outside=False, centred=False, affine=True):
    """RMSNorm with one thing changed: the axis, the root, where eps goes, a centred square, gamma ignored."""
    centre = x.mean(axis=axis, keepdims=True) if centred else 0
    square = ((x - centre) ** 2).mean(axis=axis, keepdims=True)
    scale = (np.sqrt(square) + eps if eps_outside else np.sqrt(square + eps)) if root else square + eps
    y = x / scale
    return y * gamma if affine and gamma is not None else y


def rms_norm_rows(ev):
    """Without gamma, each output row's mean square is ms / (ms + eps) of its input row's mean square ms."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all() or ev.given("gamma"):
        return None
    square = np.mean(x * x, axis=-1)
    wanted, found = square / (square + ev.value("eps")), np.mean(got * got, axis=-1)
    if np.allclose(found, wanted, rtol=1e-5, atol=1e-6):
        return None
    return Finding("rms:squares", f"{ev.where()} RMSNorm's rows have a mean square of ms / (ms + eps), ms the input "
                                  f"row's, here {span(wanted)}; yours have {span(found, target=float(np.median(wanted)))}.")


def rms_norm_keeps_the_direction(ev):
    """RMSNorm only scales each row (without gamma): the output row is a positive multiple of the input row."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all() or ev.given("gamma") or x.shape[-1] < 2:
        return None
    ratio = got / np.where(x == 0, np.nan, x)
    spread = np.nanmax(ratio, axis=-1) - np.nanmin(ratio, axis=-1)
    if np.all(spread <= 1e-6 * np.nanmax(np.abs(ratio), axis=-1) + 1e-12):
        return None
    return Finding("rms:direction", f"{ev.where()} RMSNorm divides each row by one number, so every entry of an "
                                    f"output row is the same multiple of its input entry; in yours the multiples of "
                                    f"one row differ (by up to {float(np.nanmax(spread)):.3g}).")


# --- rotary positions ----------------------------------------------------------------------------------------------


def rope_cases(rng):
    return cases(
        ("the vector (1, 0) at 4 positions, base 10,000", [np.tile([1.0, 0.0], (4, 1))], {}),
        ("(2, 3, 5, 8), the half layout", [normal(rng, 2, 3, 5, 8)], {}),
        ("(5, 6), the interleaved layout", [normal(rng, 5, 6)], {"layout": "interleaved"}),
        ("(6, 4), base 100", [normal(rng, 6, 4)], {"base": 100.0}),
        ("(4, 4) interleaved, base 10", [normal(rng, 4, 4)], {"base": 10.0, "layout": "interleaved"}),
    )


def rope_draw(rng, point):
    scale = 1000.0 if point.regime == "large" else 1.0
    x = normal(rng, *point.lead, point["seq"], point["d_head"]) * scale
    kwargs = {"layout": point["layout"]}
    if point["base"] != "default":
        kwargs["base"] = float(point["base"])
    said = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    return f"x {x.shape}, {said}", [x], kwargs


def rope_model(x, base=10000.0, layout="half"):
    seq, d_head = x.shape[-2], x.shape[-1]
    angle = np.arange(seq)[:, None] * base ** (-np.arange(0, d_head, 2) / d_head)  # step: angle
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)  # step: tables
    if layout == "interleaved":  # step: if_interleaved
        a, b = x[..., 0::2], x[..., 1::2]  # step: pairs_interleaved
    else:
        a, b = x[..., : d_head // 2], x[..., d_head // 2:]  # step: pairs_half
    first, second = a * cos - b * sin, a * sin + b * cos  # step: turned
    if layout == "interleaved":  # step: if_back
        return np.stack([first, second], axis=-1).reshape(x.shape)  # step: back_interleaved
    return np.concatenate([first, second], axis=-1)  # step: back_half


def rope_other_layout(x, base=10000.0, layout="half"):
    return rope(x, base, {"half": "interleaved", "interleaved": "half"}.get(layout, layout))


def rope_positions_from_one(x, base=10000.0, layout="half"):
    return rope(x, base, layout, positions=np.arange(1, x.shape[-2] + 1))


def rope_ignores_base(x, base=10000.0, layout="half"):
    if base == 10000.0:
        raise NotApplicable
    return rope(x, 10000.0, layout)


def rope_variant(x, base=10000.0, layout="half", *, backwards=False, every_column=False):
    """Rotary positions turned the other way, or with a frequency per column (``i / d_head``, not ``2i / d_head``)."""
    seq, d_head = x.shape[-2], x.shape[-1]
    exponent = np.arange(d_head // 2) / d_head if every_column else np.arange(0, d_head, 2) / d_head
    angle = np.arange(seq)[:, None] * base ** -exponent * (-1 if backwards else 1)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    pairs = (x[..., 0::2], x[..., 1::2]) if layout == "interleaved" else np.split(x, 2, axis=-1)
    first, second = pairs[0] * cos - pairs[1] * sin, pairs[0] * sin + pairs[1] * cos
    if layout == "interleaved":
        return np.stack([first, second], axis=-1).reshape(x.shape)
    return np.concatenate([first, second], axis=-1)


def rope_keeps_each_pairs_length(ev):
    """A turn keeps the length of each pair of columns, and position 0 is not turned at all."""
    got, x = ev.got_array(), ev.value("x")
    if got is None or got.shape != x.shape or not np.isfinite(got).all():
        return None
    half = x.shape[-1] // 2
    pair = (lambda a: np.hypot(a[..., 0::2], a[..., 1::2])) if ev.value("layout") == "interleaved" else \
        (lambda a: np.hypot(a[..., :half], a[..., half:]))
    if not np.allclose(pair(got), pair(x), rtol=1e-6, atol=1e-9 * np.abs(x).max()):
        return Finding("rope:lengths", f"{ev.where()} a rotation keeps the length of each pair of columns it turns "
                                       f"(the {ev.value('layout')} layout's pairs); yours changes them.")
    if not np.allclose(got[..., 0, :], x[..., 0, :], rtol=1e-6, atol=1e-12):
        return Finding("rope:position-0", f"{ev.where()} position 0 turns by the angle 0, so its row comes out as it "
                                          f"went in; yours changes it.")
    return None


# --- attention a block of keys at a time ---------------------------------------------------------------------------


def blockwise_cases(rng):
    rising = np.linspace(0, 30, 10)[:, None] * np.ones(4)  # key j scores 60 j / 9 with a query of ones: rising
    return cases(
        ("q (2, 4), k and v (6, 4) and (6, 3), blocks of 2", [normal(rng, 2, 4), normal(rng, 6, 4),
                                                            normal(rng, 6, 3)], {"block": 2}),
        ("each block's largest score above the last one's: keys 0 to 9 scoring 0 to 60, blocks of 3",
         [np.ones((1, 4)), rising, normal(rng, 10, 2)], {"block": 3}),
        ("a batch (2, 3, 5, 4) of 10 keys, blocks of 4 (the last one short)",
         [normal(rng, 2, 3, 5, 4), normal(rng, 2, 3, 10, 4), normal(rng, 2, 3, 10, 2)], {"block": 4}),
        ("scores in the hundreds and values of about 10, blocks of 2",
         [normal(rng, 3, 4) * 20, normal(rng, 5, 4) * 20, normal(rng, 5, 2) * 10], {"block": 2}),
        ("a padding mask: sequence 0's first block all padding, sequence 1 all padding, blocks of 2",
         [normal(rng, 2, 3, 4), normal(rng, 2, 5, 4), normal(rng, 2, 5, 2)],
         {"padding_mask": np.array([[True, True, False, False, True], [True] * 5]), "block": 2}),
        ("one block holding every key (block 64)", [normal(rng, 3, 4), normal(rng, 5, 4), normal(rng, 5, 2)], {}),
    )


def blockwise_draw(rng, point):
    """q, k, v of the point's sizes; "large": scores in the hundreds and values of about 30; "rising": each key
    scores more than the one before it, so that every block raises each query's maximum."""
    lead, s_k = point.lead, point["seq_k"]
    scale = 30.0 if point.regime == "large" else 1.0
    q, k = normal(rng, *lead, point["seq_q"], point["d_k"]) * scale, normal(rng, *lead, s_k, point["d_k"]) * scale
    if point.regime == "rising":
        q = np.abs(q) + 1
        k = np.abs(k) * 0.1 + np.linspace(0, 8, s_k)[:, None]
    v = normal(rng, *lead, s_k, point["d_v"]) * (30.0 if point.regime == "large" else 1.0)
    kwargs = {"block": point["block"]}
    if point["mask"] != "none":
        mask = rng.random((*lead, s_k)) < 0.4 if point["mask"] == "some" else np.ones((*lead, s_k), dtype=bool)
        kwargs["padding_mask"] = mask
    words = f"q {q.shape}, k {k.shape}, v {v.shape}, blocks of {point['block']}"
    return words + ("" if point["mask"] == "none" else f", a padding mask ({point['mask']})"), [q, k, v], kwargs


def blockwise_model(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])  # step: scale
    peak = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)  # step: peak_start
    total = np.zeros(q.shape[:-1] + (1,), dtype=q.dtype)  # step: total_start
    out = np.zeros(q.shape[:-1] + v.shape[-1:], dtype=q.dtype)  # step: out_start
    for start in range(0, k.shape[-2], block):  # step: blocks
        scores = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) * scale  # step: scores
        if padding_mask is not None:  # step: if_mask
            scores = np.where(padding_mask[..., None, start:start + block], -np.inf, scores)  # step: masked
        new_peak = np.maximum(peak, scores.max(axis=-1, keepdims=True))  # step: new_peak
        shift = np.where(np.isneginf(new_peak), 0, new_peak)  # step: shift
        rescale = np.exp(peak - shift)  # step: rescale
        weights = np.exp(scores - shift)  # step: weights
        total = total * rescale + weights.sum(axis=-1, keepdims=True)  # step: total
        out = out * rescale + weights @ v[..., start:start + block, :]  # step: out
        peak = new_peak  # step: peak
    return out / np.where(total == 0, 1, total)  # step: result


def blockwise_each_block_alone(q, k, v, padding_mask=None, block=64):
    """Each block's softmax on its own, the blocks' outputs averaged: no running maximum and sum across blocks (a
    block whose keys are all padding gives NaN, 0 / 0)."""
    outs = []
    for s in range(0, k.shape[-2], block):
        scores = q @ np.swapaxes(k[..., s:s + block, :], -1, -2) / math.sqrt(q.shape[-1])
        if padding_mask is not None:
            scores = np.where(padding_mask[..., None, s:s + block], -np.inf, scores)
        with np.errstate(invalid="ignore"):
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            outs.append(e / e.sum(axis=-1, keepdims=True) @ v[..., s:s + block, :])
    return sum(outs) / len(outs)


def blockwise_variant(q, k, v, padding_mask=None, block=64, *, rescale_out=True, rescale_total=True):
    """The online softmax with what was summed so far not rescaled when the maximum rises (the output's sum, the
    total's, or both)."""
    scale = 1 / math.sqrt(q.shape[-1])
    peak = np.full(q.shape[:-1] + (1,), -np.inf)
    total, out = np.zeros(q.shape[:-1] + (1,)), np.zeros(q.shape[:-1] + v.shape[-1:])
    for start in range(0, k.shape[-2], block):
        scores = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) * scale
        if padding_mask is not None:
            scores = np.where(padding_mask[..., None, start:start + block], -np.inf, scores)
        new_peak = np.maximum(peak, scores.max(axis=-1, keepdims=True))
        shift = np.where(np.isneginf(new_peak), 0, new_peak)
        rescale = np.exp(peak - shift)
        weights = np.exp(scores - shift)
        total = (total * rescale if rescale_total else total) + weights.sum(axis=-1, keepdims=True)
        out = (out * rescale if rescale_out else out) + weights @ v[..., start:start + block, :]
        peak = new_peak
    return (out / np.where(total == 0, 1, total)).astype(q.dtype)


def blockwise_nan_for_all_padding(q, k, v, padding_mask=None, block=64):
    """A sequence whose keys are all padding gives NaN (0 / 0), not zeros."""
    if padding_mask is None or not padding_mask.all(axis=-1).any():
        raise NotApplicable
    out = blockwise_attention(q, k, v, padding_mask, block)
    return np.where(padding_mask.all(axis=-1)[..., None, None], np.nan, out)


def blockwise_within_the_values(ev):
    """Each query's output is a weighted mean of the values it may read: every entry lies within their range."""
    got, v = ev.got_array(), np.asarray(ev.value("v"), dtype=float)
    if got is None or got.shape != np.shape(ev.expected) or not np.isfinite(got).all() or ev.given("padding_mask"):
        return None
    low, high = v.min(axis=-2, keepdims=True), v.max(axis=-2, keepdims=True)  # (..., 1, d_v)
    room = 1e-9 * (np.abs(v).max() + 1)
    outside = (got < low - room) | (got > high + room)
    if not outside.any():
        return None
    return Finding("blockwise:outside", f"{ev.where()} each query's output is a weighted mean of the values (weights "
                                        f"that sum to 1), so every entry lies between the values' smallest and "
                                        f"largest; {outside.mean():.0%} of yours lie outside.")


#: The lesson's exercises, as modern.toml declares them.
EXERCISES = load_exercises(globals())
