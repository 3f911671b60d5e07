"""Softmax, scaled dot-product attention and multi-head self-attention.

Shapes use ``...`` for any leading batch axes. ``padding_mask`` is boolean
``(..., seq)``: True marks a padding position, as in PyTorch's
``src_key_padding_mask``. No query attends to a padded key; a sequence whose
keys are all padding gets all-zero attention weights (never NaN).
"""

import numpy as np

from . import _checks

ATTENTION_KEYS = ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o")


@_checks.public
def softmax(x, axis=-1):
    """Turn scores into probabilities along ``axis``; numerically stable.

    Subtracting each row's maximum before ``exp`` changes nothing
    mathematically but keeps ``exp`` from overflowing: scores of any finite
    size are fine (1e308 too). A score of -inf gets weight 0 (a key left
    out); a row that is -inf throughout has no softmax (0 / 0) and is
    refused, as are NaN and +inf. ``masked_softmax`` gives such rows zeros.

    >>> softmax(np.array([1.0, 2.0, 3.0])).round(4)
    array([0.09  , 0.2447, 0.6652])
    >>> softmax(np.array([0.0, 0.0, -np.inf]))
    array([0.5, 0.5, 0. ])
    """
    x = _checks.float_array(x, "x", finite=False)
    axis = _checks.axis(axis, x.ndim)
    bad = np.isnan(x) | np.isposinf(x)
    if bad.any():
        first = np.argwhere(bad)[0]
        raise ValueError(f"x must hold finite numbers or -inf, but x[{', '.join(str(int(i)) for i in first)}] is "
                         f"{x[tuple(first)]}")
    peak = x.max(axis=axis, keepdims=True)
    if np.isneginf(peak).any():
        where = list(np.argwhere(np.isneginf(peak))[0])
        where[axis] = ":"
        row = "x[" + ", ".join(str(i) for i in where) + "]"
        raise ValueError(f"every score in {row} is -inf, so its softmax would be 0 / 0 (NaN). A row whose "
                         f"keys are all left out (a sequence that is all padding) needs all-zero weights: "
                         f"give those rows zeros yourself (masked_softmax does)")
    e = np.exp(x - peak)
    return e / e.sum(axis=axis, keepdims=True)


def _row_max(x):
    """The maximum of each row (last axis), keepdims. For short rows, one elementwise maximum per column
    is several times faster than numpy's reduction (whose cost per row dominates): attention over 10
    tokens has rows of 10. The result is the same either way: a maximum has no rounding."""
    if x.shape[-1] > 64:
        return x.max(axis=-1, keepdims=True)
    peak = x[..., :1].copy()
    for j in range(1, x.shape[-1]):
        np.maximum(peak, x[..., j : j + 1], out=peak)
    return peak


def _masked_softmax(scores, mask):
    """Softmax over the last axis, in place; ``mask`` (broadcastable, True = drop) or None.

    A row whose scores are all -inf (every key masked) gets zero weights, not NaN.
    """
    if mask is not None:
        np.copyto(scores, -np.inf, where=mask)
    peak = _row_max(scores)
    peak[~np.isfinite(peak)] = 0.0  # a row with every key masked: exp gives 0, not NaN
    scores -= peak
    np.exp(scores, out=scores)
    total = scores.sum(axis=-1, keepdims=True)
    total[total == 0] = 1.0  # all-masked rows stay at zero weight
    scores /= total
    return scores


@_checks.public
def masked_softmax(scores, padding_mask=None):
    """Attention weights from ``scores`` (..., seq_q, seq_k), never putting weight on a padded key.

    ``padding_mask`` is boolean (..., seq_k), True at padding. Padded keys get
    score -inf *before* the softmax, so every row still sums to 1 over the real
    keys; a row whose keys are all padding gets all-zero weights, not NaN.
    Scores may be -inf already (a key left out that way); a row of -inf only
    gets zeros too. NaN and +inf scores are refused.

    >>> masked_softmax(np.zeros((1, 3)), np.array([False, False, True]))
    array([[0.5, 0.5, 0. ]])
    """
    scores = _checks.float_array(scores, "scores", min_ndim=2, finite=False)
    if np.isnan(scores).any() or np.isposinf(scores).any():
        raise ValueError("scores must not contain NaN or +inf")
    # checked like a (..., seq_k, features) input: batch axes scores.shape[:-2], length seq_k
    mask = _checks.padding_mask(padding_mask, scores.shape[:-2] + scores.shape[-1:] + (1,), "padding_mask")
    return _masked_softmax(scores.copy(), None if mask is None else mask[..., None, :])


def _attend(q, k, v, mask):
    """The unchecked core: (..., s_q, d_k), (..., s_k, d_k), (..., s_k, d_v) -> out, weights."""
    scale = np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype)
    scores = (q * scale) @ np.swapaxes(k, -1, -2)  # (..., s_q, s_k)
    if not np.isfinite(scores).all():
        raise _checks.Overflow(
            f"the attention scores q k^T / sqrt(d_k) overflow {q.dtype} (queries up to "
            f"{np.abs(q).max():.3g}, keys up to {np.abs(k).max():.3g}): compute in float64, or scale the input down")
    weights = _masked_softmax(scores, None if mask is None else mask[..., None, :])
    return weights @ v, weights  # (..., s_q, d_v), (..., s_q, s_k)


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def scaled_dot_product_attention(q, k, v, padding_mask=None):
    """``softmax(q k^T / sqrt(d_k)) v`` with an optional key padding mask.

    q: (..., seq_q, d_k), k: (..., seq_k, d_k), v: (..., seq_k, d_v),
    padding_mask: boolean (..., seq_k) or None.
    Returns ``out`` (..., seq_q, d_v) and ``weights`` (..., seq_q, seq_k),
    whose rows sum to 1 (0 for a query whose keys are all padding).

    >>> q = np.array([[1.0], [1.0]]); k = np.array([[2.0], [2.0]]); v = np.array([[4.0], [10.0]])
    >>> scaled_dot_product_attention(q, k, v)[0]  # equal keys: the mean of the values
    array([[7.],
           [7.]])
    """
    q = _checks.float_array(q, "q", min_ndim=2)
    k = _checks.float_array(k, "k", min_ndim=2)
    v = _checks.float_array(v, "v", min_ndim=2)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share one dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last axis d_k, got q {q.shape} and k {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of positions seq_k, got k {k.shape} and v {v.shape}"
        )
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch axes of q, k and v must broadcast, got q {q.shape}, k {k.shape}, v {v.shape}"
        ) from None
    mask = _checks.padding_mask(padding_mask, lead + k.shape[-2:], "padding_mask")
    return _attend(q, k, v, mask)


def _split_heads(x, n_heads):
    """(..., seq, d_model) -> (..., n_heads, seq, d_head); head h takes columns h*d_head:(h+1)*d_head."""
    *lead, seq, d_model = x.shape
    x = x.reshape(*lead, seq, n_heads, d_model // n_heads)  # (..., seq, n_heads, d_head)
    return np.swapaxes(x, -2, -3)  # (..., n_heads, seq, d_head)


def _merge_heads(x):
    """(..., n_heads, seq, d_head) -> (..., seq, n_heads * d_head), the inverse of _split_heads."""
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(x, -2, -3).reshape(*lead, seq, n_heads * d_head)


@_checks.public
def split_heads(x, n_heads):
    """(..., seq, d_model) -> (..., n_heads, seq, d_head), a new array; head h takes columns
    h*d_head:(h+1)*d_head of every position, d_head = d_model // n_heads.

    >>> split_heads(np.arange(8.0).reshape(2, 4), 2)[1]  # head 1: columns 2 and 3 of both positions
    array([[2., 3.],
           [6., 7.]])
    """
    x = _checks.sequence(x)
    return _split_heads(x, _checks.heads(x.shape[-1], n_heads)).copy()


@_checks.public
def merge_heads(x):
    """(..., n_heads, seq, d_head) -> (..., seq, n_heads * d_head), a new array: the inverse of split_heads.

    >>> merge_heads(split_heads(np.arange(8.0).reshape(2, 4), 2))
    array([[0., 1., 2., 3.],
           [4., 5., 6., 7.]])
    """
    x = _checks.float_array(x, "x", min_ndim=3)
    return _merge_heads(x).copy()


def check_attention_params(params, d_model, dtype, where="params"):
    """Check the eight attention arrays against ``d_model`` and ``dtype``; returns them."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(ATTENTION_KEYS)} or None, got {type(params).__name__}")
    out = {}
    for key in ATTENTION_KEYS:
        shape = (d_model, d_model) if key.startswith("w") else (d_model,)
        out[key] = _checks.param_array(params, key, shape, dtype, where)
    return out


def _linear(x, w, b):
    """(..., d_in) @ (d_in, d_out) + (d_out,) as one matrix product over all positions."""
    lead = x.shape[:-1]
    y = x.reshape(-1, x.shape[-1]) @ w
    y += b
    return y.reshape(*lead, w.shape[1])


def mha_arguments(x, n_heads, params, padding_mask):
    """``multi_head_attention``'s arguments, checked: ``(x, n_heads, params, mask)``, for it and its gradient.

    ``d_model`` must split into the heads; ``params`` may be None (identity projections).
    """
    x = _checks.sequence(x)
    n_heads = _checks.heads(x.shape[-1], n_heads)
    if params is not None:
        params = check_attention_params(params, x.shape[-1], x.dtype)
    return x, n_heads, params, _checks.padding_mask(padding_mask, x.shape)


def _mha(x, n_heads, params, mask, tape=None):
    """The unchecked core of multi_head_attention. ``tape`` (a dict), when given, keeps what the backward
    pass needs: the input ``x``, the fused ``w_qkv``, ``q``, ``k``, ``v``, the ``weights`` and the merged
    ``heads`` before the output projection."""
    d_model = x.shape[-1]
    w_qkv = None
    if params is None:  # the lesson's variant: identity projections, no output projection
        q = k = v = _split_heads(x, n_heads)
    else:
        # one fused product for q, k and v instead of three
        w_qkv = np.concatenate([params["w_q"], params["w_k"], params["w_v"]], axis=1)  # (d, 3d)
        b_qkv = np.concatenate([params["b_q"], params["b_k"], params["b_v"]])
        qkv = _linear(x, w_qkv, b_qkv)  # (..., seq, 3 d_model)
        q = _split_heads(qkv[..., :d_model], n_heads)  # (..., n_heads, seq, d_head)
        k = _split_heads(qkv[..., d_model : 2 * d_model], n_heads)
        v = _split_heads(qkv[..., 2 * d_model :], n_heads)
    if mask is not None:
        mask = mask[..., None, :]  # (..., 1, seq): the same keys are padding for every head
    out, weights = _attend(q, k, v, mask)  # (..., n_heads, seq, d_head), (..., n_heads, seq, seq)
    out = _merge_heads(out)  # (..., seq, d_model)
    if tape is not None:
        tape.update(x=x, w_qkv=w_qkv, q=q, k=k, v=v, weights=weights, heads=out)
    if params is not None:
        out = _linear(out, params["w_o"], params["b_o"])
    return out, weights


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def multi_head_attention(x, n_heads, params=None, padding_mask=None):
    """Multi-head self-attention over ``x`` (..., seq, d_model).

    Each of the ``n_heads`` heads attends with its own slice of
    ``d_head = d_model // n_heads`` columns of the projected queries, keys and
    values; the heads' outputs are concatenated and projected by ``w_o``.
    ``params`` holds ``w_q, b_q, w_k, b_k, w_v, b_v, w_o, b_o`` with weights in
    (in, out) orientation, used as ``x @ w + b``; ``params=None`` uses identity
    projections and no output projection (the lesson's variant).

    Returns ``out`` (..., seq, d_model) and ``weights`` (..., n_heads, seq, seq).

    >>> x = np.array([[1.0, 0.0, 0.5, -1.0], [0.0, 1.0, -0.5, 2.0], [1.0, 1.0, 0.0, 0.0]])
    >>> out, weights = multi_head_attention(x, n_heads=2)
    >>> out.shape, weights.shape
    ((3, 4), (2, 3, 3))
    """
    return _mha(*mha_arguments(x, n_heads, params, padding_mask))
