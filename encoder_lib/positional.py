"""Positions: the sinusoidal encoding of "Attention Is All You Need", and rotary positions (RoPE, Su et al. 2021).

The sinusoidal table is added to the input once; a shift by ``d`` positions
is a rotation of it, the same for every position (``shift_rotation``).
Rotary positions rotate the queries and keys themselves, in every layer, so
that a score ``q_i . k_j`` depends on the positions only through ``i - j``
(``rope``). Two layouts pair the columns differently (``rope_pairs``):
``"interleaved"`` turns columns (0, 1), (2, 3), ... (RoFormer, GPT-J, Meta's
original LLaMA code), ``"half"`` turns (0, d/2), (1, d/2 + 1), ... (GPT-NeoX,
Hugging Face's LLaMA and ModernBERT, their ``rotate_half``).
"""

import numpy as np

from . import _checks


@_checks.public
def positional_encoding(seq_len, d_model, dtype=np.float32):
    """(seq_len, d_model) table: sine in the even columns, cosine in the odd ones.

    ``PE[pos, 2i] = sin(pos / 10000^(2i / d_model))`` and
    ``PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))``: each pair of
    columns is a clock of its own frequency, from one turn every 2 pi positions
    down to one every 10000 * 2 pi. Add it to the token embeddings.

    >>> positional_encoding(3, 4, dtype=np.float64).round(4)
    array([[ 0.    ,  1.    ,  0.    ,  1.    ],
           [ 0.8415,  0.5403,  0.01  ,  1.    ],
           [ 0.9093, -0.4161,  0.02  ,  0.9998]])
    """
    seq_len = _checks.positive_int(seq_len, "seq_len")
    d_model = _checks.positive_int(d_model, "d_model")
    dtype = _checks.float_dtype(dtype)
    pos = np.arange(seq_len, dtype=np.float64)[:, None]  # (seq_len, 1)
    freq = 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (ceil(d/2),)
    angle = pos * freq  # (seq_len, ceil(d_model / 2))
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe.astype(dtype)


LAYOUTS = ("half", "interleaved")


@_checks.public
def shift_rotation(offset, d_model, dtype=np.float32):
    """The (d_model, d_model) matrix ``R`` with ``PE[i + offset] = R @ PE[i]`` for every position ``i``.

    Each pair of columns of ``positional_encoding`` is ``(sin(i w), cos(i w))``
    for one frequency ``w``; moving ``offset`` positions on turns that pair by
    the angle ``offset * w``, whatever ``i`` is (d2l.ai, section 11.6): ``R``
    is block diagonal, one 2 x 2 rotation ``[[cos, sin], [-sin, cos]]`` of
    ``offset * w`` per pair. ``d_model`` must be even (an odd one leaves a
    column without its pair).

    >>> pe = positional_encoding(10, 4, dtype=np.float64)
    >>> bool(np.allclose(shift_rotation(3, 4, dtype=np.float64) @ pe[2], pe[5]))
    True
    """
    offset = _checks.integer(offset, "offset")
    d_model = _even(d_model, "d_model")
    dtype = _checks.float_dtype(dtype)
    angle = offset * 10000.0 ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (d_model / 2,)
    r = np.zeros((d_model, d_model))
    pair = np.arange(0, d_model, 2)
    r[pair, pair] = r[pair + 1, pair + 1] = np.cos(angle)
    r[pair, pair + 1], r[pair + 1, pair] = np.sin(angle), -np.sin(angle)
    return r.astype(dtype)


def _even(value, name):
    value = _checks.positive_int(value, name)
    if value % 2:
        raise ValueError(f"{name} must be even (its columns are turned in pairs), got {value}")
    return value


def _rope_angles(positions, d_head, base):
    """(seq, d_head / 2) float64: position p turns pair i by ``p * base ** (-2 i / d_head)``."""
    return positions.astype(np.float64)[:, None] * base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def _pairs(x, layout):
    """The two columns each turn mixes, as views ``(first, second)``, each (..., d_head / 2)."""
    if layout == "interleaved":
        return x[..., 0::2], x[..., 1::2]
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]


def _rope(x, cos, sin, layout):
    """Turn each pair ``(a, b)`` of x's columns to ``(a cos - b sin, a sin + b cos)``; cos, sin (seq, d_head / 2)."""
    a, b = _pairs(x, layout)
    out = np.empty_like(x)
    first, second = _pairs(out, layout)
    first[...] = a * cos - b * sin
    second[...] = a * sin + b * cos
    return out


def rope_tables(seq, d_head, base, dtype, positions=None):
    """``(cos, sin)`` of the turning angles, each (seq, d_head / 2) in ``dtype`` (angles computed in float64)."""
    angles = _rope_angles(np.arange(seq) if positions is None else positions, d_head, base)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def _positions(positions, seq):
    if positions is None:
        return None
    arr = np.asarray(positions)
    if arr.dtype.kind not in "iuf" or arr.shape != (seq,) or not np.isfinite(arr).all():
        raise ValueError(f"positions must be {seq} finite numbers (one per row of x), got {arr.dtype} {arr.shape}")
    return arr


@_checks.public
def rope(x, base=10000.0, layout="half", positions=None):
    """Rotary positions: turn row ``p`` of ``x`` (..., seq, d_head) by angles that grow with ``p``.

    Pair ``i`` of columns turns by ``p * base ** (-2i / d_head)``. Applied to
    the queries and the keys of one head, ``rope(q)[i] . rope(k)[j]`` depends
    on ``i - j`` only, since turning both by ``p`` changes no dot product.
    ``layout`` says which columns pair up (``rope_pairs``); ``positions``
    (seq,) replaces ``0, 1, ..., seq - 1``. ``base`` is 10,000 in RoFormer
    and LLaMA; ModernBERT uses 160,000 in its global layers and 10,000 in
    its local ones (``ModernBertConfig.default_theta``). d_head must be even.

    >>> q = np.ones((4, 2)); k = np.ones((4, 2))
    >>> scores = rope(q) @ rope(k).T
    >>> bool(np.allclose(np.diag(scores, 1), scores[0, 1]))  # every (i, i + 1) pair scores the same
    True
    """
    x = _checks.sequence(x)
    _even(x.shape[-1], "d_head (the last axis of x)")
    layout = _checks.choice(layout, "layout", LAYOUTS)
    cos, sin = rope_tables(x.shape[-2], x.shape[-1], _checks.positive_number(base, "base"), x.dtype,
                           _positions(positions, x.shape[-2]))
    return _rope(x, cos, sin, layout)


@_checks.public
def rope_pairs(d_head, layout="half"):
    """(d_head / 2, 2) integers: row ``i`` holds the two columns that turn together, by ``p * base ** (-2i/d_head)``.

    ``"interleaved"`` pairs neighbours, ``"half"`` pairs column ``i`` with
    ``i + d_head / 2``. So with the same weights the two layouts turn
    different columns together at different speeds and give different
    scores; but they are one reordering apart: with ``order =
    rope_pairs(d_head, "half").ravel()``, ``rope(x[..., order],
    layout="interleaved")`` is ``rope(x, layout="half")[..., order]``, and
    reordering q's and k's columns alike changes no score. That is the
    reordering of the q and k weights in Hugging Face's LLaMA conversion
    script (``permute`` in ``convert_llama_weights_to_hf.py``).

    >>> rope_pairs(6, "interleaved").tolist(), rope_pairs(6, "half").tolist()
    ([[0, 1], [2, 3], [4, 5]], [[0, 3], [1, 4], [2, 5]])
    """
    d_head = _even(d_head, "d_head")
    layout = _checks.choice(layout, "layout", LAYOUTS)
    first = np.arange(d_head // 2)
    if layout == "interleaved":
        return np.stack([2 * first, 2 * first + 1], axis=1)
    return np.stack([first, first + d_head // 2], axis=1)
