"""Layer normalisation: each position's features to mean 0 and variance 1."""

import numpy as np

from . import _checks


def _layer_norm(x, gamma, beta, eps):
    """The unchecked core of layer_norm."""
    centred = x - x.mean(axis=-1, keepdims=True)
    var = np.mean(centred * centred, axis=-1, keepdims=True)  # biased: divide by d_model
    var += eps  # eps inside the square root
    centred /= np.sqrt(var)
    if gamma is not None:
        centred *= gamma
    if beta is not None:
        centred += beta
    return centred


def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """Normalise each row of ``x`` (..., d_model) over its last axis.

    ``(x - mean) / sqrt(var + eps) * gamma + beta`` with the biased variance
    (divide by d_model), statistics taken over the features of one position
    only, never across positions or batch elements. ``gamma`` and ``beta``
    are (d_model,) or None (scale 1, shift 0).

    >>> layer_norm(np.array([1.0, 2.0, 3.0, 4.0])).round(4)
    array([-1.3416, -0.4472,  0.4472,  1.3416])
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    d_model = x.shape[-1]
    if gamma is not None:
        gamma = _checks.exact_array(gamma, "gamma", (d_model,), x.dtype)
    if beta is not None:
        beta = _checks.exact_array(beta, "beta", (d_model,), x.dtype)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not eps > 0:
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    return _layer_norm(x, gamma, beta, eps)
