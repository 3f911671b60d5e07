"""The encoder block (attention, then the FFN, each wrapped in Add & Norm) and a stack of blocks.

Post-norm (the original Transformer, BERT):  x = LN(x + f(x))
Pre-norm  (GPT-2, wav2vec 2.0 large, Whisper): x = x + f(LN(x))
"""

import numpy as np

from . import _checks
from .attention import _mha, check_attention_params
from .feed_forward import ACTIVATIONS, _ffn, check_ffn_params
from .layer_norm import _layer_norm

NORMS = ("post", "pre")
BLOCK_KEYS = ("attn", "ffn", "norm1", "norm2")


def check_block_params(params, d_model, dtype, where="params"):
    """Check one block's nested params against ``d_model`` and ``dtype``; returns a checked copy.

    ``params["attn"]`` may be None: identity projections, the lesson's variant.
    """
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(BLOCK_KEYS)}, got {type(params).__name__}")
    missing = [key for key in BLOCK_KEYS if key not in params]
    if missing:
        raise ValueError(f"{where} is missing {missing}; a block's params have keys {list(BLOCK_KEYS)}")
    checked = {
        "attn": None
        if params["attn"] is None
        else check_attention_params(params["attn"], d_model, dtype, f"{where}['attn']"),
        "ffn": check_ffn_params(params["ffn"], d_model, dtype, f"{where}['ffn']"),
    }
    for key in ("norm1", "norm2"):
        norm = params[key]
        if not isinstance(norm, dict):
            raise TypeError(f"{where}[{key!r}] must be a dict with keys ['gamma', 'beta'], got {type(norm).__name__}")
        checked[key] = {
            name: _checks.param_array(norm, name, (d_model,), dtype, f"{where}[{key!r}]")
            for name in ("gamma", "beta")
        }
    return checked


def _check_options(norm, activation, eps, dropout, rng):
    _checks.choice(norm, "norm", NORMS)
    _checks.choice(activation, "activation", ACTIVATIONS)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not eps > 0:
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float, np.floating)) or not 0 <= dropout < 1:
        raise ValueError(f"dropout must be a probability in [0, 1), got {dropout!r}")
    if dropout > 0 and not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"dropout={dropout} needs rng, a np.random.Generator (e.g. np.random.default_rng(0)), "
            f"got {type(rng).__name__}"
        )


def _sublayer_io(x, sublayer, gamma, beta, eps):
    x = _checks.sequence(x)
    if not callable(sublayer):
        raise TypeError(f"sublayer must be a function of one array (e.g. lambda h: feed_forward(h, p)), got {type(sublayer).__name__}")
    d_model = x.shape[-1]
    gamma = None if gamma is None else _checks.exact_array(gamma, "gamma", (d_model,), x.dtype)
    beta = None if beta is None else _checks.exact_array(beta, "beta", (d_model,), x.dtype)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not eps > 0:
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    return x, gamma, beta


def post_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    """Add & Norm with the norm after the sum: ``LN(x + sublayer(x))`` (the original Transformer, BERT).

    >>> from encoder_lib import feed_forward
    >>> from encoder_lib.fixtures import lesson_ffn_params, lesson_input
    >>> out = post_norm(lesson_input(), lambda h: feed_forward(h, lesson_ffn_params()))
    >>> out.var(axis=-1).round(3)
    array([1., 1., 1.])
    """
    x, gamma, beta = _sublayer_io(x, sublayer, gamma, beta, eps)
    return _layer_norm(x + sublayer(x), gamma, beta, eps)


def pre_norm(x, sublayer, gamma=None, beta=None, eps=1e-5):
    """Add & Norm with the norm in front of the sub-layer: ``x + sublayer(LN(x))`` (GPT-2, Whisper).

    >>> from encoder_lib import feed_forward
    >>> from encoder_lib.fixtures import lesson_ffn_params, lesson_input
    >>> pre_norm(lesson_input(), lambda h: feed_forward(h, lesson_ffn_params())).shape
    (3, 4)
    """
    x, gamma, beta = _sublayer_io(x, sublayer, gamma, beta, eps)
    return x + sublayer(_layer_norm(x, gamma, beta, eps))


def _dropout(y, rate, rng):
    """Zero each entry with probability ``rate`` and scale the rest by 1 / (1 - rate)."""
    if rate == 0:
        return y
    keep = rng.random(y.shape) >= rate
    return y * keep / np.asarray(1 - rate, dtype=y.dtype)


def _block(x, p, n_heads, norm, mask, activation, eps, residual, dropout, rng, trace, cache=None):
    """The unchecked core of encoder_block; fills ``trace`` (a dict) when given.

    ``cache`` (a dict) gets what the backward pass needs (encoder_lib.grad):
    the trace and the sub-layers' own caches.
    """
    keep = trace if trace is not None else {}
    attn_cache = ffn_cache = None
    if cache is not None:
        attn_cache, ffn_cache = {}, {}
        cache.update(trace=keep, attn=attn_cache, ffn=ffn_cache)

    def ln(y, which):
        return _layer_norm(y, p[which]["gamma"], p[which]["beta"], eps)

    def add(a, b):
        return a + b if residual else b

    keep["input"] = x
    if norm == "post":
        attn, keep["attn_weights"] = _mha(x, n_heads, p["attn"], mask, attn_cache)
        keep["attn_out"] = attn = _dropout(attn, dropout, rng)
        keep["sum1"] = h = add(x, attn)
        keep["norm1"] = h = ln(h, "norm1")
        ffn = _ffn(h, p["ffn"], activation, trace, ffn_cache)
        keep["ffn_out"] = ffn = _dropout(ffn, dropout, rng)
        keep["sum2"] = out = add(h, ffn)
        keep["norm2"] = out = ln(out, "norm2")
    else:
        keep["norm1"] = h = ln(x, "norm1")
        attn, keep["attn_weights"] = _mha(h, n_heads, p["attn"], mask, attn_cache)
        keep["attn_out"] = attn = _dropout(attn, dropout, rng)
        keep["sum1"] = x = add(x, attn)
        keep["norm2"] = h = ln(x, "norm2")
        ffn = _ffn(h, p["ffn"], activation, trace, ffn_cache)
        keep["ffn_out"] = ffn = _dropout(ffn, dropout, rng)
        keep["sum2"] = out = add(x, ffn)
    keep["output"] = out
    return out


def _prepare(x, n_heads, norm, padding_mask, activation, eps, dropout, rng):
    x = _checks.sequence(x)
    n_heads = _checks.heads(x.shape[-1], n_heads)
    _check_options(norm, activation, eps, dropout, rng)
    mask = _checks.padding_mask(padding_mask, x.shape)
    return x, n_heads, mask


def encoder_block(x, params, n_heads, norm="post", padding_mask=None, activation="relu",
                  eps=1e-5, residual=True, dropout=0.0, rng=None):
    """One Transformer encoder block over ``x`` (..., seq, d_model) -> (..., seq, d_model).

    ``params = {"attn": {...} or None, "ffn": {...}, "norm1": {"gamma", "beta"},
    "norm2": {...}}``. ``norm="post"`` computes ``LN(x + f(x))`` around each
    sub-layer, ``norm="pre"`` computes ``x + f(LN(x))``. ``residual=False``
    drops the ``x +`` (to see what the skip connection does). Dropout is the
    identity unless ``dropout > 0``, which needs an explicit ``rng``.

    >>> from encoder_lib.fixtures import lesson_block_params, lesson_input
    >>> out = encoder_block(lesson_input(), lesson_block_params(), n_heads=2)
    >>> out.mean(axis=-1).round(6) + 0, out.var(axis=-1).round(3)
    (array([0., 0., 0.]), array([1., 1., 1.]))
    """
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, dropout, rng)
    p = check_block_params(params, x.shape[-1], x.dtype)
    return _block(x, p, n_heads, norm, mask, activation, eps, residual, dropout, rng, None)


def trace_encoder_block(x, params, n_heads, norm="post", padding_mask=None, activation="relu",
                        eps=1e-5, residual=True):
    """Run one block and return every intermediate, in the order they are computed.

    Keys: ``input``, ``attn_weights`` (..., n_heads, seq, seq), ``attn_out``,
    ``sum1`` (after the first residual), ``norm1``, ``ffn_hidden``
    (..., seq, d_ff), ``ffn_out``, ``sum2``, ``norm2``, ``output``. In
    pre-norm, ``norm1`` and ``norm2`` are the sub-layers' inputs and
    ``output`` is ``sum2``; in post-norm ``output`` is ``norm2``.
    """
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, 0.0, None)
    p = check_block_params(params, x.shape[-1], x.dtype)
    trace = {}
    _block(x, p, n_heads, norm, mask, activation, eps, residual, 0.0, None, trace)
    return trace


def _check_layers(layers, d_model, dtype):
    if not isinstance(layers, (list, tuple)):
        raise TypeError(f"layers must be a list of block params (one dict per block), got {type(layers).__name__}")
    if not layers:
        raise ValueError("layers must hold at least one block's params, got an empty list")
    return [check_block_params(p, d_model, dtype, f"layers[{i}]") for i, p in enumerate(layers)]


def encoder(x, layers, n_heads, norm="post", padding_mask=None, activation="relu",
            eps=1e-5, residual=True, dropout=0.0, rng=None):
    """A stack of encoder blocks: the output of each is the input of the next.

    ``layers`` is a list of block params, one per block (see ``encoder_block``);
    every other argument is shared by all blocks. Shape-preserving:
    (..., seq, d_model) -> (..., seq, d_model). No final layer norm is added.

    >>> from encoder_lib import init_block_params
    >>> rng = np.random.default_rng(0)
    >>> layers = [init_block_params(8, 16, rng) for _ in range(3)]
    >>> encoder(rng.standard_normal((2, 5, 8), dtype=np.float32), layers, n_heads=2).shape
    (2, 5, 8)
    """
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, dropout, rng)
    for p in _check_layers(layers, x.shape[-1], x.dtype):
        x = _block(x, p, n_heads, norm, mask, activation, eps, residual, dropout, rng, None)
    return x


def trace_encoder(x, layers, n_heads, norm="post", padding_mask=None, activation="relu",
                  eps=1e-5, residual=True):
    """Run a stack and return one ``trace_encoder_block`` dict per block."""
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, 0.0, None)
    traces = []
    for p in _check_layers(layers, x.shape[-1], x.dtype):
        trace = {}
        x = _block(x, p, n_heads, norm, mask, activation, eps, residual, 0.0, None, trace)
        traces.append(trace)
    return traces
