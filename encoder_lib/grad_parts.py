"""The backward pass of each part, unchecked: what ``encoder_lib.grad``'s public functions and the block's backward
pass call, each from what the part's forward pass kept on its tape (``kept``).

Each returns the gradient for the part's input and, where it has parameters,
a dict of their gradients with the parameters' own keys.
"""

import numpy as np

from .attention import ATTENTION_KEYS, _merge_heads, _split_heads
from .positional import _rope


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


def _row_mean(a):
    """The mean of each row (last axis), keepdims: ``a.mean(axis=-1)`` to the bit, without its Python wrapper."""
    return np.add.reduce(a, axis=-1, keepdims=True) / a.shape[-1]


def _sum_rows(g):
    """Sum a gradient over every axis but the last: a bias's gradient."""
    return g.reshape(-1, g.shape[-1]).sum(axis=0)


def _weight_grad(x, g):
    """The gradient of ``w`` in ``x @ w``: ``x^T g`` summed over every position of every batch element."""
    return x.reshape(-1, x.shape[-1]).T @ g.reshape(-1, g.shape[-1])


def _mha_grad(kept, params, grad_out):
    """Backward through multi-head attention, from what ``_mha`` kept. Returns grad_x, grad_params."""
    n_heads = kept["q"].shape[-3]
    grads = {}
    if params is None:
        grad_heads = grad_out
    else:
        grads["w_o"] = _weight_grad(kept["heads"], grad_out)
        grads["b_o"] = _sum_rows(grad_out)
        grad_heads = grad_out @ params["w_o"].T
    grad_q, grad_k, grad_v = _attention_grad(kept["q"], kept["k"], kept["v"], kept["weights"],
                                             _split_heads(grad_heads, n_heads))
    grad_q, grad_k, grad_v = _merge_heads(grad_q), _merge_heads(grad_k), _merge_heads(grad_v)
    if params is None:  # identity projections: q = k = v = x
        return grad_q + grad_k + grad_v, None
    grad_qkv = np.concatenate([grad_q, grad_k, grad_v], axis=-1)  # (..., seq, 3 d_model)
    grad_w = _weight_grad(kept["x"], grad_qkv)
    grad_b = _sum_rows(grad_qkv)
    d = kept["x"].shape[-1]
    for i, name in enumerate("qkv"):
        grads[f"w_{name}"] = grad_w[:, i * d : (i + 1) * d]
        grads[f"b_{name}"] = grad_b[i * d : (i + 1) * d]
    return grad_qkv @ kept["w_qkv"].T, {key: grads[key] for key in ATTENTION_KEYS}


def _gelu_derivative(x):
    """d/dx of ``x Phi(x)``: ``Phi(x) + x phi(x)``, with Phi and phi the standard normal's cdf and density."""
    from scipy.special import erf

    cdf = 0.5 * (1 + erf(x * np.asarray(np.sqrt(0.5), dtype=x.dtype)))
    density = np.exp(-0.5 * x * x) * np.asarray(1 / np.sqrt(2 * np.pi), dtype=x.dtype)
    return cdf + x * density


def _ffn_grad(kept, params, activation, grad_out):
    """Backward through the FFN, from what ``_ffn`` kept. Returns grad_x, grad_params."""
    d_model, d_ff = params["w1"].shape
    g = grad_out.reshape(-1, d_model)  # (positions, d_model): every position in one product, as forward
    hidden = kept["hidden"].reshape(-1, d_ff)  # (positions, d_ff)
    grads = {"w2": hidden.T @ g, "b2": g.sum(axis=0)}
    grad_hidden = g @ params["w2"].T  # (positions, d_ff)
    if activation == "relu":
        grad_hidden *= hidden > 0  # relu passes the gradient where it passed the input
    else:
        grad_hidden *= _gelu_derivative(kept["pre"].reshape(-1, d_ff))
    grads["w1"] = kept["x"].reshape(-1, d_model).T @ grad_hidden
    grads["b1"] = grad_hidden.sum(axis=0)
    return (grad_hidden @ params["w1"].T).reshape(grad_out.shape), {key: grads[key] for key in params}


def _layer_norm_grad(kept, gamma, grad_out):
    """Backward through layer norm over the last axis, from the ``xhat`` and ``sigma`` it kept.
    Returns grad_x, grad_gamma, grad_beta.

    With ``xhat = (x - mean) / sigma`` and ``g = grad_out * gamma``:
    ``grad_x = (g - mean(g) - xhat * mean(g * xhat)) / sigma``; the two means
    are what the normalisation's shared mean and variance take back.
    """
    xhat, sigma = kept["xhat"], kept["sigma"]
    g = grad_out if gamma is None else grad_out * gamma
    grad_x = (g - _row_mean(g) - xhat * _row_mean(g * xhat)) / sigma
    return grad_x, _sum_rows(grad_out * xhat), _sum_rows(grad_out)

# ------------------------------------------------------------------ the parts of the encoder since 2017


def _rms_norm_grad(kept, gamma, grad_out):
    """Backward through RMSNorm from the ``xhat`` and ``rms`` it kept: ``(grad_x, grad_gamma)``.

    With ``xhat = x / rms`` and ``g = grad_out * gamma``: ``grad_x = (g - xhat
    * mean(g * xhat)) / rms``, layer norm's without the term for the mean.
    """
    xhat, rms = kept["xhat"], kept["rms"]
    g = grad_out if gamma is None else grad_out * gamma
    return (g - xhat * _row_mean(g * xhat)) / rms, _sum_rows(grad_out * xhat)


def _norm_grad(kept, params, kind, grad_out):
    """Backward through one norm of a block (layer norm, RMSNorm, or none where ``params`` is None):
    ``(grad_x, grad_params)``, ``grad_params`` with the params' keys (None for no norm)."""
    if params is None:
        return grad_out, None
    if kind == "rms":
        grad_x, grad_gamma = _rms_norm_grad(kept, params["gamma"], grad_out)
        return grad_x, {"gamma": grad_gamma}
    grad_x, grad_gamma, grad_beta = _layer_norm_grad(kept, params["gamma"], grad_out)
    return grad_x, {"gamma": grad_gamma, **({"beta": grad_beta} if "beta" in params else {})}


def _silu_derivative(x):
    """d/dx of ``x sigmoid(x)``: ``s + x s (1 - s)``, with ``s = sigmoid(x) = silu(x) / x``."""
    with np.errstate(over="ignore"):  # exp(-x) overflows for very negative x: sigmoid 0, the limit
        s = 1 / (1 + np.exp(-x))
    return s * (1 + x * (1 - s))


DERIVATIVES = {"gelu": _gelu_derivative, "silu": _silu_derivative, "relu": lambda x: x > 0}


def _gated_ffn_grad(kept, params, activation, grad_out):
    """Backward through ``(act(x w_in) * (x w_gate)) w_out``, from what ``_gated_ffn`` kept: grad_x, grad_params."""
    d_model, d_ff = params["w_in"].shape
    pre, act, gate, hidden = (kept[name].reshape(-1, d_ff) for name in ("pre", "act", "gate", "hidden"))
    g = grad_out.reshape(-1, d_model)  # (positions, d_model): every position in one product, as forward
    grads = {"w_out": hidden.T @ g, "b_out": g.sum(axis=0)}
    grad_hidden = g @ params["w_out"].T  # (positions, d_ff)
    grad_gate = grad_hidden * act  # the product's rule: each half's gradient is the other half
    grad_pre = grad_hidden * gate * DERIVATIVES[activation](pre)
    x = kept["x"].reshape(-1, d_model)
    grads.update(w_in=x.T @ grad_pre, w_gate=x.T @ grad_gate, b_in=grad_pre.sum(axis=0), b_gate=grad_gate.sum(axis=0))
    grad_x = grad_pre @ params["w_in"].T + grad_gate @ params["w_gate"].T
    return grad_x.reshape(grad_out.shape), {key: grads[key] for key in params}


def _rope_grad(grad_out, cos, sin, layout):
    """Backward through rotary positions: a rotation's gradient is the rotation back, by the opposite angle."""
    return _rope(grad_out, cos, -sin, layout)


def _modern_mha_grad(kept, params, config, grad_out):
    """Backward through ``_modern_mha`` from what it kept: the output projection, attention, the rotation, the
    QK-norms and the q, k, v projections, in that order. Returns grad_x, grad_params."""
    grads = {"w_o": _weight_grad(kept["heads"], grad_out), "b_o": _sum_rows(grad_out)}
    grad_q, grad_k, grad_v = _attention_grad(kept["q"], kept["k"], kept["v"], kept["weights"],
                                             _split_heads(grad_out @ params["w_o"].T, config.n_heads))
    if config.rope is not None:
        grad_q, grad_k = (_rope_grad(g, kept["cos"], kept["sin"], config.rope) for g in (grad_q, grad_k))
    if config.qk_norm:
        grad_q, grads["q_norm"] = _norm_grad(kept["q_norm"], params["q_norm"], config.norm_kind, grad_q)
        grad_k, grads["k_norm"] = _norm_grad(kept["k_norm"], params["k_norm"], config.norm_kind, grad_k)
    grad_x = 0
    for name, g in zip("qkv", (grad_q, grad_k, grad_v)):
        g = _merge_heads(g)  # (..., seq, d_model)
        grads[f"w_{name}"], grads[f"b_{name}"] = _weight_grad(kept["x"], g), _sum_rows(g)
        grad_x = grad_x + g @ params[f"w_{name}"].T
    return grad_x, {key: grads[key] for key in params}


def _blockwise_grad(q, k, v, mask, block, kept, grad_out):
    """FlashAttention's backward pass: each block's weights recomputed from its scores and each query's log-sum-exp
    (``exp(score - logsumexp)`` is the softmax's weight exactly), never the (..., seq_q, seq_k) matrix.
    Returns grad_q, grad_k, grad_v over the broadcast batch axes."""
    scaled = q * np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype)
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    # sum_j w_ij (grad_out_i . v_j): what the softmax's Jacobian takes from every score of row i (_softmax_grad's sum)
    total = np.sum(grad_out * kept["out"], axis=-1, keepdims=True)  # (..., s_q, 1)
    grad_q = np.zeros(lead + q.shape[-2:], dtype=q.dtype)
    grad_k, grad_v = np.zeros(lead + k.shape[-2:], dtype=q.dtype), np.zeros(lead + v.shape[-2:], dtype=q.dtype)
    for start in range(0, k.shape[-2], block):
        keys = slice(start, start + block)
        scores = scaled @ np.swapaxes(k[..., keys, :], -1, -2)  # (..., s_q, block)
        if mask is not None:
            np.copyto(scores, -np.inf, where=mask[..., None, keys])
        weights = np.exp(scores - kept["logsumexp"])  # this block's weights, as the full softmax's
        grad_v[..., keys, :] = np.swapaxes(weights, -1, -2) @ grad_out
        grad_scores = weights * (grad_out @ np.swapaxes(v[..., keys, :], -1, -2) - total)
        grad_q += grad_scores @ k[..., keys, :]
        grad_k[..., keys, :] = np.swapaxes(grad_scores, -1, -2) @ scaled
    return grad_q * np.asarray(1.0 / np.sqrt(q.shape[-1]), dtype=q.dtype), grad_k, grad_v
