"""Lesson 07's exercises: the backward passes of the softmax and of layer norm.

The code of its exercises: gradients.toml declares each one (its texts, points and mistakes) and names the functions
here.
"""

import numpy as np

from ... import fixtures
from ...attention import masked_softmax, softmax
from ...grad import layer_norm_grad, softmax_grad  # gradients.toml's references
from ...norm import layer_norm
from ..compare import NotApplicable
from ..in_words import index, number, shape_text, span
from ..symptoms import Finding
from .add_norm import norm_options, rows_in
from ._base import cases, load_exercises, normal, square_probe


# --- the softmax's backward pass ----------------------------------------------------


def softmax_grad_cases(rng):
    masked = masked_softmax(normal(rng, 2, 4), np.array([False, False, True, True]))
    return cases(
        ("the row (0.5, 0.5) with gradient (1, 0)", [np.array([0.5, 0.5]), np.array([1.0, 0.0])], {}),
        ("weights (2, 3, 5), random gradient", [softmax(normal(rng, 2, 3, 5)), normal(rng, 2, 3, 5)], {}),
        ("weights with two masked keys (weight 0)", [masked, normal(rng, 2, 4)], {}),
    )


def softmax_grad_draw(rng, point):
    """Softmax weights of the point's shape and a random gradient: "peaked" weights (scores times 30, nearly
    one-hot), "masked" ones (the last key of each row padded, weight 0, where a row has two), "all-masked" (the first
    row all zeros, as masked_softmax gives a query whose keys are all padding)."""
    shape = (*point.lead, point["n"])
    scores = normal(rng, *shape) * (30.0 if point.regime == "peaked" else 2.0)
    weights = softmax(scores)
    if point.regime == "masked" and point["n"] > 1:
        weights[..., -1] = 0.0  # as masked_softmax gives a padded key
        weights /= weights.sum(axis=-1, keepdims=True)
    if point.regime == "all-masked":
        weights.reshape(-1, point["n"])[0] = 0.0
    grad = normal(rng, *shape) * (100.0 if point.regime == "large" else 1.0)
    return f"weights and gradient {shape}", [weights, grad], {}


def softmax_grad_reference_model(weights, grad_weights):
    weighted = (grad_weights * weights).sum(axis=-1, keepdims=True)  # step: weighted
    return weights * (grad_weights - weighted)  # step: result


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


def softmax_grad_rows_sum_to_zero(ev):
    """Each row of a softmax's gradient sums to 0 (the weights always sum to 1), and is 0 where a weight is 0."""
    got, weights = ev.got_array(), ev.value("weights")
    if got is None or got.shape != weights.shape or not np.isfinite(got).all():
        return None
    zero = weights == 0  # a padded key's weight is exactly 0; a nearly one-hot row's smallest is not
    if zero.any() and np.abs(got[zero]).max() > 1e-9:
        at = np.argwhere(zero & (np.abs(got) > 1e-9))[0]
        return Finding("softmax_grad:masked",
                       f"{ev.where()} a key with weight 0 has no gradient (its score can move without changing "
                       f"any weight), but yours is {number(got[tuple(at)])} at {index(at)}.")
    sums = got.sum(axis=-1)
    if not np.allclose(sums, 0, atol=1e-6):
        return Finding("softmax_grad:sums",
                       f"{ev.where()} each row of a softmax's gradient sums to 0, since adding one number to every "
                       f"score of a row changes no weight; your rows sum to {span(sums, target=0)}.")
    return None


# --- layer norm's backward pass ----------------------------------------------------


def layer_norm_grad_probes(rng):
    return square_probe("x (4, 4): as many rows as features, with gamma and beta", normal(rng, 4, 4) * 2 + 1,
                        normal(rng, 4, 4), rng.uniform(0.5, 2, 4), rng.normal(0, 1, 4))


def layer_norm_grad_cases(rng):
    x = fixtures.lesson_input()
    return cases(
        ("the lesson's input (3, 4), gradient 1 on the first feature",
         [x, np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))], {}),
        ("(2, 5, 6) with gamma and beta", [normal(rng, 2, 5, 6), normal(rng, 2, 5, 6),
                                           rng.uniform(0.5, 2, 6), rng.normal(0, 1, 6)], {}),
        ("rows of variance about 1e-5 (eps matters)", [normal(rng, 3, 6) * 3e-3, normal(rng, 3, 6)], {}),
        ("(3, 5) with gamma only", [normal(rng, 3, 5), normal(rng, 3, 5), rng.uniform(0.5, 2, 5)], {}),
        ("(3, 5) with beta only", [normal(rng, 3, 5), normal(rng, 3, 5)], {"beta": rng.normal(0, 1, 5)}),
        ("(3, 4) with gamma, beta and eps=0.5", [normal(rng, 3, 4), normal(rng, 3, 4), rng.uniform(0.5, 2, 4),
                                                 rng.normal(0, 1, 4)], {"eps": 0.5}),
    )


def layer_norm_grad_draw(rng, point):
    x = rows_in(rng, point.regime, (*point.lead, point["d"]))
    words, args, kwargs = norm_options(rng, point, point["d"])
    grad = normal(rng, *x.shape) * (1000.0 if point.regime == "scaled" else 1.0)
    return f"x and gradient {x.shape}, {words}", [x, grad, *args], kwargs


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


def layer_norm_grad_reference_model(x, grad_out, gamma=None, beta=None, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)  # step: centred
    sigma = np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + eps)  # step: sigma
    xhat = centred / sigma  # step: xhat
    g = grad_out * gamma if gamma is not None else grad_out  # step: g
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma  # step: grad_x
    d = x.shape[-1]  # step: d
    grad_gamma = (grad_out * xhat).reshape(-1, d).sum(axis=0)  # step: grad_gamma
    grad_beta = grad_out.reshape(-1, d).sum(axis=0)  # step: grad_beta
    return grad_x, grad_gamma, grad_beta  # step: result


def _finite_difference_x(ev, h=1e-6):
    """The gradient of sum(grad_out * LN(x)) for x, by central differences (the cases are small)."""
    x, grad_out = ev.value("x"), ev.value("grad_out")
    gamma, beta, eps = ev.value("gamma"), ev.value("beta"), ev.value("eps")
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        grad[i] = ((grad_out * layer_norm(up, gamma, beta, eps)).sum()
                   - (grad_out * layer_norm(down, gamma, beta, eps)).sum()) / (2 * h)
    return grad


def layer_norm_grad_by_argument(ev):
    """Each of grad_x, grad_gamma, grad_beta checked on its own: which are right, and what the wrong ones break."""
    if not isinstance(ev.got, tuple) or len(ev.got) != 3:
        return None
    names = ("grad_x", "grad_gamma", "grad_beta")
    got = [ev.got_array(i) for i in range(3)]
    right = [ev.expected_array(i) for i in range(3)]
    for name, g, r in zip(names, got, right):
        if g is not None and g.shape != r.shape:
            return Finding(f"lng:shape:{name}",
                           f"{ev.where()} your {name} has shape {shape_text(g.shape)}; the right one has "
                           f"{shape_text(r.shape)}" + (", one number per feature." if name != "grad_x" else "."))
    wrong = [n for n, g, r in zip(names, got, right) if g is None or not np.allclose(g, r, atol=1e-6)]
    if not wrong:
        return None
    ok = [n for n in names if n not in wrong]
    lead = (f"{ev.where()} your {' and '.join(ok)} {'is' if len(ok) == 1 else 'are'} right and your "
            f"{' and '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not" if ok else
            f"{ev.where()} none of your three gradients is right")
    if "grad_x" in wrong and got[0] is not None and np.isfinite(got[0]).all():
        return _grad_x_finding(ev, got[0], lead)
    return Finding("lng:params", lead + ".")


def _grad_x_finding(ev, grad_x, lead):
    """What a wrong grad_x breaks: its rows' sums (0 for a right one), and a finite-difference check's gap."""
    sums = grad_x.sum(axis=-1)
    gap = float(np.abs(grad_x - _finite_difference_x(ev)).max())
    if not np.allclose(sums, 0, atol=1e-6):
        return Finding("lng:x-sums",
                       lead + f"; each row of grad_x sums to 0 (adding one number to a row of x changes no "
                              f"output of layer norm), yours sum to {span(sums, target=0)}, and a finite-difference "
                              f"check of grad_x differs from yours by up to {number(gap, 3)}.")
    return Finding("lng:x",
                   lead + f"; a finite-difference check of grad_x differs from yours by up to {number(gap, 3)}, "
                          f"though your rows sum to 0, as they should.")


#: The lesson's exercises, as gradients.toml declares them.
EXERCISES = load_exercises(globals())
