"""Lesson 07's exercises: the backward passes of the softmax and of layer norm."""

from functools import partial

import numpy as np

from ... import fixtures
from ...attention import masked_softmax, softmax
from ...grad import layer_norm_grad, softmax_grad
from ..compare import NotApplicable
from ._base import Exercise, Mistake, cases, normal

# --- the softmax's backward pass ----------------------------------------------------


def softmax_grad_cases(rng, hidden):
    if hidden:
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 3))) + (int(rng.integers(2, 7)),)
        return cases((f"random weights and gradients {shape}",
                      [softmax(normal(rng, *shape) * 2), normal(rng, *shape)], {}))
    masked = masked_softmax(normal(rng, 2, 4), np.array([False, False, True, True]))
    return cases(
        ("the row (0.5, 0.5) with gradient (1, 0)", [np.array([0.5, 0.5]), np.array([1.0, 0.0])], {}),
        ("weights (2, 3, 5), random gradient", [softmax(normal(rng, 2, 3, 5)), normal(rng, 2, 3, 5)], {}),
        ("weights with two masked keys (weight 0)", [masked, normal(rng, 2, 4)], {}),
    )


def softmax_grad_diagonal_only(weights, grad_weights):
    return weights * (1 - weights) * grad_weights


def softmax_grad_unweighted(weights, grad_weights):
    return grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True)


def softmax_grad_unweighted_sum(weights, grad_weights):
    return weights * (grad_weights - np.sum(grad_weights, axis=-1, keepdims=True))


def softmax_grad_sum_over_the_wrong_axis(weights, grad_weights):
    if weights.ndim < 2:
        raise NotApplicable
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=0, keepdims=True))


SOFTMAX_GRAD = Exercise(
    name="softmax_grad", lesson="07_gradients_and_training", points=1,
    formula=r"\frac{\partial L}{\partial s} = w \odot \left(g - \textstyle\sum_j g_j w_j\right)",
    cases=softmax_grad_cases, reference=softmax_grad,
    mistakes=(
        Mistake("softmax_grad_diagonal_only",
                "only the diagonal of the Jacobian (w * (1 - w) * g): each weight also depends on every other "
                "score of its row, which adds -w_i w_j g_j; the whole product is w * (g - sum(g * w))",
                softmax_grad_diagonal_only),
        Mistake("softmax_grad_unweighted",
                "the result is not multiplied by the weights: it is w * (g - sum(g * w))", softmax_grad_unweighted),
        Mistake("softmax_grad_unweighted_sum",
                "the sum must be weighted: sum(g * w) over the row, not sum(g)", softmax_grad_unweighted_sum),
        Mistake("softmax_grad_sum_over_the_wrong_axis",
                "the sum runs over the wrong axis: each row of weights is one softmax, so sum g * w over the last "
                "axis (axis=-1, keepdims=True)", softmax_grad_sum_over_the_wrong_axis),
    ),
    may_call=("softmax",),
)

# --- layer norm's backward pass ----------------------------------------------------


def layer_norm_grad_cases(rng, hidden):
    if hidden:
        d = int(rng.integers(3, 9))
        lead = tuple(rng.integers(1, 4, size=rng.integers(1, 3)))
        x = normal(rng, *lead, d) * 2 + 1
        return cases((f"random x {lead + (d,)} with gamma and beta",
                      [x, normal(rng, *x.shape), rng.uniform(0.5, 2, d), rng.normal(0, 1, d)], {}))
    x = fixtures.lesson_input()
    return cases(
        ("the lesson's input (3, 4), gradient 1 on the first feature",
         [x, np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))], {}),
        ("(2, 5, 6) with gamma and beta", [normal(rng, 2, 5, 6), normal(rng, 2, 5, 6),
                                           rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3, normal(rng, 3, 6)], {}),
    )


def layer_norm_grad_model(x, grad_out, gamma=None, beta=None, eps=1e-5, *, mean_term=True, var_term=True,
                          use_gamma=True, sum_params=True):
    """Layer norm's backward pass with one term left out, gamma forgotten, or the parameters' sums not taken."""
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    g = grad_out * gamma if (gamma is not None and use_gamma) else grad_out
    grad_x = g
    if mean_term:
        grad_x = grad_x - g.mean(axis=-1, keepdims=True)
    if var_term:
        grad_x = grad_x - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    grad_x = grad_x / sigma
    d = x.shape[-1]
    grad_gamma, grad_beta = grad_out * xhat, grad_out
    if sum_params:
        grad_gamma, grad_beta = grad_gamma.reshape(-1, d).sum(axis=0), grad_beta.reshape(-1, d).sum(axis=0)
    return grad_x, grad_gamma, grad_beta


LAYER_NORM_GRAD = Exercise(
    name="layer_norm_grad", lesson="07_gradients_and_training", points=2,
    formula=r"\frac{\partial L}{\partial x} = \frac{1}{\sigma}\left(g - \bar{g} - \hat{x}\, \overline{g \hat{x}}\right),"
            r"\quad g = \gamma \odot \frac{\partial L}{\partial y}",
    cases=layer_norm_grad_cases, reference=layer_norm_grad,
    mistakes=(
        Mistake("layer_norm_grad_constant_statistics",
                "the mean and the variance were treated as constants: both depend on every input of the row, "
                "which subtracts mean(g) and xhat * mean(g * xhat) before dividing by sigma",
                partial(layer_norm_grad_model, mean_term=False, var_term=False)),
        Mistake("layer_norm_grad_without_the_variance_term",
                "the variance's part is missing: also subtract xhat * mean(g * xhat), since sigma depends on x",
                partial(layer_norm_grad_model, var_term=False)),
        Mistake("layer_norm_grad_without_the_mean_term",
                "the mean's part is missing: also subtract mean(g), since the mean depends on x",
                partial(layer_norm_grad_model, mean_term=False)),
        Mistake("layer_norm_grad_without_gamma",
                "gamma is missing from grad_x: the gradient reaching xhat is grad_out * gamma",
                partial(layer_norm_grad_model, use_gamma=False)),
        Mistake("layer_norm_grad_parameters_not_summed",
                "grad_gamma and grad_beta must be summed over every position: they have shape (d_model,)",
                partial(layer_norm_grad_model, sum_params=False)),
    ),
    may_call=("layer_norm",),
)

EXERCISES = (SOFTMAX_GRAD, LAYER_NORM_GRAD)
