"""Lesson 03's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('relu_after_the_second_layer', '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act((x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"])
'''),
    Wrong('ffn_missing_bias', '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act(x @ params["w1"]) @ params["w2"] + params["b2"]
'''),
    Wrong('ffn_ignores_activation', '''
def feed_forward(x, params, activation="relu"):
    h = np.maximum(x @ params["w1"] + params["b1"], 0)
    return h @ params["w2"] + params["b2"]
'''),
    Wrong('gelu_tanh_approximation', '''
def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
'''),
    Wrong('gelu_sigmoid_approximation', '''
def gelu(x):
    return x / (1 + np.exp(-1.702 * x))
'''),
    Wrong('gelu_erf_of_x', '''
def gelu(x):
    return 0.5 * x * (1 + erf(x))
'''),
    Wrong('gelu_without_the_half', '''
def gelu(x):
    return x * (1 + erf(x / np.sqrt(2)))
'''),
    Wrong('relu_after_both_layers', '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    h = act(x @ params["w1"] + params["b1"])
    return act(h @ params["w2"] + params["b2"])
'''),
    Wrong('ffn_without_relu', '''
def feed_forward(x, params, activation="relu"):
    h = x @ params["w1"] + params["b1"]
    if activation == "gelu":
        h = el.gelu(h)
    return h @ params["w2"] + params["b2"]
'''),
    Wrong('ffn_missing_second_bias', '''
def feed_forward(x, params, activation="relu"):
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else el.gelu
    return act(x @ params["w1"] + params["b1"]) @ params["w2"]
'''),
    Wrong('gelu_is_relu', '''
def gelu(x):
    return np.maximum(x, 0)
'''),
]
