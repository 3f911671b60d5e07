"""Forty wrong answers and eighteen right ones, written for issue 37 before its change to the checks, from how a
new learner gets these functions wrong, without reading the catalogue of mistakes or the feedback's sentences.

Half the wrong ones (``fixture_only``) are right on every input the lessons show: they hard-code a size, a rank or
a dtype, clip a range, or skip a numerical safeguard that only an extreme input needs. Every check must fail them
all the same, because the docstrings allow those inputs. The right ones are written unlike the lessons' solutions
(einsum, loops, ``np.vectorize(math.erf)``, ``functools.reduce``, a log-sum-exp), and must pass. Since issue 49 the
statements say more (the inputs' dtype kept, an unknown ``activation`` or ``norm`` and an ``n_heads`` that does not
divide ``d_model`` refused): the right ones that did not do so then do now, each with the line or two it took.

``CAUSES[key]`` lists the words an accurate cause may contain, written from the answer's own ``cause`` sentence
(the feedback's sentences were read only to spell the words); a verified cause told that contains none of them
counts as misleading, and feedback that contains one, in a cause or in what was measured, reaches the cause. ``tests/test_fresh_answers.py`` holds the measures; ``benchmarks/bench_feedback.py`` prints the table.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Fresh:
    exercise: str
    key: str
    cause: str
    source: str
    fixture_only: bool = False


WRONG = [
    # ---------------------------------------------------------------- right on the lessons' inputs only
    Fresh("softmax", "softmax_shift_by_first_entry",
          "It subtracts the first score of each row instead of the largest: a row whose scores span more than about "
          "700 overflows exp.", '''
def softmax(x, axis=-1):
    e = np.exp(x - np.take(x, [0], axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
''', True),
    Fresh("softmax", "softmax_axis_0_by_transpose",
          "It handles axis=0 by transposing (.T), which reverses every axis: right for 2-D arrays only.", '''
def softmax(x, axis=-1):
    if axis == 0:
        return softmax(x.T).T
    shifted = x - x.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)
''', True),
    Fresh("scaled_dot_product_attention", "sdpa_unshifted_softmax",
          "It writes the softmax inline without subtracting the maximum: large scores overflow exp to inf and "
          "the weights become NaN.", '''
def scaled_dot_product_attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
''', True),
    Fresh("split_heads", "split_heads_up_to_rank_3",
          "It writes the reshape and transpose out for 2-D and 3-D inputs only, so an input with two batch axes "
          "fails.", '''
def split_heads(x, n_heads):
    if x.ndim == 2:
        seq, d = x.shape
        return x.reshape(seq, n_heads, d // n_heads).transpose(1, 0, 2)
    b, seq, d = x.shape
    return x.reshape(b, seq, n_heads, d // n_heads).transpose(0, 2, 1, 3)
''', True),
    Fresh("merge_heads", "merge_heads_up_to_rank_4",
          "It handles 3-D and 4-D inputs by their sizes, so an input with two batch axes fails.", '''
def merge_heads(x):
    if x.ndim == 3:
        h, s, d = x.shape
        return x.transpose(1, 0, 2).reshape(s, h * d)
    b, h, s, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, s, h * d)
''', True),
    Fresh("multi_head_attention", "mha_unshifted_softmax",
          "It computes the weights with exp and a sum, without subtracting the maximum: large inputs overflow "
          "and give NaN.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    q, k, v = split_heads(q, n_heads), split_heads(k, n_heads), split_heads(v, n_heads)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    out = merge_heads(weights @ v)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
''', True),
    Fresh("feed_forward", "ffn_relu_capped_at_8",
          "Its ReLU is np.clip(h, 0, 8): right while every hidden value stays under 8.", '''
def feed_forward(x, params, activation="relu"):
    h = x @ params["w1"] + params["b1"]
    h = np.clip(h, 0, 8) if activation == "relu" else gelu(h)
    return h @ params["w2"] + params["b2"]
''', True),
    Fresh("gelu", "gelu_zero_below_minus_4",
          "It returns 0 below -4, where GELU is small but not 0.", '''
def gelu(x):
    y = 0.5 * x * (1 + erf(x / np.sqrt(2)))
    return np.where(x < -4, 0.0, y)
''', True),
    Fresh("layer_norm", "layer_norm_float32",
          "It computes in float32 (astype(np.float32)), so a float64 input loses precision and comes back "
          "float32.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    x = x.astype(np.float32)
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
''', True),
    Fresh("pre_norm", "pre_norm_float32_result",
          "It returns its result cast to float32.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return (x + sublayer(layer_norm(x, gamma, beta, eps))).astype(np.float32)
''', True),
    Fresh("masked_softmax", "masked_softmax_mask_for_rank_2_only",
          "It inserts the query axis with padding_mask[:, None, :], which is right only for a mask with one "
          "batch axis.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    s = np.where(padding_mask[:, None, :], -np.inf, scores)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)
''', True),
    Fresh("masked_softmax", "masked_softmax_fill_minus_1e4",
          "It puts -1e4 on padded keys, not -inf: when the scores are large, padded keys get weight.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    s = np.where(padding_mask[..., None, :], -1e4, scores)
    w = softmax(s)
    return np.where(padding_mask[..., None, :].all(axis=-1, keepdims=True), 0.0, w)
''', True),
    Fresh("positional_encoding", "positional_float32",
          "It builds the table in float32.", '''
def positional_encoding(seq_len, d_model):
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pos = np.arange(seq_len)[:, None]
    i = np.arange(0, d_model, 2)
    angle = pos / 10000 ** (i / d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe
''', True),
    Fresh("encoder_block", "block_two_heads_hard_coded",
          "It passes 2 heads to the attention whatever n_heads is.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, 2, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
''', True),
    Fresh("encoder", "encoder_pre_norm_drops_the_mask",
          "Its pre-norm branch does not pass the padding mask on.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        if norm == "pre":
            x = el.encoder_block(x, params, n_heads, norm="pre")
        else:
            x = el.encoder_block(x, params, n_heads, padding_mask=padding_mask)
    return x
''', True),
    Fresh("softmax_grad", "softmax_grad_float32",
          "It computes in float32.", '''
def softmax_grad(weights, grad_weights):
    w, g = weights.astype(np.float32), grad_weights.astype(np.float32)
    return w * (g - (g * w).sum(axis=-1, keepdims=True))
''', True),
    Fresh("layer_norm_grad", "layer_norm_grad_gamma_float32",
          "It returns grad_gamma and grad_beta in float32.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    c = x - x.mean(axis=-1, keepdims=True)
    s = np.sqrt((c ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = c / s
    g = grad_out if gamma is None else grad_out * gamma
    gx = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / s
    gg = (grad_out * xhat).reshape(-1, d).sum(axis=0).astype(np.float32)
    gb = grad_out.reshape(-1, d).sum(axis=0).astype(np.float32)
    return gx, gg, gb
''', True),
    Fresh("mean_pool", "mean_pool_rank_3_mask",
          "It indexes the mask as [:, :, None], which is right only for a mask with one batch axis.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask[:, :, None]).astype(float)
    return (hidden * keep).sum(axis=-2) / np.maximum(keep.sum(axis=-2), 1)
''', True),
    Fresh("bert_block", "bert_unshifted_softmax",
          "Its attention softmax does not subtract the maximum (padding handled by zeroing): large scores "
          "overflow.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        c = h - h.mean(axis=-1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]

    a = params["attn"]
    *lead, seq, d = x.shape
    dh = d // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*lead, seq, n_heads, dh), -2, -3)

    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    e = np.exp(q @ np.swapaxes(k, -1, -2) / np.sqrt(dh))
    if padding_mask is not None:
        e = e * ~padding_mask[..., None, None, :]
    s = e.sum(axis=-1, keepdims=True)
    w = e / np.where(s == 0, 1, s)
    att = np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"]
    h = ln(x + att, params["norm1"])
    f = params["ffn"]
    u = h @ f["w1"] + f["b1"]
    u = 0.5 * u * (1 + erf(u / np.sqrt(2)))
    return ln(h + u @ f["w2"] + f["b2"], params["norm2"])
''', True),
    Fresh("bert_block", "bert_mask_for_one_batch_axis",
          "It broadcasts the padding mask as [:, None, None, :], right only for a mask with one batch axis.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        c = h - h.mean(axis=-1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]

    a = params["attn"]
    *lead, seq, d = x.shape
    dh = d // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*lead, seq, n_heads, dh), -2, -3)

    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dh)
    if padding_mask is not None:
        s = np.where(padding_mask[:, None, None, :], -np.inf, s)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=-1, keepdims=True)
    w = e / np.where(t == 0, 1, t)
    att = np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"]
    h = ln(x + att, params["norm1"])
    f = params["ffn"]
    u = h @ f["w1"] + f["b1"]
    u = 0.5 * u * (1 + erf(u / np.sqrt(2)))
    return ln(h + u @ f["w2"] + f["b2"], params["norm2"])
''', True),

    # ---------------------------------------------------------------- wrong on the lessons' inputs too
    Fresh("softmax", "softmax_applied_twice",
          "It applies the softmax twice: the weights of the weights.", '''
def softmax(x, axis=-1):
    for _ in range(2):
        x = np.exp(x - x.max(axis=axis, keepdims=True))
        x = x / x.sum(axis=axis, keepdims=True)
    return x
'''),
    Fresh("scaled_dot_product_attention", "sdpa_weights_times_k",
          "It multiplies the weights by k where v belongs.", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    return weights @ k, weights
'''),
    Fresh("split_heads", "split_heads_fortran_order",
          "It reshapes in column-major (Fortran) order, so each head takes interleaved columns.", '''
def split_heads(x, n_heads):
    *lead, seq, d = x.shape
    y = np.reshape(x, (*lead, seq, n_heads, d // n_heads), order="F")
    return np.swapaxes(y, -2, -3)
'''),
    Fresh("merge_heads", "merge_heads_moveaxis_to_the_end",
          "It moves the head axis to the end before the reshape, so the features of the heads interleave.", '''
def merge_heads(x):
    *lead, h, s, d = x.shape
    return np.moveaxis(x, -3, -1).reshape(*lead, s, h * d)
'''),
    Fresh("multi_head_attention", "mha_residual_inside",
          "It adds the input x to the attention's output (a residual that belongs to Add & Norm).", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_q"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    out, weights = el.scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                   split_heads(v, n_heads))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out + x, weights
'''),
    Fresh("multi_head_attention", "mha_query_bias_is_key_bias",
          "It adds the keys' bias b_k to the queries, where b_q belongs.", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q = x @ params["w_q"] + params["b_k"]
        k = x @ params["w_k"] + params["b_k"]
        v = x @ params["w_v"] + params["b_v"]
    out, weights = el.scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                   split_heads(v, n_heads))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Fresh("feed_forward", "ffn_bias_after_activation",
          "It adds the first bias b1 after the activation, not before.", '''
def feed_forward(x, params, activation="relu"):
    h = x @ params["w1"]
    h = (np.maximum(h, 0) if activation == "relu" else gelu(h)) + params["b1"]
    return h @ params["w2"] + params["b2"]
'''),
    Fresh("feed_forward", "ffn_adds_the_input",
          "It adds the input x to the output (a residual around the FFN, which Add & Norm does).", '''
def feed_forward(x, params, activation="relu"):
    h = x @ params["w1"] + params["b1"]
    h = np.maximum(h, 0) if activation == "relu" else gelu(h)
    return x + h @ params["w2"] + params["b2"]
'''),
    Fresh("gelu", "gelu_root_outside_erf",
          "It divides erf(x) by sqrt(2) instead of dividing x inside erf.", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x) / np.sqrt(2))
'''),
    Fresh("layer_norm", "layer_norm_variance_not_centred",
          "It takes the variance as the mean of x squared, without subtracting the mean first.", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = (x ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Fresh("post_norm", "post_norm_sublayer_normalised_too",
          "It layer-normalises the sub-layer's output before adding it to x (an extra layer norm).", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + layer_norm(sublayer(x)), gamma, beta, eps)
'''),
    Fresh("pre_norm", "pre_norm_residual_from_the_normalised_x",
          "It adds the normalised x, not x itself, back to the sub-layer's output.", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    h = layer_norm(x, gamma, beta, eps)
    return h + sublayer(h)
'''),
    Fresh("masked_softmax", "masked_softmax_masks_queries",
          "It puts the mask on the queries' axis ([..., :, None]) instead of the keys'.", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    s = np.where(padding_mask[..., :, None], -np.inf, scores)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)
'''),
    Fresh("positional_encoding", "positional_cos_on_even",
          "It puts the cosines in the even columns and the sines in the odd ones.", '''
def positional_encoding(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    pos = np.arange(seq_len)[:, None]
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle[:, : d_model // 2])
    return pe
'''),
    Fresh("encoder_block", "block_ffn_reads_the_input",
          "Its second Add & Norm is applied to the block's input x, not to the attention's Add & Norm output.", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def attention(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    add_norm = el.post_norm if norm == "post" else el.pre_norm
    y = add_norm(x, attention, params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, ffn, params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Fresh("encoder", "encoder_each_layer_on_the_input",
          "Each block reads the encoder's input, not the previous block's output: only the last layer counts.", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    out = x
    for params in layers:
        out = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return out
'''),
    Fresh("softmax_grad", "softmax_grad_sum_without_weights",
          "It subtracts the sum of the incoming gradient, not its sum weighted by the weights.", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(axis=-1, keepdims=True))
'''),
    Fresh("layer_norm_grad", "layer_norm_grad_x_not_divided_by_sigma",
          "Its gradient for x is not divided by the standard deviation sigma.", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    c = x - x.mean(axis=-1, keepdims=True)
    s = np.sqrt((c ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = c / s
    g = grad_out if gamma is None else grad_out * gamma
    gx = g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    return gx, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Fresh("mean_pool", "mean_pool_divides_by_every_position",
          "It divides the sum over the real tokens by the whole sequence's length, padding included.", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = (~padding_mask)[..., None]
    return (hidden * keep).sum(axis=-2) / hidden.shape[-2]
'''),
    Fresh("bert_block", "bert_ffn_residual_outside_the_norm",
          "It adds the FFN's residual after the second layer norm (x + LN(FFN(x))), not inside it.", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        c = h - h.mean(axis=-1, keepdims=True)
        return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]

    a = params["attn"]
    *lead, seq, d = x.shape
    dh = d // n_heads

    def heads(t):
        return np.swapaxes(t.reshape(*lead, seq, n_heads, dh), -2, -3)

    q, k, v = (heads(x @ a["w_" + n] + a["b_" + n]) for n in "qkv")
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(dh)
    if padding_mask is not None:
        s = np.where(padding_mask[..., None, None, :], -np.inf, s)
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    t = e.sum(axis=-1, keepdims=True)
    w = e / np.where(t == 0, 1, t)
    att = np.swapaxes(w @ v, -2, -3).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"]
    h = ln(x + att, params["norm1"])
    f = params["ffn"]
    u = h @ f["w1"] + f["b1"]
    u = 0.5 * u * (1 + erf(u / np.sqrt(2)))
    return h + ln(u @ f["w2"] + f["b2"], params["norm2"])
'''),
]


RIGHT = [
    Fresh("softmax", "softmax_log_sum_exp", "", '''
def softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return np.exp(x - log_total)
'''),
    Fresh("scaled_dot_product_attention", "sdpa_einsum", "", '''
def scaled_dot_product_attention(q, k, v):
    scores = np.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
    weights = softmax(scores)
    return np.einsum("...qk,...kv->...qv", weights, v), weights
'''),
    Fresh("split_heads", "split_heads_by_split_and_stack", "", '''
def split_heads(x, n_heads):
    return np.stack(np.split(x, n_heads, axis=-1), axis=-3)
'''),
    Fresh("merge_heads", "merge_heads_by_concatenate", "", '''
def merge_heads(x):
    n_heads = x.shape[-3]
    return np.concatenate([x[..., h, :, :] for h in range(n_heads)], axis=-1)
'''),
    Fresh("multi_head_attention", "mha_loop_over_heads", "", '''
def multi_head_attention(x, n_heads, params=None):
    p = params
    q, k, v = (x, x, x) if p is None else (x @ p["w_q"] + p["b_q"], x @ p["w_k"] + p["b_k"], x @ p["w_v"] + p["b_v"])
    if x.shape[-1] % n_heads:
        raise ValueError(f"n_heads ({n_heads}) must divide d_model ({x.shape[-1]})")
    d_head = x.shape[-1] // n_heads
    outs, weights = [], []
    for h in range(n_heads):
        cut = slice(h * d_head, (h + 1) * d_head)
        o, w = el.scaled_dot_product_attention(q[..., cut], k[..., cut], v[..., cut])
        outs.append(o)
        weights.append(w)
    out = np.concatenate(outs, axis=-1)
    if p is not None:
        out = out @ p["w_o"] + p["b_o"]
    return out, np.stack(weights, axis=-3)
'''),
    Fresh("feed_forward", "ffn_einsum_and_where", "", '''
def feed_forward(x, params, activation="relu"):
    if activation not in ("relu", "gelu"):
        raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
    h = np.einsum("...i,ij->...j", x, params["w1"]) + params["b1"]
    h = np.where(h > 0, h, 0.0) if activation == "relu" else gelu(h)
    return np.einsum("...j,jk->...k", h, params["w2"]) + params["b2"]
'''),
    Fresh("gelu", "gelu_vectorized_math_erf", "", '''
def gelu(x):
    phi = np.vectorize(lambda t: 0.5 * (1.0 + math.erf(t / math.sqrt(2.0))), otypes=[float])
    return (x * phi(x)).astype(x.dtype)
'''),
    Fresh("layer_norm", "layer_norm_by_std", "", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    centred = x - np.mean(x, axis=-1, keepdims=True)
    y = centred / np.sqrt(np.square(np.std(x, axis=-1, keepdims=True)) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)
'''),
    Fresh("post_norm", "post_norm_in_steps", "", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    total = np.add(x, sublayer(x))
    return layer_norm(total, gamma=gamma, beta=beta, eps=eps)
'''),
    Fresh("pre_norm", "pre_norm_in_steps", "", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    normed = layer_norm(x, gamma=gamma, beta=beta, eps=eps)
    return np.add(x, sublayer(normed))
'''),
    Fresh("masked_softmax", "masked_softmax_by_exp_times_keep", "", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return softmax(scores)
    keep = ~np.asarray(padding_mask)[..., None, :]
    top = np.max(np.where(keep, scores, -np.inf), axis=-1, keepdims=True)
    e = np.exp(np.where(keep, scores - np.where(np.isfinite(top), top, 0.0), -np.inf))
    total = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
'''),
    Fresh("positional_encoding", "positional_loops", "", '''
def positional_encoding(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for j in range(d_model):
            angle = pos / math.pow(10000, (j - j % 2) / d_model)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe
'''),
    Fresh("encoder_block", "block_written_out", "", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    n1, n2 = params["norm1"], params["norm2"]
    attend = lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]
    ffn = lambda h: el.feed_forward(h, params["ffn"])
    if norm not in ("post", "pre"):
        raise ValueError(f"norm must be 'post' or 'pre', got {norm!r}")
    if norm == "pre":
        x = x + attend(el.layer_norm(x, n1["gamma"], n1["beta"]))
        return x + ffn(el.layer_norm(x, n2["gamma"], n2["beta"]))
    x = el.layer_norm(x + attend(x), n1["gamma"], n1["beta"])
    return el.layer_norm(x + ffn(x), n2["gamma"], n2["beta"])
'''),
    Fresh("encoder", "encoder_by_reduce", "", '''
import functools


def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    step = lambda h, p: el.encoder_block(h, p, n_heads, norm=norm, padding_mask=padding_mask)
    return functools.reduce(step, layers, x)
'''),
    Fresh("softmax_grad", "softmax_grad_by_einsum", "", '''
def softmax_grad(weights, grad_weights):
    dot = np.einsum("...i,...i->...", grad_weights, weights)[..., None]
    return weights * grad_weights - weights * dot
'''),
    Fresh("layer_norm_grad", "layer_norm_grad_by_sums", "", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    n = x.shape[-1]
    mu = x.sum(axis=-1, keepdims=True) / n
    inv = 1.0 / np.sqrt(((x - mu) ** 2).sum(axis=-1, keepdims=True) / n + eps)
    xhat = (x - mu) * inv
    g = grad_out * (1.0 if gamma is None else gamma)
    grad_x = inv / n * (n * g - g.sum(axis=-1, keepdims=True) - xhat * (g * xhat).sum(axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return grad_x, (grad_out * xhat).sum(axis=lead), grad_out.sum(axis=lead)
'''),
    Fresh("mean_pool", "mean_pool_by_average_weights", "", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return np.mean(hidden, axis=-2)
    keep = np.logical_not(padding_mask).astype(hidden.dtype)
    count = np.maximum(keep.sum(axis=-1, keepdims=True), 1.0)
    return np.einsum("...s,...sd->...d", keep / count, hidden)
'''),
    Fresh("bert_block", "bert_written_with_helpers", "", '''
def bert_block(x, params, n_heads, padding_mask=None):
    def ln(h, p):
        mu = h.mean(-1, keepdims=True)
        return (h - mu) / np.sqrt(h.var(-1, keepdims=True) + 1e-12) * p["gamma"] + p["beta"]

    def soft(s):
        top = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isneginf(top), 0.0, top))
        total = e.sum(-1, keepdims=True)
        return e / np.where(total > 0, total, 1.0)

    a, f = params["attn"], params["ffn"]
    *lead, seq, d = x.shape
    dh = d // n_heads
    split = lambda t: np.moveaxis(t.reshape(*lead, seq, n_heads, dh), -2, -3)
    q, k, v = (split(x @ a[w] + a[b]) for w, b in (("w_q", "b_q"), ("w_k", "b_k"), ("w_v", "b_v")))
    s = np.einsum("...qd,...kd->...qk", q, k) / math.sqrt(dh)
    if padding_mask is not None:
        s = np.where(np.expand_dims(padding_mask, (-2, -3)), -np.inf, s)
    o = np.moveaxis(soft(s) @ v, -3, -2).reshape(*lead, seq, d) @ a["w_o"] + a["b_o"]
    h = ln(x + o, params["norm1"])
    u = h @ f["w1"] + f["b1"]
    u = (u * 0.5 * (1.0 + erf(u / math.sqrt(2.0)))).astype(u.dtype)
    return ln(h + u @ f["w2"] + f["b2"], params["norm2"])
'''),
]


#: What an accurate cause may say, for each wrong answer (see the module's docstring).
CAUSES = {
    "softmax_shift_by_first_entry": ("maximum", "from -1000 to 1000"),
    "softmax_axis_0_by_transpose": (".T", "every axis is reversed", "first axis as `axis`"),
    "sdpa_unshifted_softmax": ("maximum", "softmax_without_max"),
    "split_heads_up_to_rank_3": ("batch axes", "more axes"),
    "merge_heads_up_to_rank_4": ("batch axes", "more axes"),
    "mha_unshifted_softmax": ("maximum", "not finite", "nan"),
    "ffn_relu_capped_at_8": ("clip", "above 6", "x of about 30"),
    "gelu_zero_below_minus_4": ("-4", "wrong for every input below"),
    "layer_norm_float32": ("float32",),
    "pre_norm_float32_result": ("float32",),
    "masked_softmax_mask_for_rank_2_only": ("batch ax",),
    "masked_softmax_fill_minus_1e4": ("-1e4", "-10000", "10000", "large negative"),
    "positional_float32": ("float32",),
    "block_two_heads_hard_coded": ("2 heads", "n_heads"),
    "encoder_pre_norm_drops_the_mask": ("padding_mask", "mask"),
    "softmax_grad_float32": ("float32",),
    "layer_norm_grad_gamma_float32": ("float32",),
    "mean_pool_rank_3_mask": ("batch ax",),
    "bert_unshifted_softmax": ("maximum", "NaN", "x of about 100"),
    "bert_mask_for_one_batch_axis": ("batch ax",),
    "softmax_applied_twice": ("twice", "softmax_applied_twice"),
    "sdpa_weights_times_k": ("`k` is read in place of `v`", "k in place of v"),
    "split_heads_fortran_order": ("Fortran", "column-major", "order='F'", 'order="F"'),
    "merge_heads_moveaxis_to_the_end": ("interleav", "moveaxis", "wrong order", "(d_head, n_heads)"),
    "mha_residual_inside": ("x` is added", "plus x", "adds the input", "residual", "+ x"),
    "mha_query_bias_is_key_bias": ("`params['b_k']` is read in place of `params['b_q']`",
                                   "params['b_k'] is read in place of params['b_q']"),
    "ffn_bias_after_activation": ("after the activation", "b1", "bias"),
    "ffn_adds_the_input": ("x` is added", "plus x", "adds the input", "residual", "+ x"),
    "gelu_root_outside_erf": ("erf", "sqrt"),
    "layer_norm_variance_not_centred": ("mean", "centred", "`x` is read in place of"),
    "post_norm_sublayer_normalised_too": ("layer_norm", "layer norm"),
    "pre_norm_residual_from_the_normalised_x": ("normalised", "layer_norm", "residual"),
    "masked_softmax_masks_queries": ("quer", "[..., :, None]", "axis"),
    "positional_cos_on_even": ("cos", "sin"),
    "block_ffn_reads_the_input": ("`x` is read in place of", "input"),
    "encoder_each_layer_on_the_input": ("`x` is read in place of", "input", "previous"),
    "softmax_grad_sum_without_weights": ("weight",),
    "layer_norm_grad_x_not_divided_by_sigma": ("sigma", "standard deviation", "divided"),
    "mean_pool_divides_by_every_position": ("padding", "length", "shape[-2]", "count"),
    "bert_ffn_residual_outside_the_norm": ("residual", "layer norm", "ln"),
}
