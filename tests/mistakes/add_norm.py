"""Lesson 04's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('layer_norm_over_the_sequence', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-2, keepdims=True)) / np.sqrt(x.var(axis=-2, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Wrong('layer_norm_unbiased_variance', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Wrong('layer_norm_eps_outside_the_root', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / (x.std(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''),
    Wrong('layer_norm_ignores_gamma_and_beta', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
'''),
    Wrong('post_norm_written_as_pre_norm', '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Wrong('pre_norm_written_as_post_norm', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta, eps)
'''),
    Wrong('pre_norm_adds_the_normalised_input', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    h = layer_norm(x, gamma, beta, eps)
    return h + sublayer(h)
'''),
    Wrong('pre_norm_without_residual', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return sublayer(layer_norm(x, gamma, beta, eps))
'''),
    Wrong('post_norm_without_residual', '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Wrong('post_norm_on_the_sublayer_input', '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x, gamma, beta, eps) + sublayer(x)
'''),
    Wrong('post_norm_normalised_twice', '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    h = layer_norm(x, gamma, beta, eps)
    return layer_norm(x + sublayer(h), gamma, beta, eps)
'''),
    Wrong('pre_norm_on_the_sublayer_output', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + layer_norm(sublayer(x), gamma, beta, eps)
'''),
    Wrong('pre_norm_normalised_twice', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(layer_norm(x, gamma, beta, eps)), gamma, beta, eps)
'''),
    # issue 20: these passed every visible and hidden check, for want of a case without gamma or with another eps
    Wrong('layer_norm_beta_before_gamma', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if beta is not None:
        y = y + beta
    if gamma is not None:
        y = y * gamma
    return y
'''),
    Wrong('layer_norm_beta_only_with_gamma', '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    if gamma is not None:
        y = y * gamma + beta
    return y
'''),
    Wrong('pre_norm_ignores_eps', '''
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return x + sublayer(layer_norm(x, gamma, beta))
'''),
    Wrong('post_norm_ignores_eps', '''
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    return layer_norm(x + sublayer(x), gamma, beta)
'''),
]
