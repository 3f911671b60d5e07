"""Backward passes: the gradient of a loss through every part of the encoder block.

Each ``*_grad`` function takes the forward pass's inputs and ``grad_out``, the
gradient of some scalar loss with respect to that part's output (same shape as
the output), and returns the gradient with respect to the inputs and, where the
part has parameters, a dict of parameter gradients with the same keys and
shapes as the parameters. That is the chain rule, one part at a time: a stack's
gradient is its blocks' ``*_grad`` applied from the last block to the first.

The forward pass is the library's own (``encoder_block``'s core keeps what the
backward pass needs), dropout is off, and float32 or float64 is kept as given.
Checked against central finite differences and against PyTorch autograd
(``tests/test_grad.py``).

    >>> import numpy as np, encoder_lib as el
    >>> rng = np.random.default_rng(0)
    >>> p = el.init_block_params(8, 16, rng, dtype=np.float64)
    >>> x = rng.standard_normal((5, 8))
    >>> grad_x, grad_p = el.encoder_block_grad(x, p, n_heads=2, grad_out=np.ones((5, 8)))
    >>> grad_x.shape, grad_p["ffn"]["w1"].shape
    ((5, 8), (8, 16))
"""

import numpy as np

from . import _checks
from .attention import _mha, check_attention_params, merge_heads, scaled_dot_product_attention, split_heads
from .block import _block, _check_layers, _prepare, check_block_params
from .feed_forward import ACTIVATIONS, _ffn, check_ffn_params

# ------------------------------------------------------------------ the parts, unchecked


def _softmax_grad(weights, grad_weights):
    """d loss / d scores from the softmax's output ``weights`` and d loss / d weights.

    The softmax's Jacobian is ``diag(w) - w w^T`` per row, so the product with
    the incoming gradient is ``w * (g - sum(g * w))``. Masked keys have weight
    0 and so get gradient 0, as do rows whose keys are all padding.
    """
    return weights * (grad_weights - np.sum(grad_weights * weights, axis=-1, keepdims=True))


def _attention_grad(q, k, v, weights, grad_out):
    """Gradients of ``weights @ v`` with ``weights = softmax(q k^T / sqrt(d_k))`` for q, k and v."""
    scale = np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype)
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out  # (..., s_k, d_v)
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)  # (..., s_q, s_k)
    grad_scores = _softmax_grad(weights, grad_weights) * scale
    grad_q = grad_scores @ k
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q
    return grad_q, grad_k, grad_v


def _sum_rows(g):
    """Sum a gradient over every axis but the last: a bias's gradient."""
    return g.reshape(-1, g.shape[-1]).sum(axis=0)


def _weight_grad(x, g):
    """The gradient of ``w`` in ``x @ w``: ``x^T g`` summed over every position of every batch element."""
    return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])


def _mha_grad(x, params, cache, grad_out):
    """Backward through multi-head attention; ``cache`` is what ``_mha`` kept. Returns grad_x, grad_params."""
    n_heads = cache["q"].shape[-3]
    grads = {}
    if params is None:
        grad_heads = grad_out
    else:
        grads["w_o"] = _weight_grad(cache["heads"], grad_out)
        grads["b_o"] = _sum_rows(grad_out)
        grad_heads = grad_out @ params["w_o"].T
    grad_q, grad_k, grad_v = _attention_grad(cache["q"], cache["k"], cache["v"], cache["weights"],
                                             split_heads(grad_heads, n_heads))
    grad_q, grad_k, grad_v = merge_heads(grad_q), merge_heads(grad_k), merge_heads(grad_v)
    if params is None:  # identity projections: q = k = v = x
        return grad_q + grad_k + grad_v, None
    grad_qkv = np.concatenate([grad_q, grad_k, grad_v], axis=-1)  # (..., seq, 3 d_model)
    w_qkv = np.concatenate([params["w_q"], params["w_k"], params["w_v"]], axis=1)  # (d, 3d)
    grad_w = _weight_grad(x, grad_qkv)
    grad_b = _sum_rows(grad_qkv)
    d = x.shape[-1]
    for i, name in enumerate("qkv"):
        grads[f"w_{name}"] = grad_w[:, i * d : (i + 1) * d]
        grads[f"b_{name}"] = grad_b[i * d : (i + 1) * d]
    grad_x = grad_qkv @ w_qkv.T
    return grad_x, {key: grads[key] for key in ("w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o")}


def _gelu_derivative(x):
    """d/dx of ``x Phi(x)``: ``Phi(x) + x phi(x)``, with Phi and phi the standard normal's cdf and density."""
    from scipy.special import erf

    cdf = 0.5 * (1 + erf(x * np.asarray(np.sqrt(0.5), dtype=x.dtype)))
    density = np.exp(-0.5 * x * x) * np.asarray(1 / np.sqrt(2 * np.pi), dtype=x.dtype)
    return cdf + x * density


def _ffn_grad(x, params, activation, cache, grad_out):
    """Backward through the FFN; ``cache`` is what ``_ffn`` kept. Returns grad_x, grad_params."""
    hidden = cache["hidden"]  # (positions, d_ff)
    g = grad_out.reshape(-1, grad_out.shape[-1])
    grads = {"w2": hidden.T @ g, "b2": g.sum(axis=0)}
    grad_hidden = g @ params["w2"].T
    if activation == "relu":
        grad_hidden *= hidden > 0  # relu passes the gradient where it passed the input
    else:
        grad_hidden *= _gelu_derivative(cache["pre"])
    grads["w1"] = _weight_grad(x, grad_hidden)
    grads["b1"] = grad_hidden.sum(axis=0)
    grad_x = (grad_hidden @ params["w1"].T).reshape(x.shape)
    return grad_x, {key: grads[key] for key in ("w1", "b1", "w2", "b2")}


def _layer_norm_grad(x, gamma, eps, grad_out):
    """Backward through layer norm over the last axis. Returns grad_x, grad_gamma, grad_beta.

    With ``xhat = (x - mean) / sigma`` and ``g = grad_out * gamma``:
    ``grad_x = (g - mean(g) - xhat * mean(g * xhat)) / sigma``; the two means
    are what the normalisation's shared mean and variance take back.
    """
    centred = x - x.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    xhat = centred / sigma
    grad_gamma = _sum_rows(grad_out * xhat)
    grad_beta = _sum_rows(grad_out)
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - g.mean(axis=-1, keepdims=True) - xhat * np.mean(g * xhat, axis=-1, keepdims=True)) / sigma
    return grad_x, grad_gamma, grad_beta


def _block_grad(p, norm, activation, eps, residual, cache, grad_out):
    """Backward through one block whose forward pass filled ``cache``. Returns grad_x, grad_params."""
    trace = cache["trace"]
    grads = {"norm1": {}, "norm2": {}}

    def ln_grad(y, which, g):  # through norm1 or norm2, keeping its gamma and beta gradients
        gx, grads[which]["gamma"], grads[which]["beta"] = _layer_norm_grad(y, p[which]["gamma"], eps, g)
        return gx

    if norm == "post":
        # out = LN2(s2), s2 = h1 + ffn(h1), h1 = LN1(s1), s1 = x + attn(x)
        grad_sum2 = ln_grad(trace["sum2"], "norm2", grad_out)
        grad_h, grads["ffn"] = _ffn_grad(trace["norm1"], p["ffn"], activation, cache["ffn"], grad_sum2)
        if residual:
            grad_h += grad_sum2
        grad_sum1 = ln_grad(trace["sum1"], "norm1", grad_h)
        grad_x, grads["attn"] = _mha_grad(trace["input"], p["attn"], cache["attn"], grad_sum1)
        if residual:
            grad_x += grad_sum1
    else:
        # out = s1 + ffn(LN2(s1)), s1 = x + attn(LN1(x))
        grad_n2, grads["ffn"] = _ffn_grad(trace["norm2"], p["ffn"], activation, cache["ffn"], grad_out)
        grad_sum1 = ln_grad(trace["sum1"], "norm2", grad_n2)
        if residual:
            grad_sum1 += grad_out
        grad_n1, grads["attn"] = _mha_grad(trace["norm1"], p["attn"], cache["attn"], grad_sum1)
        grad_x = ln_grad(trace["input"], "norm1", grad_n1)
        if residual:
            grad_x += grad_sum1
    return grad_x, {key: grads[key] for key in ("attn", "ffn", "norm1", "norm2")}


# ------------------------------------------------------------------ checks


def _grad_out(grad_out, shape, dtype, name="grad_out"):
    """``grad_out`` must be exactly the output's shape and dtype."""
    return _checks.exact_array(grad_out, f"{name} (the gradient of the loss for the output)", shape, dtype)


# ------------------------------------------------------------------ public


def softmax_grad(weights, grad_weights):
    """The gradient for the scores of ``weights = softmax(scores)`` (over the last axis).

    ``weights`` are the softmax's output (rows summing to 1, or 0 for a fully
    masked row), ``grad_weights`` the gradient of the loss for them, same
    shape. Returns ``weights * (grad_weights - sum(grad_weights * weights))``
    per row: the softmax's Jacobian ``diag(w) - w w^T`` times the gradient.

    >>> softmax_grad(np.array([0.5, 0.5]), np.array([1.0, 0.0]))
    array([ 0.25, -0.25])
    """
    weights = _checks.float_array(weights, "weights")
    grad_weights = _grad_out(grad_weights, weights.shape, weights.dtype, "grad_weights")
    return _softmax_grad(weights, grad_weights)


def scaled_dot_product_attention_grad(q, k, v, grad_out, padding_mask=None):
    """Gradients of ``scaled_dot_product_attention(q, k, v, padding_mask)[0]`` for q, k and v.

    ``grad_out`` has the output's shape (..., seq_q, d_v). Returns
    ``(grad_q, grad_k, grad_v)``; a padded key gets zero gradient for its key
    and value, since no query reads it.
    """
    out, weights = scaled_dot_product_attention(q, k, v, padding_mask)
    grad_out = _grad_out(grad_out, out.shape, out.dtype)
    q, k, v = (np.asarray(a) for a in (q, k, v))
    grad_q, grad_k, grad_v = _attention_grad(q, k, v, weights, grad_out)
    # batch axes that were broadcast sum back to each input's own shape
    return _unbroadcast(grad_q, q.shape), _unbroadcast(grad_k, k.shape), _unbroadcast(grad_v, v.shape)


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def multi_head_attention_grad(x, n_heads, grad_out, params=None, padding_mask=None):
    """Gradients of ``multi_head_attention(x, n_heads, params, padding_mask)[0]``.

    Returns ``(grad_x, grad_params)``: ``grad_params`` has the keys of
    ``params`` (``w_q`` ... ``b_o``), or is None when ``params`` is None.
    """
    x = _checks.sequence(x)
    n_heads = _checks.heads(x.shape[-1], n_heads)
    if params is not None:
        params = check_attention_params(params, x.shape[-1], x.dtype)
    mask = _checks.padding_mask(padding_mask, x.shape)
    cache = {}
    out, _ = _mha(x, n_heads, params, mask, cache)
    grad_out = _grad_out(grad_out, out.shape, out.dtype)
    return _mha_grad(x, params, cache, grad_out)


def feed_forward_grad(x, params, grad_out, activation="relu"):
    """Gradients of ``feed_forward(x, params, activation)``: ``(grad_x, grad_params)``.

    ``grad_params`` has the keys ``w1, b1, w2, b2``. Where ReLU's input was
    negative no gradient passes; GELU passes ``Phi(z) + z phi(z)`` of it.
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    activation = _checks.choice(activation, "activation", ACTIVATIONS)
    params = check_ffn_params(params, x.shape[-1], x.dtype)
    cache = {}
    out = _ffn(x, params, activation, None, cache)
    grad_out = _grad_out(grad_out, out.shape, out.dtype)
    return _ffn_grad(x, params, activation, cache, grad_out)


def layer_norm_grad(x, grad_out, gamma=None, beta=None, eps=1e-5):
    """Gradients of ``layer_norm(x, gamma, beta, eps)``: ``(grad_x, grad_gamma, grad_beta)``.

    ``grad_gamma`` and ``grad_beta`` are (d_model,), summed over every position
    (returned even when ``gamma``/``beta`` are None, for scale 1 and shift 0).
    Each row of ``grad_x`` sums to 0: shifting a row's inputs by a constant
    does not change its normalised output.

    >>> grad_x, grad_gamma, grad_beta = layer_norm_grad(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 0.0]))
    >>> grad_x.round(4), grad_beta
    (array([ 0.2041, -0.4082,  0.2041]), array([1., 0., 0.]))
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    d_model = x.shape[-1]
    if gamma is not None:
        gamma = _checks.exact_array(gamma, "gamma", (d_model,), x.dtype)
    if beta is not None:
        _checks.exact_array(beta, "beta", (d_model,), x.dtype)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not eps > 0:
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    grad_out = _grad_out(grad_out, x.shape, x.dtype)
    return _layer_norm_grad(x, gamma, eps, grad_out)


def encoder_block_grad(x, params, n_heads, grad_out, norm="post", padding_mask=None, activation="relu",
                       eps=1e-5, residual=True):
    """Gradients of ``encoder_block(x, params, n_heads, norm, padding_mask, activation, eps, residual)``.

    ``grad_out`` is the gradient of the loss for the block's output
    (..., seq, d_model). Returns ``(grad_x, grad_params)``, ``grad_params``
    nested exactly as ``params`` (``"attn"`` None when ``params["attn"]`` is).
    Dropout is off. A padded position still gets a gradient through its own
    query's path (its output is computed, then usually ignored by the loss),
    but none through the keys and values of others: nobody attends to it.
    """
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, 0.0, None)
    p = check_block_params(params, x.shape[-1], x.dtype)
    grad_out = _grad_out(grad_out, x.shape, x.dtype)
    cache = {}
    _block(x, p, n_heads, norm, mask, activation, eps, residual, 0.0, None, None, cache)
    return _block_grad(p, norm, activation, eps, residual, cache, grad_out)


def encoder_grad(x, layers, n_heads, grad_out, norm="post", padding_mask=None, activation="relu",
                 eps=1e-5, residual=True, keep_layer_grads=False):
    """Gradients of ``encoder(x, layers, ...)``: ``(grad_x, grad_layers)``, one params-shaped dict per block.

    The forward pass keeps each block's intermediates; the backward pass
    runs the blocks in reverse, each block's input gradient being the
    previous block's output gradient. With ``keep_layer_grads=True`` a third
    value lists the gradient for each block's *input* (``[0]`` is ``grad_x``),
    to watch how the gradient's size changes with depth.
    """
    x, n_heads, mask = _prepare(x, n_heads, norm, padding_mask, activation, eps, 0.0, None)
    checked = _check_layers(layers, x.shape[-1], x.dtype)
    grad_out = _grad_out(grad_out, x.shape, x.dtype)
    caches = []
    for p in checked:
        cache = {}
        x = _block(x, p, n_heads, norm, mask, activation, eps, residual, 0.0, None, None, cache)
        caches.append(cache)
    grad_layers, grad_inputs = [], []
    grad = grad_out
    for p, cache in zip(reversed(checked), reversed(caches)):
        grad, grad_p = _block_grad(p, norm, activation, eps, residual, cache, grad)
        grad_layers.append(grad_p)
        grad_inputs.append(grad)
    grad_layers.reverse()
    grad_inputs.reverse()
    if keep_layer_grads:
        return grad, grad_layers, grad_inputs
    return grad, grad_layers
