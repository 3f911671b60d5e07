"""The position-wise feed-forward network: expand, bend, project back; and its gated form.

    FFN(x)       = act(x W1 + b1) W2 + b2                   (the original Transformer, BERT)
    gated FFN(x) = (act(x W_in) * (x W_gate)) W_out          (Shazeer 2020: GeGLU with GELU, SwiGLU with SiLU)

The gated form has three matrices where the plain one has two, so at the
plain FFN's parameter count its hidden width is 2/3 of d_ff (``gated_d_ff``).
"""

import numpy as np

from . import _checks

FFN_KEYS = ("w1", "b1", "w2", "b2")
ACTIVATIONS = ("relu", "gelu")
GATED_KEYS = ("w_in", "w_gate", "w_out")
GATED_BIASES = ("b_in", "b_gate", "b_out")
GATED_ORDER = ("w_in", "b_in", "w_gate", "b_gate", "w_out", "b_out")
GATED_ACTIVATIONS = ("gelu", "silu", "relu")  # GeGLU, SwiGLU, ReGLU


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
    if "b1" in params:  # a bias-free FFN (BlockConfig(bias=False)) has none
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
    if "b2" in params:
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


def _silu(x):
    """The unchecked core of silu: ``x * sigmoid(x)``."""
    with np.errstate(over="ignore"):  # exp(-x) overflows for x below -88 (float32): x / inf is 0, the limit
        return x / (1 + np.exp(-x))


@_checks.public
def silu(x):
    """SiLU (Swish with beta 1), ``x * sigmoid(x)``, elementwise: SwiGLU's activation; the same dtype back.

    >>> silu(np.array([-1.0, 0.0, 2.0])).round(4)
    array([-0.2689,  0.    ,  1.7616])
    """
    return _silu(_checks.float_array(x, "x", min_ndim=0))


GATES = {"gelu": _gelu, "silu": _silu, "relu": lambda h: np.maximum(h, 0)}


def check_gated_params(params, d_model, dtype, where="params", bias=None):
    """``w_in``, ``w_gate`` (d_model, d_ff), ``w_out`` (d_ff, d_model) and, with ``bias`` (None: if ``b_in`` is
    there), ``b_in``, ``b_gate`` (d_ff,) and ``b_out`` (d_model,); returns them."""
    if not isinstance(params, dict):
        raise TypeError(f"{where} must be a dict with keys {list(GATED_KEYS)}, got {type(params).__name__}")
    bias = "b_in" in params if bias is None else bias
    w_in = params.get("w_in")
    d_ff = w_in.shape[1] if isinstance(w_in, np.ndarray) and w_in.ndim == 2 and w_in.shape[1] else "d_ff"
    shapes = {"w_in": (d_model, d_ff), "w_gate": (d_model, d_ff), "w_out": (d_ff, d_model),
              "b_in": (d_ff,), "b_gate": (d_ff,), "b_out": (d_model,)}
    keys = [key for key in shapes if bias or key in GATED_KEYS]  # each weight beside its bias, as init_block_params
    return _checks.exact_params(params, {key: shapes[key] for key in sorted(keys, key=GATED_ORDER.index)}, dtype, where,
                                f" (a gated FFN {'with' if bias else 'without'} biases)")


def _gated_ffn(x, params, activation, tape=None):
    """The unchecked core of gated_feed_forward: (..., d_model) -> (..., d_model).

    ``tape`` (a dict), when given, keeps the input ``x``, the activated half's
    input ``pre`` and output ``act``, the linear half ``gate`` and their
    product ``hidden``, each (..., seq, d_ff): what the backward pass needs.
    """
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])  # (positions, d_model): every position in one product
    pre, gate = flat @ params["w_in"], flat @ params["w_gate"]  # (positions, d_ff) each
    if "b_in" in params:
        pre += params["b_in"]
        gate += params["b_gate"]
    act = GATES[activation](pre)
    hidden = act * gate  # the activated half, gated elementwise by the linear half
    y = hidden @ params["w_out"]  # (positions, d_model)
    if "b_out" in params:
        y += params["b_out"]
    if tape is not None:  # each (..., seq, d_ff), as the plain FFN's hidden layer in a trace
        tape.update(x=x, **{name: a.reshape(*lead, a.shape[-1]) for name, a in
                            (("pre", pre), ("act", act), ("gate", gate), ("hidden", hidden))})
    return y.reshape(*lead, y.shape[-1])


@_checks.public
def gated_feed_forward(x, params, activation="gelu"):
    """``(act(x @ w_in) * (x @ w_gate)) @ w_out`` at every position (Shazeer 2020), biases added where given.

    x: (..., seq, d_model); params: ``w_in`` and ``w_gate`` (d_model, d_ff),
    ``w_out`` (d_ff, d_model), and optionally all three biases ``b_in``,
    ``b_gate`` (d_ff,) and ``b_out`` (d_model,). ``activation`` "gelu" is
    GeGLU (ModernBERT), "silu" SwiGLU (LLaMA), "relu" ReGLU. ``w_in`` is the
    activated half: ModernBERT's ``Wi`` is ``[w_in; w_gate]`` (its first half
    is activated, ``input, gate = Wi(x).chunk(2)``); LLaMA calls the activated
    one ``gate_proj`` and the other ``up_proj``.

    >>> p = {"w_in": np.ones((2, 3)), "w_gate": np.full((2, 3), 0.5), "w_out": np.ones((3, 2))}
    >>> gated_feed_forward(np.array([1.0, 1.0]), p, "relu")  # relu(2) * 1 in each of 3 columns, summed
    array([6., 6.])
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    activation = _checks.choice(activation, "activation", GATED_ACTIVATIONS)
    return _gated_ffn(x, check_gated_params(params, x.shape[-1], x.dtype), activation)


@_checks.public
def geglu(x, params):
    """The GeGLU feed-forward network: ``gated_feed_forward(x, params, "gelu")`` (ModernBERT's MLP).

    >>> p = {"w_in": np.ones((2, 3)), "w_gate": np.ones((2, 3)), "w_out": np.ones((3, 2))}
    >>> geglu(np.zeros(2), p)
    array([0., 0.])
    """
    return gated_feed_forward(x, params, "gelu")


@_checks.public
def swiglu(x, params):
    """The SwiGLU feed-forward network: ``gated_feed_forward(x, params, "silu")`` (LLaMA's MLP).

    >>> ones = {"w_in": np.ones((2, 3)), "w_gate": np.ones((2, 3)), "w_out": np.ones((3, 2))}
    >>> swiglu(np.array([1.0, 1.0]), ones).round(4)  # 3 columns of silu(2) * 2
    array([10.5696, 10.5696])
    """
    return gated_feed_forward(x, params, "silu")


@_checks.public
def gated_d_ff(d_ff):
    """The hidden width of a gated FFN with as many weights as a plain FFN of width ``d_ff``: ``2 d_ff / 3``.

    A plain bias-free FFN has ``2 d_model d_ff`` weights, a gated one
    ``3 d_model d_gated``; Shazeer (2020) keeps the count by taking d_ff 2048
    for the gated variants against 3072 for the plain ones. ``2 d_ff`` must
    divide by 3 (with biases the counts differ by ``d_ff / 3`` still).

    >>> gated_d_ff(3072)
    2048
    """
    d_ff = _checks.positive_int(d_ff, "d_ff")
    if d_ff % 3:
        raise ValueError(f"d_ff must divide by 3 for a gated FFN of 2 d_ff / 3 columns (3072 -> 2048), got {d_ff}")
    return 2 * d_ff // 3
