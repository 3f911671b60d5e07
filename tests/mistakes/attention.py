"""Lesson 01's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('softmax_without_max', '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Wrong('softmax_wrong_axis', '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
'''),
    Wrong('softmax_with_one_global_maximum', '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
'''),
    Wrong('softmax_sum_without_keepdims', '''
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis)
'''),
    Wrong('attention_without_scaling', '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2), axis=-1)
    return weights @ v, weights
'''),
    Wrong('attention_divided_by_d_k', '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / q.shape[-1], axis=-1)
    return weights @ v, weights
'''),
    Wrong('attention_with_k_dot_T', '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ k.T / np.sqrt(q.shape[-1]))
    return weights @ v, weights
'''),
    Wrong('softmax_over_every_entry', '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum()
'''),
    Wrong('attention_weights_over_the_queries', '''
def scaled_dot_product_attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(k.shape[-1])
    weights = softmax(scores, axis=-2)
    return weights @ v, weights
'''),
    Wrong('attention_returns_weights_first', '''
def scaled_dot_product_attention(q, k, v):
    weights = softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
    return weights, weights @ v
'''),
    # issue 20: told that its sum lacks keepdims, when it is the maximum that does
    Wrong('softmax_max_without_keepdims', '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
'''),
]
