"""Lesson 08's typical mistakes, each written as a learner would write it."""

from . import Wrong

# A learner's bert_block, right; each mistake below changes one thing in it.
BERT_BLOCK = '''def softmax(s):
    top = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0.0))  # a row whose keys are all padding: every score -inf
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)  # and such a row's weights stay zeros

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
    Wrong('mean_pool_averages_the_padding', '''
def mean_pool(hidden, padding_mask=None):
    return hidden.mean(axis=-2)
'''),
    Wrong('mean_pool_divides_by_the_full_length', '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is not None:
        hidden = np.where(padding_mask[..., None], 0.0, hidden)
    return hidden.mean(axis=-2)
'''),
    Wrong('mean_pool_mask_with_the_wrong_polarity', '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = padding_mask[..., None].astype(hidden.dtype)
    return (hidden * keep).sum(axis=-2) / np.maximum(keep.sum(axis=-2), 1)
'''),
    Wrong('mean_pool_over_the_features', '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is not None:
        hidden = hidden * ~padding_mask[..., None]
    return hidden.mean(axis=-1)
'''),
    Wrong('mean_pool_nan_for_an_all_padding_sequence', '''
def mean_pool(hidden, padding_mask=None):
    if padding_mask is None:
        return hidden.mean(axis=-2)
    keep = ~padding_mask[..., None]
    return (hidden * keep).sum(axis=-2) / keep.sum(axis=-2)
'''),
    Wrong("bert_block_tanh_gelu", bert_block_with(
        "return 0.5 * h * (1 + erf(h / np.sqrt(2)))",
        "return 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))")),
    Wrong("bert_block_eps_1e-5", bert_block_with(
        "def layer_norm(x, gamma, beta, eps=1e-12):", "def layer_norm(x, gamma, beta, eps=1e-5):")),
    Wrong("bert_block_without_the_mask", bert_block_with('a = multi_head_attention(x, n_heads, params["attn"], padding_mask)',
                                                         'a = multi_head_attention(x, n_heads, params["attn"])')),
    Wrong("bert_block_pre_norm", bert_block_with(
        """    a = multi_head_attention(x, n_heads, params["attn"], padding_mask)
    x = layer_norm(x + a, params["norm1"]["gamma"], params["norm1"]["beta"])
    f = feed_forward(x, params["ffn"])
    return layer_norm(x + f, params["norm2"]["gamma"], params["norm2"]["beta"])""",
        """    x = x + multi_head_attention(layer_norm(x, params["norm1"]["gamma"], params["norm1"]["beta"]), n_heads,
                                 params["attn"], padding_mask)
    return x + feed_forward(layer_norm(x, params["norm2"]["gamma"], params["norm2"]["beta"]), params["ffn"])""")),
    Wrong("bert_block_relu", bert_block_with('return gelu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]',
                                             'return np.maximum(x @ p["w1"] + p["b1"], 0) @ p["w2"] + p["b2"]')),
    Wrong("bert_block_additive_mask", bert_block_with(
        "scores = np.where(padding_mask[..., None, None, :], -np.inf, scores)",
        "scores = scores + np.where(padding_mask, -10000.0, 0.0)[..., None, None, :]")),
    Wrong("bert_block_additive_mask_1e9", bert_block_with(
        "scores = np.where(padding_mask[..., None, None, :], -np.inf, scores)",
        "scores = scores - 1e9 * padding_mask[..., None, None, :]")),
    Wrong("bert_block_scaled_by_d_model", bert_block_with("scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d // n_heads)",
                                                          "scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)")),
]
