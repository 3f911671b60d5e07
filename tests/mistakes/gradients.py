"""Lesson 07's typical mistakes, each written as a learner would write it."""

from . import Wrong


MISTAKES = [
    Wrong('softmax_grad_diagonal_only', '''
def softmax_grad(weights, grad_weights):
    return weights * (1 - weights) * grad_weights
'''),
    Wrong('softmax_grad_unweighted_sum', '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - grad_weights.sum(axis=-1, keepdims=True))
'''),
    Wrong('softmax_grad_sum_over_the_wrong_axis', '''
def softmax_grad(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=0, keepdims=True))
'''),
    Wrong('layer_norm_grad_constant_statistics', '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(centred.var(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    return g / sigma, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Wrong('layer_norm_grad_without_the_variance_term', '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    grad_x = (g - g.mean(axis=-1, keepdims=True)) / sigma
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Wrong('layer_norm_grad_parameters_not_summed', '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, grad_out * xhat, grad_out
'''),
    Wrong('softmax_grad_unweighted', '''
def softmax_grad(weights, grad_weights):
    return grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True)
'''),
    Wrong('layer_norm_grad_without_the_mean_term', '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out if gamma is None else grad_out * gamma
    d = x.shape[-1]
    grad_x = (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
    Wrong('layer_norm_grad_without_gamma', '''
def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out
    d = x.shape[-1]
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, (grad_out * xhat).reshape(-1, d).sum(axis=0), grad_out.reshape(-1, d).sum(axis=0)
'''),
]
