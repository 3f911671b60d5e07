"""Wrong answers, each with the rule of the feedback's measurements that must say what is wrong with it
(``tests/test_feedback.py``), and more wrong answers the feedback was not written from.

Each row of ``MEASURED`` is a wrong answer, written as a learner would (or, for
a few facts, an output made by hand from the right one). Like ``tests/mistakes/``,
this file is wrong on purpose: its answers repeat each other but for the one
line that is wrong.
"""

import numpy as np


def by_hand(change):
    """An output made from the right one by ``change(expected, case)``."""
    return lambda case: change(np.array(case.expected, dtype=float), case)


def _one_row_off(expected, case):
    expected = expected.copy()
    expected.reshape(-1, expected.shape[-1])[-1] += np.arange(expected.shape[-1]) + 1.0
    return expected


#: (exercise, the property or probe, the key its finding starts with, the wrong answer: source or output by hand)
#: (exercise, the rule that must say what is wrong (a general fact of ``symptoms`` or ``<exercise>.<property>``),
#: the key its finding starts with, the wrong answer: source or output by hand)
MEASURED = [
    ("gelu", "gelu.gelu_at_zero", "gelu:zero", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / np.sqrt(2))) + 0.05
'''),
    ("scaled_dot_product_attention", "scaled_dot_product_attention.attention_weights_sum_over_the_keys", "weights:sum",
     '''
def scaled_dot_product_attention(q, k, v):
    weights = np.exp(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) / 2
    return weights @ v, weights
'''),
    ("scaled_dot_product_attention", "scaled_dot_product_attention.attention_output_is_weights_times_values",
     "out:not-weights-times-v", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    return weights @ v + 0.1, weights
'''),
    ("layer_norm", "fact_error", "error:broadcast-axis", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    return (x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
'''),
    ("feed_forward", "fact_error", "error:broadcast", '''
def feed_forward(x, params, activation="relu"):
    return np.maximum(x @ params["w1"] + params["b2"], 0) @ params["w2"] + params["b2"]
'''),
    ("merge_heads", "fact_error", "error:unpack", '''
def merge_heads(x):
    n_heads, seq, d_head = x.shape
    return np.swapaxes(x, 0, 1).reshape(seq, n_heads * d_head)
'''),
    ("multi_head_attention", "fact_error", "error:none", '''
def multi_head_attention(x, n_heads, params=None):
    q, k, v = (split_heads(x @ params["w_" + n] + params["b_" + n], n_heads) for n in "qkv")
    out, weights = scaled_dot_product_attention(q, k, v)
    return merge_heads(out) @ params["w_o"] + params["b_o"], weights
'''),
    ("softmax", "fact_error", "error:axis", '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=2, keepdims=True))
    return e / e.sum(axis=2, keepdims=True)
'''),
    ("scaled_dot_product_attention", "fact_error", "error:matmul", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ k / np.sqrt(q.shape[-1]))
    return weights @ v, weights
'''),
    ("split_heads", "fact_error", "error:float-size", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.swapaxes(x.reshape(*lead, seq, n_heads, d_model / n_heads), -3, -2)
'''),
    ("feed_forward", "fact_error", "error:key", '''
def feed_forward(x, params, activation="relu"):
    return np.maximum(x @ params["W1"] + params["b1"], 0) @ params["W2"] + params["b2"]
'''),
    ("scaled_dot_product_attention", "fact_returned", "returned:not-a-tuple", '''
def scaled_dot_product_attention(q, k, v):
    return softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])) @ v
'''),
    ("scaled_dot_product_attention", "fact_returned", "returned:tuple-length", '''
def scaled_dot_product_attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = softmax(scores)
    return weights @ v, weights, scores
'''),
    ("merge_heads", "fact_returned", "returned:axes-order", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(np.swapaxes(x, -3, -2).reshape(*lead, seq, n_heads * d_head), -1, -2)
'''),
    ("mean_pool", "fact_returned", "returned:axis-fewer", '''
def mean_pool(hidden, padding_mask=None):
    keep = np.ones(hidden.shape[:-1]) if padding_mask is None else (~padding_mask).astype(float)
    return (hidden * keep[..., None]).sum(axis=(-2, -1)) / np.maximum(keep.sum(axis=-1), 1)
'''),
    ("mean_pool", "fact_returned", "returned:axis-more", '''
def mean_pool(hidden, padding_mask=None):
    keep = np.ones(hidden.shape[:-1]) if padding_mask is None else (~padding_mask).astype(float)
    keep = keep[..., None]
    return (hidden * keep).sum(axis=-2, keepdims=True) / np.maximum(keep.sum(axis=-2, keepdims=True), 1)
'''),
    ("merge_heads", "fact_returned", "returned:same-size", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, n_heads * seq, d_head)
'''),
    ("positional_encoding", "fact_returned", "returned:shape", '''
def positional_encoding(seq_len, d_model):
    return np.zeros((seq_len, d_model + 1))
'''),
    ("mean_pool", "fact_not_finite", "nan:all-padding", by_hand(
        lambda e, c: np.where(c.args[1].all(axis=-1)[..., None], np.nan, e) if len(c.args) > 1 else e + 1)),
    ("softmax", "fact_not_finite", "nan:large", by_hand(lambda e, c: np.where(np.abs(c.args[0]) > 100, np.nan, e))),
    ("gelu", "fact_not_finite", "nan", by_hand(lambda e, c: np.where(e > 1, np.inf, e))),
    ("feed_forward", "fact_relation", "relation:plus-input", by_hand(lambda e, c: e + c.args[0])),
    ("layer_norm", "fact_relation", "relation:ratio", by_hand(lambda e, c: e / np.sqrt(2))),
    ("gelu", "fact_threshold", "threshold:below", by_hand(lambda e, c: np.where(c.args[0] < -1, 0.0, e))),
    ("multi_head_attention", "fact_error", "error:not-finite", '''
def multi_head_attention(x, n_heads, params=None):
    heads = split_heads(x, n_heads)
    out, weights = scaled_dot_product_attention(heads, heads, heads)
    return merge_heads(out / 0.0), weights
'''),
    ("softmax", "softmax.weights_sum_to_one", "sums:everything", '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum()
'''),
    ("softmax", "softmax.weights_follow_the_scores", "order", '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    ("scaled_dot_product_attention", "scaled_dot_product_attention.attention_scale", "attention:scale", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-2]))
    return weights @ v, weights
'''),
    ("split_heads", "split_heads.heads_shape", "heads:no-swap", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, seq, n_heads, d_model // n_heads)
'''),
    ("multi_head_attention", "multi_head_attention.mha_weights", "mha:weights-shape", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights.mean(axis=-3)
'''),
    ("feed_forward", "feed_forward.ffn_shape", "ffn:hidden-returned", '''
def feed_forward(x, params, activation="relu"):
    return np.maximum(x @ params["w1"] + params["b1"], 0)
'''),
    ("feed_forward", "feed_forward.ffn_is_positionwise", "ffn:some-positions", '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    out = act(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    if out.ndim > 1:
        out[..., -1, :] = 0
    return out
'''),
    ("gelu", "gelu.gelu_odd_part", "gelu:odd", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / np.sqrt(2))) + 0.01 * x ** 3
'''),
    ("layer_norm", "layer_norm.layer_norm_rows", "ln:means", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    ("layer_norm", "layer_norm.layer_norm_rows", "ln:variances", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / (x.var(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    ("post_norm", "post_norm.post_norm_output_is_normalised", "post:not-normalised", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta, eps) * 2
'''),
    ("pre_norm", "pre_norm.pre_norm_output_is_not_normalised", "pre:normalised", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(layer_norm(x, gamma, beta, eps)), gamma, beta, eps)
'''),
    ("masked_softmax", "masked_softmax.masked_weights", "mask:padded-weight", '''
def masked_softmax(scores, padding_mask=None):
    return el.softmax(scores)
'''),
    ("masked_softmax", "masked_softmax.masked_weights", "mask:not-a-softmax", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    peak = scores.max(axis=0, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)
'''),
    ("masked_softmax", "masked_softmax.masked_weights", "mask:sums", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return np.exp(scores - 10)
'''),
    ("positional_encoding", "positional_encoding.positional_row_zero_and_pairs", "pe:row0", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None] + 0.5
    angle = pos / 10000 ** (2 * (np.arange(d_model) // 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    ("positional_encoding", "positional_encoding.positional_row_zero_and_pairs", "pe:pairs", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    angle = pos / 10000 ** (np.arange(d_model) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    ("positional_encoding", "positional_encoding.positional_row_zero_and_pairs", "pe:frequency", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    angle = pos * 10000 ** (2 * (np.arange(d_model) // 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    ("encoder_block", "encoder_block.post_norm_block_output", "block:post-output", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return x + el.feed_forward(x, params["ffn"]) if norm == "post" else \\
        add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    ("softmax_grad", "softmax_grad.softmax_grad_rows_sum_to_zero", "softmax_grad:sums", '''
def softmax_grad(weights, grad_weights):
    return weights * grad_weights
'''),
    ("softmax_grad", "softmax_grad.softmax_grad_rows_sum_to_zero", "softmax_grad:masked", '''
def softmax_grad(weights, grad_weights):
    return weights * grad_weights - (weights * grad_weights).sum(axis=-1, keepdims=True)
'''),
    ("layer_norm_grad", "layer_norm_grad.layer_norm_grad_by_argument", "lng:x-sums", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    grad_x = (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma + 0.1
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    ("layer_norm_grad", "layer_norm_grad.layer_norm_grad_by_argument", "lng:params", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, grad_out.reshape(-1, d).sum(axis=0), (grad_out * xhat).reshape(-1, d).sum(axis=0)
'''),
    ("mean_pool", "mean_pool.mean_pool_by_sequence", "pool:with some padding", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None]
    total = (hidden * keep).sum(axis=-2)
    return np.where(keep.all(axis=-2), total / hidden.shape[-2], total / (keep.sum(axis=-2) + 1))
'''),
    ("bert_block", "bert_block.post_norm_block_output", "block:normalised-as-ln2", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]
    a = params["attn"]
    *lead, seq, d = x.shape
    heads = lambda t: np.swapaxes(t.reshape(*lead, seq, n_heads, d // n_heads), -2, -3)
    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d // n_heads)
    w = np.exp(s - s.max(-1, keepdims=True)) ** 2
    w = w / w.sum(-1, keepdims=True)
    h = ln(x + np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"], params["norm1"])
    f = params["ffn"]
    z = h @ f["w1"] + f["b1"]
    return ln(h + 0.5 * z * (1 + erf(z / np.sqrt(2))) @ f["w2"] + f["b2"], params["norm2"])
'''),
    ("rms_norm", "rms_norm.rms_norm_rows", "rms:squares", '''
def rms_norm(x, gamma=None, eps=1e-5):
    y = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return y * gamma if gamma is not None else y
'''),
    ("rms_norm", "rms_norm.rms_norm_keeps_the_direction", "rms:direction", '''
def rms_norm(x, gamma=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    y = centred / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    return y * gamma if gamma is not None else y
'''),
    ("rope", "rope.rope_keeps_each_pairs_length", "rope:lengths", '''
def rope(x, base=10000.0, layout="half"):
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    seq, d_head = x.shape[-2], x.shape[-1]
    angle = np.arange(seq)[:, None] * base ** (-np.arange(0, d_head, 2) / d_head)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return np.stack([a * cos + b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    a, b = x[..., : d_head // 2], x[..., d_head // 2:]
    return np.concatenate([a * cos + b * sin, a * sin + b * cos], axis=-1)
'''),
    ("blockwise_attention", "blockwise_attention.blockwise_within_the_values", "blockwise:outside", '''
def blockwise_attention(q, k, v, padding_mask=None, block=64):
    scale = 1 / math.sqrt(q.shape[-1])
    peak = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    out = np.zeros(q.shape[:-1] + v.shape[-1:], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        scores = q @ np.swapaxes(k[..., start:start + block, :], -1, -2) * scale
        if padding_mask is not None:
            scores = np.where(padding_mask[..., None, start:start + block], -np.inf, scores)
        new_peak = np.maximum(peak, scores.max(axis=-1, keepdims=True))
        shift = np.where(np.isneginf(new_peak), 0, new_peak)
        out = out * np.exp(peak - shift) + np.exp(scores - shift) @ v[..., start:start + block, :]
        peak = new_peak
    return out
'''),
]

#: Wrong answers written for an earlier diagnosis (its probes of variants of the right answer: an argument
#: left at its default, another axis, a transpose, a shift, a sign, a scale, a parameter left out or swapped),
#: kept as more wrong answers the feedback never saw: ``(exercise, source)``.
OLDER = [
    ("split_heads", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.swapaxes(x.reshape(*lead, seq, n_heads, d_model // n_heads + 1), -3, -2)
'''),
    ("positional_encoding", '''
def positional_encoding(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model + 2, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
'''),
    ("mean_pool", '''
def mean_pool(hidden, padding_mask=None):
    keep = np.ones(hidden.shape[:-1]) if padding_mask is None else (~padding_mask).astype(float)
    return (hidden * keep[:, :, None]).sum(axis=-2) / np.maximum(keep.sum(axis=-1)[..., None], 1)
'''),
    ("encoder_block", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask),
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    ("layer_norm", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    ("masked_softmax", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    peak = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = e.sum(axis=-1, keepdims=True)
    return np.swapaxes(e / np.where(total == 0, 1, total), -1, -2)
'''),
    ("positional_encoding", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(1, seq_len + 1)[:, None]
    angle = pos / 10000 ** (2 * (np.arange(d_model) // 2) / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    ("gelu", '''
def gelu(x):
    return -0.5 * x * (1 + erf(x / np.sqrt(2)))
'''),
    ("gelu", '''
def gelu(x):
    return 1.5 * x * (1 + erf(x / np.sqrt(2)))
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return weights, out
'''),
    ("feed_forward", '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act(x @ params["w1"] - params["b1"]) @ params["w2"] + params["b2"]
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = x @ params["w_q"] + params["b_q"], x @ params["w_k"] + params["b_k"], x @ params["w_k"] + params["b_v"]
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"].T + params["b_o"]
    return out, weights
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = (x @ params["w_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    ("split_heads", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.swapaxes(x.reshape(*lead, seq, n_heads, d_model // n_heads), -3, -2)[..., ::-1, :, :]
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"]
    return out, weights
'''),
    ("gelu", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / np.sqrt(2))) + 0.1
'''),
    ("multi_head_attention", '''
def multi_head_attention(x, n_heads, params=None):
    q = k = v = x
    if params is not None:
        q, k, v = x @ params["w_q"] + params["b_q"], x @ params["w_k"] + params["b_k"], x @ params["w_v"]
    out, weights = scaled_dot_product_attention(*(split_heads(t, n_heads) for t in (q, k, v)))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    ("encoder_block", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"])[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    ("gelu", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x / 2))
'''),
    ("post_norm", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(x)
'''),
    ("pre_norm", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x - sublayer(layer_norm(x, gamma, beta, eps))
'''),
    ("encoder_block", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def ln(h, which):
        return el.layer_norm(h, params[which]["gamma"], params[which]["beta"])
    a = el.multi_head_attention(x if norm == "post" else ln(x, "norm1"), n_heads, params["attn"],
                                padding_mask=padding_mask)[0]
    f = el.feed_forward(x if norm == "post" else ln(x, "norm2"), params["ffn"])
    if norm == "post":
        return ln(ln(x + a, "norm1") + f, "norm2")
    return x + a + f
'''),
    ("encoder", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in reversed(layers):
        x = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    ("bert_block", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]
    a = params["attn"]
    *lead, seq, d = x.shape
    heads = lambda t: np.swapaxes(t.reshape(*lead, seq, n_heads, d // n_heads), -2, -3)
    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(d // n_heads)
    if padding_mask is not None:
        s = np.where(padding_mask[..., None, None, :], -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    h = ln(x + np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"], params["norm1"])
    f = params["ffn"]
    z = x @ f["w1"] + f["b1"]
    return ln(h + 0.5 * z * (1 + erf(z / np.sqrt(2))) @ f["w2"] + f["b2"], params["norm2"])
'''),
    ("bert_block", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]
    a = params["attn"]
    *lead, seq, d = x.shape
    heads = lambda t: np.swapaxes(t.reshape(*lead, seq, n_heads, d // n_heads), -2, -3)
    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ np.swapaxes(k, -1, -2)
    if padding_mask is not None:
        s = np.where(padding_mask[..., None, None, :], -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    h = ln(x + np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"], params["norm1"])
    f = params["ffn"]
    z = h @ f["w1"] + f["b1"]
    return ln(h + 0.5 * z * (1 + erf(z / np.sqrt(2))) @ f["w2"] + f["b2"], params["norm2"])
'''),
]


#: (exercise, a wrong answer that fails hidden cases), for what the diagnosis may say of a hidden case
ON_HIDDEN_CASES = [
    ("softmax", """
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
"""),
    ("masked_softmax", """
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    peak = scores.max(axis=0, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)
"""),
    ("gelu", """
def gelu(x):
    return 0.5 * x * (1 + erf(x / 2))
"""),
]
