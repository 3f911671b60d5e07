"""Layer normalisation and RMSNorm, and Add & Norm with the norm after the sum (post-norm), before the sub-layer
(pre-norm) or both before and after it (peri-norm).

    post-norm (the original Transformer, BERT):     x -> LN(x + sublayer(x))
    pre-norm (GPT-2, wav2vec 2.0 large, Whisper):   x -> x + sublayer(LN(x))
    peri-norm (Gemma 2 and 3; Kim et al. 2025):     x -> x + LN_out(sublayer(LN_in(x)))

``layer_norm(x, gamma)`` without ``beta`` is the bias-free layer norm
(ModernBERT's ``norm_bias=False``); ``rms_norm`` drops the mean as well
(Zhang & Sennrich 2019; LLaMA, Gemma, OLMo 2).
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


def _gamma_beta(gamma, beta, d_model, dtype, suffix=""):
    gamma = None if gamma is None else _checks.exact_array(gamma, "gamma" + suffix, (d_model,), dtype)
    beta = None if beta is None else _checks.exact_array(beta, "beta" + suffix, (d_model,), dtype)
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


def _rms_norm(x, gamma, eps, tape=None):
    """The unchecked core of rms_norm. ``tape`` (a dict), when given, keeps ``xhat`` and ``rms`` (each row's
    ``sqrt(mean(x^2) + eps)``), what the backward pass needs."""
    with np.errstate(over="ignore", invalid="ignore"):  # rows too large to square are redone below
        rms = np.sqrt(np.add.reduce(x * x, axis=-1, keepdims=True) / x.shape[-1] + eps)  # (..., 1)
    if np.isfinite(rms).all():
        xhat = x / rms
    else:  # some row's squares overflow: divide every row by its largest entry first
        scale = np.maximum(np.abs(x).max(axis=-1, keepdims=True), np.finfo(x.dtype).tiny)
        small = x / scale
        scaled_rms = np.sqrt(np.mean(small * small, axis=-1, keepdims=True) + eps / scale / scale)
        with np.errstate(over="ignore"):
            xhat, rms = small / scaled_rms, scale * scaled_rms
    if tape is not None:
        tape.update(xhat=xhat, rms=rms)
    return xhat if gamma is None else xhat * gamma


@_checks.public
def rms_norm(x, gamma=None, eps=1e-5):
    """Scale each row of ``x`` (..., d_model) to a root mean square of 1: ``x / sqrt(mean(x^2) + eps) * gamma``.

    RMSNorm (Zhang & Sennrich 2019), as ``torch.nn.RMSNorm``: layer norm
    without the mean's subtraction and without ``beta``, so a row keeps its
    mean's sign and direction. ``gamma`` is (d_model,) or None (scale 1).
    Rows of any finite size are scaled right (rows of 1e20 in float32 too).

    >>> rms_norm(np.array([1.0, 2.0, 3.0, 4.0])).round(4)  # the root mean square of 1, 2, 3, 4 is sqrt(7.5)
    array([0.3651, 0.7303, 1.0954, 1.4606])
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    gamma, _ = _gamma_beta(gamma, None, x.shape[-1], x.dtype)
    return _rms_norm(x, gamma, _checks.positive_number(eps, "eps"))


@_checks.public(float16_in_float32=False, extremes=_checks.NORM_EXTREMES)
def peri_norm(x, sublayer, gamma=None, beta=None, eps=1e-5, *, gamma_out=None, beta_out=None):
    """Add & Norm with a norm before the sub-layer and one after it: ``x + LN_out(sublayer(LN_in(x)))``.

    The third placement, which Gemma 2 and 3 use (their ``input_layernorm``
    and ``post_attention_layernorm``, ``pre_feedforward_layernorm`` and
    ``post_feedforward_layernorm``) and Kim et al. (2025) call Peri-LN.
    ``gamma``/``beta`` belong to the norm in front of the sub-layer,
    ``gamma_out``/``beta_out`` to the one after it; the residual stream
    itself is never normalised, as in pre-norm.

    >>> from encoder_lib import feed_forward
    >>> from encoder_lib.fixtures import lesson_ffn_params, lesson_input
    >>> x = lesson_input()
    >>> added = peri_norm(x, lambda h: feed_forward(h, lesson_ffn_params())) - x  # what the sub-layer adds ...
    >>> added.var(axis=-1).round(3)  # ... is normalised
    array([1., 1., 1.])
    """
    x, gamma, beta, eps = _add_and_norm_args(x, sublayer, gamma, beta, eps)
    gamma_out, beta_out = _gamma_beta(gamma_out, beta_out, x.shape[-1], x.dtype, "_out")
    return x + _layer_norm_any(_sublayer(sublayer, _layer_norm_any(x, gamma, beta, eps)), gamma_out, beta_out, eps)


def norm_keys(kind, bias):
    """The arrays of one norm's params: layer norm with a bias has ``gamma`` and ``beta``; RMSNorm and the bias-free
    layer norm have ``gamma`` only."""
    return ("gamma", "beta") if kind == "layer" and bias else ("gamma",)


def check_norm_params_of(params, d_model, dtype, where, keys):
    """One norm's params with exactly ``keys``, each (d_model,) of ``dtype``, or None (an identity: ModernBERT's first
    layer has no norm in front of its attention)."""
    if params is None:
        return None
    return _checks.exact_params(params, {key: (d_model,) for key in keys}, dtype, where,
                                " (a bias-free layer norm and RMSNorm have no beta; None is no norm)")


def _norm(x, params, kind, eps, tape=None):
    """Layer norm (``kind`` "layer", beta optional) or RMSNorm ("rms"), unchecked; ``x`` itself for params None."""
    if params is None:
        return x
    if kind == "rms":
        return _rms_norm(x, params["gamma"], eps, tape)
    return _layer_norm(x, params["gamma"], params.get("beta"), eps, tape)
