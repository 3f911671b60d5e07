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
    """The unchecked core: (..., s_q, d_k), (..., s_k, d_k), (..., s_k, d_v) -> out, weights; ``mask`` a padding
    mask (..., s_k) or None."""
    return _attend_masked(q, k, v, None if mask is None else mask[..., None, :])


def _attend_masked(q, k, v, mask):
    """``_attend`` with ``mask`` (True = left out) broadcastable to the scores (..., s_q, s_k), or None."""
    scale = np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype)
    scores = _finite_scores((q * scale) @ np.swapaxes(k, -1, -2), q, k)  # (..., s_q, s_k)
    weights = _masked_softmax(scores, mask)
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
    return _attend(*sdpa_arguments(q, k, v, padding_mask))


def _finite_scores(scores, q, k):
    """``scores``, refused with ``Overflow`` where q k^T / sqrt(d_k) does not fit the dtype."""
    if not np.isfinite(scores).all():
        raise _checks.Overflow(
            f"the attention scores q k^T / sqrt(d_k) overflow {q.dtype} (queries up to "
            f"{np.abs(q).max():.3g}, keys up to {np.abs(k).max():.3g}): compute in float64, or scale the input down")
    return scores


def sdpa_arguments(q, k, v, padding_mask):
    """``scaled_dot_product_attention``'s arguments, checked: ``(q, k, v, mask)``."""
    q = _checks.float_array(q, "q", min_ndim=2)
    k = _checks.float_array(k, "k", min_ndim=2)
    v = _checks.float_array(v, "v", min_ndim=2)
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share one dtype, got {q.dtype}, {k.dtype} and {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last axis d_k, got q {q.shape} and k {k.shape}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of positions seq_k, got k {k.shape} and v {v.shape}")
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch axes of q, k and v must broadcast, got q {q.shape}, k {k.shape}, v {v.shape}") \
            from None
    mask = _checks.padding_mask(padding_mask, lead + k.shape[-2:], "padding_mask")
    return q, k, v, mask


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


# ---------------------------------------------------------------- masks: which keys a query may not see


@_checks.public
def causal_mask(seq):
    """(seq, seq) boolean, True where key ``j`` comes after query ``i`` (``j > i``): what a decoder hides.

    This course's convention, as ``padding_mask``'s: True = left out. Every
    query keeps itself and the keys before it, so no row is all True. An
    encoder reads both ways and uses no causal mask; GPT-style models do.

    >>> causal_mask(3)
    array([[False,  True,  True],
           [False, False,  True],
           [False, False, False]])
    """
    seq = _checks.positive_int(seq, "seq")
    return np.triu(np.ones((seq, seq), dtype=bool), k=1)


@_checks.public
def local_window_mask(seq, window):
    """(seq, seq) boolean, True where key ``j`` lies more than ``window // 2`` positions from query ``i``.

    ModernBERT's local attention: its ``local_attention`` of 128 lets each
    token see 64 tokens on either side and itself, ``|i - j| <= 64``
    (``ModernBertConfig.sliding_window`` is ``local_attention // 2``, and
    ``sliding_window_bidirectional_overlay`` in transformers' masking_utils
    keeps ``abs(q_idx - kv_idx) <= sliding_window``). True = left out, as
    every mask of this course. ``window`` at least ``2 (seq - 1)`` leaves
    nothing out: a global layer.

    >>> local_window_mask(5, 2).astype(int)  # one position either side
    array([[0, 0, 1, 1, 1],
           [0, 0, 0, 1, 1],
           [1, 0, 0, 0, 1],
           [1, 1, 0, 0, 0],
           [1, 1, 1, 0, 0]])
    """
    seq = _checks.positive_int(seq, "seq")
    window = _checks.positive_int(window, "window")
    return _window_mask(seq, window)


def _window_mask(seq, window):
    """The unchecked core of local_window_mask."""
    pos = np.arange(seq)
    return np.abs(pos[:, None] - pos[None, :]) > window // 2


#: Who writes a mask which way round: (where, the argument, what True (or 1) means there, where the source says so).
#: PyTorch alone has both conventions, one per function.
MASK_CONVENTIONS = (
    ("this course (encoder_lib)", "padding_mask, causal_mask, local_window_mask (boolean)",
     "left out: padding, or a key this query may not see", "encoder_lib/attention.py"),
    ("PyTorch nn.MultiheadAttention, nn.TransformerEncoderLayer",
     "key_padding_mask / src_key_padding_mask and attn_mask / mask (boolean)",
     "left out: 'a True value indicates that the corresponding key value will be ignored'",
     "torch/nn/modules/activation.py, MultiheadAttention.forward"),
    ("PyTorch F.scaled_dot_product_attention", "attn_mask (boolean)",
     "kept: 'a value of True indicates that the element should take part in attention', the inverse of "
     "MultiheadAttention's key_padding_mask (its docstring's note)", "torch/nn/functional.py"),
    ("Hugging Face transformers", "attention_mask (the tokenizer's 1s and 0s)",
     "kept: '1 for tokens that are not masked, 0 for tokens that are masked'",
     "transformers/utils/auto_docstring.py; masking_utils.padding_mask_function keeps a key where it is 1"),
)


@_checks.public
def mask_conventions():
    """``MASK_CONVENTIONS`` as a table: one dict per row, keys ``where``, ``argument``, ``true_means``, ``source``.

    >>> [row["where"] for row in mask_conventions()][:2]
    ['this course (encoder_lib)', 'PyTorch nn.MultiheadAttention, nn.TransformerEncoderLayer']
    """
    return [dict(zip(("where", "argument", "true_means", "source"), row)) for row in MASK_CONVENTIONS]


# ---------------------------------------------------------------- attention's memory, and blockwise attention


@_checks.public
def attention_weights_bytes(seq, *, batch=1, heads=1, dtype=np.float32, block=None):
    """The bytes of the attention weights (batch, heads, seq, seq) in ``dtype``: they grow with seq squared.

    With ``block``, the bytes of the (batch, heads, seq, block) scores that
    ``blockwise_attention`` holds at a time instead: they grow with seq.

    >>> attention_weights_bytes(512, heads=12), attention_weights_bytes(8192, heads=12)  # BERT-base's heads
    (12582912, 3221225472)
    """
    seq = _checks.positive_int(seq, "seq")
    keys = seq if block is None else min(seq, _checks.positive_int(block, "block"))
    size = _checks.positive_int(batch, "batch") * _checks.positive_int(heads, "heads") * seq * keys
    return size * np.dtype(_checks.float_dtype(dtype)).itemsize


def _blockwise(q, k, v, mask, block, tape=None):
    """The unchecked core of blockwise_attention: one block of keys at a time, an online softmax per query.
    ``tape`` (a dict), when given, keeps ``out`` and each query's ``logsumexp`` of its scores (+inf where it has
    no key), from which the backward pass recomputes any block's weights."""
    scaled = q * np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype)
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]) + q.shape[-2:-1]  # (..., s_q)
    peak = np.full(lead + (1,), -np.inf, dtype=q.dtype)  # the largest score each query has seen so far
    total = np.zeros(lead + (1,), dtype=q.dtype)  # sum of exp(score - peak) over the keys seen
    out = np.zeros(lead + v.shape[-1:], dtype=q.dtype)  # sum of exp(score - peak) * value over the keys seen
    for start in range(0, k.shape[-2], block):
        keys = slice(start, start + block)
        scores = _finite_scores(scaled @ np.swapaxes(k[..., keys, :], -1, -2), q, k)  # (..., s_q, block): this block
        if mask is not None:
            np.copyto(scores, -np.inf, where=mask[..., None, keys])
        new_peak = np.maximum(peak, scores.max(axis=-1, keepdims=True))
        shift = np.where(np.isneginf(new_peak), 0, new_peak)  # a query that has seen no key yet: nothing to shift
        rescale = np.exp(peak - shift)  # what was summed under the old peak, now under the new one: exact
        weights = np.exp(scores - shift)  # (..., s_q, block)
        total = total * rescale + weights.sum(axis=-1, keepdims=True)
        out = out * rescale + weights @ v[..., keys, :]
        peak = new_peak
    empty = total == 0  # a query whose keys are all padding: zero output, as scaled_dot_product_attention
    total[empty] = 1
    out /= total
    if tape is not None:
        tape.update(out=out, logsumexp=np.where(empty, np.inf, peak + np.log(total)))
    return out


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    """``scaled_dot_product_attention(q, k, v, padding_mask)[0]``, a block of keys at a time (FlashAttention's sums).

    Each query keeps a running maximum ``m`` of its scores, a running sum
    ``l`` of ``exp(score - m)`` and a running sum of ``exp(score - m) v``.
    A block with a larger score raises ``m``; what was summed so far is then
    multiplied by ``exp(m_old - m_new)``, which turns every term
    ``exp(s - m_old)`` into ``exp(s - m_new)`` exactly, so at the end
    ``out / l`` is the softmax-weighted sum of the values, equal to the full
    computation up to rounding. Only (..., seq_q, block) scores exist at a
    time, never the (..., seq_q, seq_k) weights (``attention_weights_bytes``).
    Shapes and ``padding_mask`` as ``scaled_dot_product_attention``; returns
    ``out`` (..., seq_q, d_v) only.

    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.standard_normal((3, 10, 4))
    >>> bool(np.allclose(blockwise_attention(q, k, v, block=3), scaled_dot_product_attention(q, k, v)[0]))
    True
    """
    q, k, v, mask = sdpa_arguments(q, k, v, padding_mask)
    return _blockwise(q, k, v, mask, _checks.positive_int(block, "block"))
