"""Lesson 02's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('split_heads_without_transpose', '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return x.reshape(*lead, n_heads, seq, d_model // n_heads)
'''),
    Wrong('split_heads_for_a_batch_only', '''
def split_heads(x, n_heads):
    batch, seq, d_model = x.shape
    return x.reshape(batch, seq, n_heads, d_model // n_heads).transpose(0, 2, 1, 3)
'''),
    Wrong('split_heads_interleaved', '''
def split_heads(x, n_heads):
    *lead, seq, d_model = x.shape
    return np.moveaxis(x.reshape(*lead, seq, d_model // n_heads, n_heads), -1, -3)
'''),
    Wrong('merge_heads_in_the_wrong_order', '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.moveaxis(x, -3, -1).reshape(*lead, seq, n_heads * d_head)
'''),
    Wrong('merge_heads_swapping_the_last_two_axes', '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return np.swapaxes(x, -1, -2).reshape(*lead, seq, n_heads * d_head)
'''),
    Wrong('merge_heads_without_transpose', '''
def merge_heads(x):
    *lead, n_heads, seq, d_head = x.shape
    return x.reshape(*lead, seq, n_heads * d_head)
'''),
    Wrong('attention_scaled_by_d_model', '''
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
    Wrong('attention_without_biases', '''
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
    Wrong('attention_without_the_output_projection', '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(split_heads(q, n_heads), split_heads(k, n_heads),
                                                split_heads(v, n_heads))
    return merge_heads(out), weights
'''),
    Wrong('split_heads_for_one_sequence_only', '''
def split_heads(x, n_heads):
    seq, d_model = x.shape
    return x.reshape(seq, n_heads, d_model // n_heads).transpose(1, 0, 2)
'''),
    Wrong('merge_heads_for_a_batch_only', '''
def merge_heads(x):
    batch, n_heads, seq, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, n_heads * d_head)
'''),
    Wrong('attention_heads_split_without_transpose', '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    *lead, seq, d_model = x.shape
    q, k, v = (t.reshape(*lead, n_heads, seq, d_model // n_heads) for t in (q, k, v))
    out, weights = scaled_dot_product_attention(q, k, v)
    out = merge_heads(out)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
    Wrong('attention_with_one_head', '''
def multi_head_attention(x, n_heads, params=None):
    if params is None:
        q = k = v = x
    else:
        q, k, v = (x @ params["w_" + n] + params["b_" + n] for n in "qkv")
    out, weights = scaled_dot_product_attention(q, k, v)
    if params is not None:
        out = out @ params["w_o"] + params["b_o"]
    return out, weights
'''),
]
