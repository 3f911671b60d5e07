"""The position-wise feed-forward network: expand, bend, project back."""

import numpy as np

from . import _checks

FFN_KEYS = ("w1", "b1", "w2", "b2")
ACTIVATIONS = ("relu", "gelu")


@_checks.public
def relu(x):
    """max(x, 0), elementwise, for an array (or number) of finite floats; the same dtype back.

    >>> relu(np.array([-1.5, 0.0, 2.0]))
    array([0., 0., 2.])
    """
    return np.maximum(_checks.float_array(x, "x", min_ndim=0), 0)


def _gelu(x):
    """The unchecked core of gelu."""
    from scipy.special import erf

    half = np.asarray(0.5, dtype=x.dtype)
    return half * x * (1 + erf(x * np.asarray(np.sqrt(0.5), dtype=x.dtype)))


@_checks.public
def gelu(x):
    """The exact GELU, ``x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))``, as PyTorch's default.

    For an array (or number) of finite floats, the same dtype back; large
    negative inputs give 0, large positive ones give x. ``erf`` comes from
    SciPy, imported here rather than with the package so that ``import
    encoder_lib`` stays quick.

    >>> gelu(np.array([1.0, 2.0, -3.0])).round(4)
    array([ 0.8413,  1.9545, -0.004 ])
    """
    return _gelu(_checks.float_array(x, "x", min_ndim=0))


def check_ffn_params(params, d_model, dtype, where="params"):
    """Check w1 (d_model, d_ff), b1 (d_ff,), w2 (d_ff, d_model), b2 (d_model,); returns them."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(FFN_KEYS)}, got {type(params).__name__}")
    if "w1" not in params:
        raise ValueError(f"{where} is missing the key 'w1'; it has {sorted(map(str, params))}")
    shape = np.shape(params["w1"]) if isinstance(params["w1"], (np.ndarray, list, tuple)) else None
    if shape is None or len(shape) != 2 or shape[0] != d_model or 0 in shape:
        transposed = shape is not None and len(shape) == 2 and shape[1] == d_model and shape[0] != d_model
        d_ff = "d_ff" if shape is None or len(shape) != 2 else shape[0] if transposed else shape[1]
        raise ValueError(f"{where}['w1'] must have shape (d_model, d_ff) = ({d_model}, {d_ff}), "
                         f"got {shape if shape is not None else type(params['w1']).__name__}"
                         f"{_checks.TRANSPOSED if transposed else ''}")
    d_ff = shape[1]
    shapes = {"w1": (d_model, d_ff), "b1": (d_ff,), "w2": (d_ff, d_model), "b2": (d_model,)}
    return {key: _checks.param_array(params, key, shapes[key], dtype, where) for key in FFN_KEYS}


def _ffn(x, params, activation, tape=None):
    """The unchecked core of feed_forward: (..., d_model) -> (..., d_model).

    ``tape`` (a dict), when given, keeps the input ``x``, the hidden layer's
    ``pre``-activation (GELU only) and its output ``hidden``, each (..., d_ff):
    what the backward pass needs.
    """
    lead = x.shape[:-1]
    h = x.reshape(-1, x.shape[-1]) @ params["w1"]  # (positions, d_ff): every position in one product
    h += params["b1"]
    if activation == "relu":
        np.maximum(h, 0, out=h)
    else:
        if tape is not None:
            tape["pre"] = h.reshape(*lead, h.shape[-1])
        h = _gelu(h)
    if tape is not None:
        tape.update(x=x, hidden=h.reshape(*lead, h.shape[-1]))
    y = h @ params["w2"]  # (positions, d_model)
    y += params["b2"]
    return y.reshape(*lead, y.shape[-1])


@_checks.public
def feed_forward(x, params, activation="relu"):
    """``act(x @ w1 + b1) @ w2 + b2`` at every position, with the same weights everywhere.

    x: (..., seq, d_model); params: ``w1`` (d_model, d_ff), ``b1`` (d_ff,),
    ``w2`` (d_ff, d_model), ``b2`` (d_model,); activation: "relu" or "gelu".
    Returns (..., seq, d_model).

    >>> from encoder_lib.fixtures import lesson_ffn_params
    >>> feed_forward(np.array([1.0, 0.0, 0.5, -1.0]), lesson_ffn_params())
    array([ 0.4125   , -0.1171875, -0.928125 , -0.178125 ])
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    activation = _checks.choice(activation, "activation", ACTIVATIONS)
    params = check_ffn_params(params, x.shape[-1], x.dtype)
    return _ffn(x, params, activation)
