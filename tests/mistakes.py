"""The catalogue of typical mistakes: each one a wrong answer, written as a learner would write it.

Every entry says which exercise it answers, in which lesson, and a phrase that
the self-check must print when it sees this answer. tests/test_exercises.py
checks that the self-check names each mistake and that the hidden tests fail
it; tests/test_grading_pipeline.py checks that nbgrader takes exactly that
exercise's points.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    id: str
    exercise: str
    assignment: str
    says: str
    source: str


# A learner's bert_block, right; each mistake below changes one thing in it.
BERT_BLOCK = '''
def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

def layer_norm(x, gamma, beta, eps=1e-12):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta

def gelu(h):
    return 0.5 * h * (1 + erf(h / np.sqrt(2)))

def multi_head_attention(x, n_heads, p, padding_mask=None):
    *lead, seq, d = x.shape
    def split(t):
        return np.swapaxes(t.reshape(*lead, seq, n_heads, d // n_heads), -2, -3)
    q, k, v = split(x @ p["w_q"] + p["b_q"]), split(x @ p["w_k"] + p["b_k"]), split(x @ p["w_v"] + p["b_v"])
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d // n_heads)
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, None, :], -np.inf, scores)
    out = np.swapaxes(softmax(scores) @ v, -2, -3).reshape(*lead, seq, d)
    return out @ p["w_o"] + p["b_o"]

def feed_forward(x, p):
    return gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

def bert_block(x, params, n_heads, padding_mask=None):
    a = multi_head_attention(x, n_heads, params["attn"], padding_mask)
    x = layer_norm(x + a, params["norm1"]["gamma"], params["norm1"]["beta"])
    f = feed_forward(x, params["ffn"])
    return layer_norm(x + f, params["norm2"]["gamma"], params["norm2"]["beta"])
'''


def bert_block_with(old, new):
    assert BERT_BLOCK.count(old) == 1, old
    return BERT_BLOCK.replace(old, new)


MISTAKES = [
    Mistake("softmax_without_max", "softmax", "01_attention", "subtract each row's maximum", '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Mistake("softmax_wrong_axis", "softmax", "01_attention", "softmax over the wrong axis", '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
'''),
    Mistake("softmax_with_one_global_maximum", "softmax", "01_attention", "the whole array's", '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Mistake("softmax_sum_without_keepdims", "softmax", "01_attention", "without keepdims", '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)
'''),
    Mistake("attention_without_scaling", "scaled_dot_product_attention", "01_attention", "no 1/sqrt(d_k) scaling", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2), axis=-1)
    return weights @ v, weights
'''),
    Mistake("attention_divided_by_d_k", "scaled_dot_product_attention", "01_attention", "divided by d_k", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / q.shape[-1], axis=-1)
    return weights @ v, weights
'''),
    Mistake("attention_with_k_dot_T", "scaled_dot_product_attention", "01_attention", "np.swapaxes(k, -1, -2)", '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v, weights
'''),
    Mistake("split_heads_without_transpose", "split_heads", "02_multi_head_attention", "without the transpose", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, n_heads, seq, d_model // n_heads)
'''),
    Mistake("split_heads_for_a_batch_only", "split_heads", "02_multi_head_attention", "written for a batch", '''
def split_heads(x, n_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)
'''),
    Mistake("split_heads_interleaved", "split_heads", "02_multi_head_attention", "every n_heads-th column", '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.moveaxis(x.reshape(*lead, seq, d_model // n_heads, n_heads), -1, -3)
'''),
    Mistake("merge_heads_in_the_wrong_order", "merge_heads", "02_multi_head_attention", "merged in the wrong order", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.moveaxis(x, -3, -1).reshape(*lead, seq, n_heads * d_head)
'''),
    Mistake("merge_heads_swapping_the_last_two_axes", "merge_heads", "02_multi_head_attention", "the wrong axes swapped", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(x, -1, -2).reshape(*lead, seq, n_heads * d_head)
'''),
    Mistake("merge_heads_without_transpose", "merge_heads", "02_multi_head_attention", "without the transpose", '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)
'''),
    Mistake("attention_scaled_by_d_model", "multi_head_attention", "02_multi_head_attention", "sqrt(d_model)", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    q, k, v = (split_heads(t, n_heads) for t in (q, k, v))
    weights = el.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(x.shape[-1]))
    out = merge_heads(weights @ v)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Mistake("attention_without_biases", "multi_head_attention", "02_multi_head_attention", "biases are missing", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = x @ params["w_q"], x @ params["w_k"], x @ params["w_v"]
    out, weights = scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                split_heads(v, n_heads))
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"]
    return out, weights
'''),
    Mistake("attention_without_the_output_projection", "multi_head_attention", "02_multi_head_attention",
            "output projection is missing", '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                split_heads(v, n_heads))
    return merge_heads(out), weights
'''),
    Mistake("relu_after_the_second_layer", "feed_forward", "03_feed_forward", "ReLU after the second linear layer", '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act((x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"])
'''),
    Mistake("ffn_missing_bias", "feed_forward", "03_feed_forward", "missing bias", '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act(x @ params["w1"]) @ params["w2"] + params["b2"]
'''),
    Mistake("ffn_ignores_activation", "feed_forward", "03_feed_forward", "`activation` is ignored", '''
def feed_forward(x, params, activation="relu"):
    h = np.maximum(x @ params["w1"] + params["b1"], 0)
    return h @ params["w2"] + params["b2"]
'''),
    Mistake("gelu_tanh_approximation", "gelu", "03_feed_forward", "tanh approximation", '''
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
'''),
    Mistake("gelu_erf_of_x", "gelu", "03_feed_forward", "erf needs x / sqrt(2)", '''
def gelu(x):
    return 0.5 * x * (1 + erf(x))
'''),
    Mistake("gelu_without_the_half", "gelu", "03_feed_forward", "factor 1/2 is missing", '''
def gelu(x):
    return x * (1 + erf(x / np.sqrt(2)))
'''),
    Mistake("layer_norm_over_the_sequence", "layer_norm", "04_add_and_norm", "over the sequence axis", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-2, keepdims=True)) / np.sqrt(x.var(axis=-2, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Mistake("layer_norm_unbiased_variance", "layer_norm", "04_add_and_norm", "unbiased variance", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Mistake("layer_norm_eps_outside_the_root", "layer_norm", "04_add_and_norm", "eps outside the square root", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / (x.std(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Mistake("layer_norm_ignores_gamma_and_beta", "layer_norm", "04_add_and_norm", "gamma and beta are ignored", '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
'''),
    Mistake("post_norm_written_as_pre_norm", "post_norm", "04_add_and_norm", "post-norm and pre-norm swapped", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Mistake("pre_norm_written_as_post_norm", "pre_norm", "04_add_and_norm", "post-norm and pre-norm swapped", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta, eps)
'''),
    Mistake("pre_norm_adds_the_normalised_input", "pre_norm", "04_add_and_norm", "must add x itself", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    h = layer_norm(x, gamma, beta, eps)
    return h + sublayer(h)
'''),
    Mistake("pre_norm_without_residual", "pre_norm", "04_add_and_norm", "residual connection is missing", '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Mistake("post_norm_without_residual", "post_norm", "04_add_and_norm", "residual connection is missing", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Mistake("post_norm_on_the_sublayer_input", "post_norm", "04_add_and_norm", "not on the sub-layer's input", '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x, gamma, beta, eps) + sublayer(x)
'''),
    Mistake("mask_after_the_softmax", "masked_softmax", "05_encoder_block", "after the softmax", '''
def masked_softmax(scores, padding_mask=None):
    weights = el.softmax(scores)
    if padding_mask is not None:
        weights = weights * ~padding_mask[..., None, :]
    return weights
'''),
    Mistake("mask_with_the_wrong_polarity", "masked_softmax", "05_encoder_block", "wrong polarity", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], scores, -1e9)
    return el.softmax(scores)
'''),
    Mistake("mask_on_the_queries", "masked_softmax", "05_encoder_block", "applied to the queries", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., :, None], -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''),
    Mistake("mask_all_padding_row_through_the_library_softmax", "masked_softmax", "05_encoder_block",
            "every score at -inf", '''
def masked_softmax(scores, padding_mask=None):
    if padding_mask is not None:
        scores = np.where(padding_mask[..., None, :], -np.inf, scores)
    return el.softmax(scores)
'''),
    Mistake("sine_and_cosine_swapped", "positional_encoding", "05_encoder_block", "sine and cosine swapped", '''
def positional_encoding(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.cos(angle)
    pe[:, 1::2] = np.sin(angle)
    return pe
'''),
    Mistake("positional_encoding_exponent_per_column", "positional_encoding", "05_encoder_block",
            "per pair of columns", '''
def positional_encoding(seq_len, d_model):
    pos = np.arange(seq_len)[:, None]
    j = np.arange(d_model)
    angle = pos / 10000 ** (j / d_model)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
'''),
    Mistake("positional_encoding_odd_d_model", "positional_encoding", "05_encoder_block", "an odd d_model", '''
def positional_encoding(seq_len, d_model):
    angle = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
'''),
    Mistake("block_with_placements_swapped", "encoder_block", "05_encoder_block", "post-norm and pre-norm swapped", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.pre_norm if norm == "post" else el.post_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Mistake("block_without_the_mask", "encoder_block", "05_encoder_block", "padding mask is not passed on", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"])[0],
                 params["norm1"]["gamma"], params["norm1"]["beta"])
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), params["norm2"]["gamma"], params["norm2"]["beta"])
'''),
    Mistake("block_with_one_norm_for_both", "encoder_block", "05_encoder_block", "used for both norms", '''
def encoder_block(x, params, n_heads, norm="post", padding_mask=None):
    add_norm = el.post_norm if norm == "post" else el.pre_norm
    g, b = params["norm1"]["gamma"], params["norm1"]["beta"]
    x = add_norm(x, lambda h: el.multi_head_attention(h, n_heads, params["attn"], padding_mask=padding_mask)[0], g, b)
    return add_norm(x, lambda h: el.feed_forward(h, params["ffn"]), g, b)
'''),
    Mistake("one_set_of_parameters_for_every_layer", "encoder", "06_stacking_blocks", "reused for every layer", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for _ in layers:
        x = el.encoder_block(x, layers[0], n_heads, norm=norm, padding_mask=padding_mask)
    return x
'''),
    Mistake("encoder_without_the_mask", "encoder", "06_stacking_blocks", "padding mask is not passed on", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        x = el.encoder_block(x, params, n_heads, norm=norm)
    return x
'''),
    Mistake("encoder_every_block_reads_the_input", "encoder", "06_stacking_blocks", "every block reads the stack's input", '''
def encoder(x, layers, n_heads, norm="post", padding_mask=None):
    for params in layers:
        out = el.encoder_block(x, params, n_heads, norm=norm, padding_mask=padding_mask)
    return out
'''),
    Mistake("softmax_grad_diagonal_only", "softmax_grad", "07_gradients_and_training", "only the diagonal", '''
def softmax_grad(weights, grad_weights):
    return weights * (1 - weights) * grad_weights
'''),
    Mistake("softmax_grad_unweighted_sum", "softmax_grad", "07_gradients_and_training", "the sum must be weighted", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(axis=-1, keepdims=True))
'''),
    Mistake("softmax_grad_sum_over_the_wrong_axis", "softmax_grad", "07_gradients_and_training", "wrong axis", '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=0, keepdims=True))
'''),
    Mistake("layer_norm_grad_constant_statistics", "layer_norm_grad", "07_gradients_and_training",
            "treated as constants", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(centred.var(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    return g / sigma, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Mistake("layer_norm_grad_without_the_variance_term", "layer_norm_grad", "07_gradients_and_training",
            "the variance's part is missing", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    grad_x = (g - g.mean(axis=-1, keepdims=True)) / sigma
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Mistake("layer_norm_grad_parameters_not_summed", "layer_norm_grad", "07_gradients_and_training",
            "summed over every position", '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, grad_out * xhat, grad_out
'''),
    Mistake("mean_pool_averages_the_padding", "mean_pool", "08_inside_a_real_encoder", "averaged in too", '''
def mean_pool(hidden, padding_mask=None):
    return hidden.mean(axis=-2)
'''),
    Mistake("mean_pool_divides_by_the_full_length", "mean_pool", "08_inside_a_real_encoder",
            "divided by the full length", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is not None:
        hidden = np.where(padding_mask[..., None], 0.0, hidden)
    return hidden.mean(axis=-2)
'''),
    Mistake("mean_pool_mask_with_the_wrong_polarity", "mean_pool", "08_inside_a_real_encoder", "wrong polarity", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = padding_mask[..., None].astype(hidden.dtype)
    return (hidden * keep).sum(axis=-2) / np.maximum(keep.sum(axis=-2), 1)
'''),
    Mistake("mean_pool_over_the_features", "mean_pool", "08_inside_a_real_encoder", "over the features", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is not None:
        hidden = hidden * ~padding_mask[..., None]
    return hidden.mean(axis=-1)
'''),
    Mistake("mean_pool_nan_for_an_all_padding_sequence", "mean_pool", "08_inside_a_real_encoder", "gives NaN", '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = ~padding_mask[..., None]
    return (hidden * keep).sum(axis=-2) / keep.sum(axis=-2)
'''),
    Mistake("bert_block_tanh_gelu", "bert_block", "08_inside_a_real_encoder", "tanh approximation", bert_block_with(
        "return 0.5 * h * (1 + erf(h / np.sqrt(2)))",
        "return 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))")),
    Mistake("bert_block_eps_1e-5", "bert_block", "08_inside_a_real_encoder", "eps = 1e-5", bert_block_with(
        "def layer_norm(x, gamma, beta, eps=1e-12):", "def layer_norm(x, gamma, beta, eps=1e-5):")),
    Mistake("bert_block_without_the_mask", "bert_block", "08_inside_a_real_encoder", "padding mask is not used",
            bert_block_with('a = multi_head_attention(x, n_heads, params["attn"], padding_mask)',
                            'a = multi_head_attention(x, n_heads, params["attn"])')),
    Mistake("bert_block_pre_norm", "bert_block", "08_inside_a_real_encoder", "post-norm", bert_block_with(
        """    a = multi_head_attention(x, n_heads, params["attn"], padding_mask)
    x = layer_norm(x + a, params["norm1"]["gamma"], params["norm1"]["beta"])
    f = feed_forward(x, params["ffn"])
    return layer_norm(x + f, params["norm2"]["gamma"], params["norm2"]["beta"])""",
        """    x = x + multi_head_attention(layer_norm(x, params["norm1"]["gamma"], params["norm1"]["beta"]), n_heads,
                                 params["attn"], padding_mask)
    return x + feed_forward(layer_norm(x, params["norm2"]["gamma"], params["norm2"]["beta"]), params["ffn"])""")),
]
