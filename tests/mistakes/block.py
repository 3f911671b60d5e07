"""Lesson 05's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('mask_after_the_softmax', '''
def masked_softmax(scores, padding_mask=None):
    weights = el.softmax(scores)
    if padding_mask is not None:
        weights = weights * ~padding_mask[..., None, :]
    return weights
'''),
    Wrong('mask_with_the_wrong_polarity_at_minus_1e9', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], scores, -1e9)
    return el.softmax(scores)
'''),
    Wrong('mask_with_the_wrong_polarity', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], scores, -np.inf)
    peak = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total)
'''),
    Wrong('mask_on_the_queries', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., :, None], -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
    Wrong('mask_all_padding_row_through_the_library_softmax', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return el.softmax(scores)
'''),
    Wrong('sine_and_cosine_swapped', '''
def positional_encoding(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle[:, : d_model // 2])
    return pe
'''),
    Wrong('positional_encoding_exponent_per_column', '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    j = np.arange(d_model)
    angle = pos / 10000 ** (j / d_model)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    Wrong('positional_encoding_odd_d_model', '''
def positional_encoding(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
'''),
    Wrong('positional_encoding_odd_d_model_too_few_angles', '''
def positional_encoding(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    angle = np.arange(seq_len)[:, None] / 10000 ** (2 * np.arange(d_model // 2) / d_model)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
'''),
    Wrong('block_with_placements_swapped', '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.pre_norm if norm == "post" else el.post_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Wrong('block_without_the_mask', '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"])[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Wrong('block_with_one_norm_for_both', '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    g, b = params["norm1"]["gamma"], params["norm1"]["beta"]
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0], g, b)
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), g, b)
'''),
    Wrong('mask_nan_for_an_all_padding_row', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
    Wrong('mask_on_the_queries_own_softmax', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., :, None], -np.inf, scores)
    e = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
'''),
    Wrong('mask_on_the_queries_at_minus_infinity', '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is None:
        return el.softmax(scores)
    return el.softmax(np.where(padding_mask[..., :, None], -np.inf, scores))
'''),
    Wrong('positional_encoding_exponent_of_i', '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    i = np.arange((d_model + 1) // 2)
    angle = pos / 10000 ** (i / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe
'''),
    Wrong('positional_encoding_in_halves', '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    i = np.arange((d_model + 1) // 2)
    angle = pos / 10000 ** (2 * i / d_model)
    return np.concatenate([np.sin(angle), np.cos(angle[:, : d_model // 2])], axis=-1)
'''),
    Wrong('block_without_residual', '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    def ln(h, which):
        return el.layer_norm(h, params[which]["gamma"], params[which]["beta"])

    def attn(h):
        return el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0]

    def ffn(h):
        return el.feed_forward(h, params["ffn"])

    if norm == "post":
        x = ln(attn(x), "norm1")
        return ln(ffn(x), "norm2")
    x = attn(ln(x, "norm1"))
    return ffn(ln(x, "norm2"))
'''),
]
