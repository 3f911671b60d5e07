"""Layer normalisation, and Add & Norm with the norm after the sum (post-norm) or before the sub-layer (pre-norm).

    post-norm (the original Transformer, BERT):     x -> LN(x + sublayer(x))
    pre-norm (GPT-2, wav2vec 2.0 large, Whisper):   x -> x + sublayer(LN(x))
"""

import inspect

import numpy as np

from . import _checks

NORM_KEYS = ("gamma", "beta")


def _layer_norm(x, gamma, beta, eps, tape=None):
    """The unchecked core of layer_norm. ``tape`` (a dict), when given, keeps ``xhat`` and ``sigma``
    (the normalised rows and each row's ``sqrt(var + eps)``), what the backward pass needs."""
    d_model = x.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):  # rows too large to square are redone below
        # np.add.reduce(...) / d_model is x.mean(axis=-1) to the bit, without its Python wrapper
        centred = x - np.add.reduce(x, axis=-1, keepdims=True) / d_model
        var = np.add.reduce(centred * centred, axis=-1, keepdims=True) / d_model  # biased: divide by d_model
        sigma = np.sqrt(var + eps)  # eps inside the square root
    if np.isfinite(sigma).all():
        centred /= sigma  # now xhat: mean 0, variance 1 (almost: eps) in every row
    else:
        centred, sigma = _scaled_rows(x, eps)
    if tape is not None:
        tape.update(xhat=centred, sigma=sigma)
        centred = centred.copy()  # the scale and shift below must not change the kept xhat
    if gamma is not None:
        centred *= gamma
    if beta is not None:
        centred += beta
    return centred


def _scaled_rows(x, eps):
    """``(xhat, sigma)`` when some row's squares (or sum) overflow x's dtype: every row divided by its
    largest entry first, which gives the same xhat up to rounding. ``sigma`` is the rows' true
    ``sqrt(var + eps)``, infinite where it does not fit (the backward pass divides by it: 0)."""
    scale = np.maximum(np.abs(x).max(axis=-1, keepdims=True), np.finfo(x.dtype).tiny)  # (..., 1)
    small = x / scale  # entries in [-1, 1]
    centred = small - small.mean(axis=-1, keepdims=True)
    scaled_sigma = np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps / scale / scale)
    with np.errstate(over="ignore"):
        return centred / scaled_sigma, scale * scaled_sigma


def check_norm_params(params, d_model, dtype, where):
    """A layer norm's ``{"gamma", "beta"}``, each (d_model,) of ``dtype``."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(NORM_KEYS)}, got {type(params).__name__}")
    return {key: _checks.param_array(params, key, (d_model,), dtype, where) for key in NORM_KEYS}


def _gamma_beta(gamma, beta, d_model, dtype):
    gamma = None if gamma is None else _checks.exact_array(gamma, "gamma", (d_model,), dtype)
    beta = None if beta is None else _checks.exact_array(beta, "beta", (d_model,), dtype)
    return gamma, beta


@_checks.public
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """Normalise each row of ``x`` (..., d_model) over its last axis.

    ``(x - mean) / sqrt(var + eps) * gamma + beta`` with the biased variance
    (divide by d_model), statistics taken over the features of one position
    only, never across positions or batch elements. ``gamma`` and ``beta``
    are (d_model,) or None (scale 1, shift 0). Rows of any finite size are
    normalised right, even where their squares would overflow (rows of 1e20
    in float32): such rows are scaled down first.

    >>> layer_norm(np.array([1.0, 2.0, 3.0, 4.0])).round(4)
    array([-1.3416, -0.4472,  0.4472,  1.3416])
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    gamma, beta = _gamma_beta(gamma, beta, x.shape[-1], x.dtype)
    return _layer_norm(x, gamma, beta, _checks.positive_number(eps, "eps"))


def _add_and_norm_args(x, sublayer, gamma, beta, eps):
    x = _checks.sequence(x)
    if not callable(sublayer):
        raise TypeError(f"sublayer must be a function of one array (e.g. lambda h: feed_forward(h, p)), "
                        f"got {type(sublayer).__name__}")
    try:
        inspect.signature(sublayer).bind(x)
    except TypeError:
        raise TypeError(f"sublayer must be a function of one array (e.g. lambda h: feed_forward(h, p)); "
                        f"{getattr(sublayer, '__name__', 'it')}{inspect.signature(sublayer)} cannot be called with one") from None
    except ValueError:  # no signature to read (a builtin): it will tell when called
        pass
    gamma, beta = _gamma_beta(gamma, beta, x.shape[-1], x.dtype)
    return x, gamma, beta, _checks.positive_number(eps, "eps")


def _layer_norm_any(x, gamma, beta, eps):
    """_layer_norm for float16 too: computed in float32 (float16 has too few digits for it), float16 out."""
    if x.dtype != np.float16:
        return _layer_norm(x, gamma, beta, eps)
    wide = [None if a is None else a.astype(np.float32) for a in (x, gamma, beta)]
    with np.errstate(over="ignore"):  # too large for float16: the caller's check refuses it
        return _layer_norm(*wide, eps).astype(np.float16)


def _sublayer(sublayer, h):
    """``sublayer(h)``, checked: an array of h's shape and dtype, finite."""
    out = sublayer(h)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"sublayer(x) must return an array of x's shape {h.shape}, got {type(out).__name__}")
    if out.shape != h.shape:
        raise ValueError(f"sublayer(x) must return x's shape {h.shape} (a sub-layer keeps the shape), got {out.shape}")
    if out.dtype != h.dtype:
        raise TypeError(f"sublayer(x) must return x's dtype {h.dtype}, got {out.dtype}")
    if not np.isfinite(out).all():
        raise ValueError("sublayer(x) returned NaN or infinity")
    return out


@_checks.public(float16_in_float32=False, extremes=_checks.NORM_EXTREMES)  # the sub-layer gets the caller's dtype
def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    """Add & Norm with the norm after the sum: ``LN(x + sublayer(x))`` (the original Transformer, BERT).

    >>> from encoder_lib import feed_forward
    >>> from encoder_lib.fixtures import lesson_ffn_params, lesson_input
    >>> out = post_norm(lesson_input(), lambda h: feed_forward(h, lesson_ffn_params()))
    >>> out.var(axis=-1).round(3)
    array([1., 1., 1.])
    """
    x, gamma, beta, eps = _add_and_norm_args(x, sublayer, gamma, beta, eps)
    return _layer_norm_any(x + _sublayer(sublayer, x), gamma, beta, eps)


@_checks.public(float16_in_float32=False, extremes=_checks.NORM_EXTREMES)
def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    """Add & Norm with the norm in front of the sub-layer: ``x + sublayer(LN(x))`` (GPT-2, Whisper).

    >>> from encoder_lib import feed_forward
    >>> from encoder_lib.fixtures import lesson_ffn_params, lesson_input
    >>> pre_norm(lesson_input(), lambda h: feed_forward(h, lesson_ffn_params())).shape
    (3, 4)
    """
    x, gamma, beta, eps = _add_and_norm_args(x, sublayer, gamma, beta, eps)
    return x + _sublayer(sublayer, _layer_norm_any(x, gamma, beta, eps))
