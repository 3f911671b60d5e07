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

A block's backward pass reads like its forward pass, backwards
(``post_norm_block_grad``, ``pre_norm_block_grad``), from what the forward
pass kept on its tape.

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
from .attention import _blockwise, _mha, mha_arguments, scaled_dot_product_attention, sdpa_arguments
from .block import block_config, check_block_params, check_layers, prepare, run_block, stack_configs
from .ffn import ACTIVATIONS, GATED_ACTIVATIONS, _ffn, _gated_ffn, check_ffn_params, check_gated_params
from .grad_parts import (_attention_grad, _blockwise_grad, _ffn_grad, _gated_ffn_grad, _layer_norm_grad, _mha_grad, _modern_mha_grad,
                         _norm_grad, _rms_norm_grad, _softmax_grad)
from .modern import _modern_mha, classic_attention, modern_attention_arguments, norm_names
from .norm import _gamma_beta, _layer_norm, _rms_norm
from .positional import _positions, rope

# ------------------------------------------------------------------ the block


class BlockPartsGrad:
    """The backward pass of each of a block's parts, from what its forward pass kept on the ``tape``.

    Each method takes the gradient for a part's output and returns the one
    for its input; the parameter gradients collect in ``grads``, nested as
    the block's params.
    """

    def __init__(self, params, config, tape):
        self.params, self.config, self.tape = params, config, tape
        self.grads = {}

    def attn(self, g):
        params, kept = self.params["attn"], self.tape["attn"]
        if classic_attention(self.config):
            g, self.grads["attn"] = _mha_grad(kept, params, g)
        else:  # rotary positions, QK-norm, a window or no biases
            g, self.grads["attn"] = _modern_mha_grad(kept, params, self.config, g)
        return g

    def ffn(self, g):
        grad = _ffn_grad if self.config.ffn == "plain" else _gated_ffn_grad
        g, self.grads["ffn"] = grad(self.tape["ffn"], self.params["ffn"], self.config.activation, g)
        return g

    def norm1(self, g):
        return self._norm("norm1", g)

    def norm2(self, g):
        return self._norm("norm2", g)

    def norm1_out(self, g):
        return self._norm("norm1_out", g)

    def norm2_out(self, g):
        return self._norm("norm2_out", g)

    def _norm(self, name, g):
        g, self.grads[name] = _norm_grad(self.tape.get(name), self.params[name], self.config.norm_kind, g)
        return g

    def skip(self, g):  # the skip connection passes the gradient on unchanged; without it, nothing
        return g if self.config.residual else 0


def post_norm_block_grad(g, b):
    """Backward through x = LN(x + MHA(x)); x = LN(x + FFN(x)): the same steps, the last first."""
    g = b.norm2(g)
    g = b.ffn(g) + b.skip(g)
    g = b.norm1(g)
    return b.attn(g) + b.skip(g)


def pre_norm_block_grad(g, b):
    """Backward through x = x + MHA(LN(x)); x = x + FFN(LN(x)): the same steps, the last first."""
    g = b.skip(g) + b.norm2(b.ffn(g))
    return b.skip(g) + b.norm1(b.attn(g))


def peri_norm_block_grad(g, b):
    """Backward through x = x + LN(MHA(LN(x))); x = x + LN(FFN(LN(x))): the same steps, the last first."""
    g = b.skip(g) + b.norm2(b.ffn(b.norm2_out(g)))
    return b.skip(g) + b.norm1(b.attn(b.norm1_out(g)))


BLOCK_GRADS = {"post": post_norm_block_grad, "pre": pre_norm_block_grad, "peri": peri_norm_block_grad}


def run_block_grad(grad_out, params, config, tape):
    """A block's gradients, unchecked, from the ``tape`` of its forward pass: ``(grad_x, grad_params)``."""
    parts = BlockPartsGrad(params, config, tape)
    grad_x = BLOCK_GRADS[config.norm](grad_out, parts)
    return grad_x, {key: parts.grads.get(key) for key in ("attn", "ffn") + norm_names(config)}


def central_difference(loss, array, index, h=1e-5):
    """The slope of ``loss()`` as ``array[index]`` moves: ``(loss(+h) - loss(-h)) / 2h``, the entry restored.

    The slow, sure way to check a gradient: ``loss`` must read ``array``.

    >>> w = np.array([1.0, 2.0])
    >>> round(central_difference(lambda: float(np.sum(w ** 2)), w, 1), 6)  # d/dw1 of w0^2 + w1^2 = 2 w1
    4.0
    """
    keep = array[index]
    try:
        array[index] = keep + h
        up = loss()
        array[index] = keep - h
        down = loss()
    finally:
        array[index] = keep
    return (up - down) / (2 * h)


# ------------------------------------------------------------------ checks


def _grad_out(grad_out, shape, dtype, name="grad_out"):
    """``grad_out`` must be exactly the output's shape and dtype."""
    return _checks.exact_array(grad_out, f"{name} (the gradient of the loss for the output)", shape, dtype)


# ------------------------------------------------------------------ public


@_checks.public
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


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
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


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def blockwise_attention_grad(q, k, v, grad_out, padding_mask=None, block=64):
    """Gradients of ``blockwise_attention(q, k, v, padding_mask, block)`` for q, k and v, a block of keys at a time.

    The same numbers as ``scaled_dot_product_attention_grad`` (to rounding),
    computed as FlashAttention does: the forward pass keeps each query's
    log-sum-exp of its scores, and the backward pass recomputes one block's
    weights at a time from it, so the (..., seq_q, seq_k) weights never exist.

    >>> rng = np.random.default_rng(0)
    >>> q, k, v, g = rng.standard_normal((4, 6, 3))
    >>> ours, full = blockwise_attention_grad(q, k, v, g, block=2), scaled_dot_product_attention_grad(q, k, v, g)
    >>> all(np.allclose(a, b) for a, b in zip(ours, full))
    True
    """
    q, k, v, mask = sdpa_arguments(q, k, v, padding_mask)
    block, kept = _checks.positive_int(block, "block"), {}
    out = _blockwise(q, k, v, mask, block, kept)
    grads = _blockwise_grad(q, k, v, mask, block, kept, _grad_out(grad_out, out.shape, out.dtype))
    return tuple(_unbroadcast(g, a.shape) for g, a in zip(grads, (q, k, v)))


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def multi_head_attention_grad(x, n_heads, grad_out, params=None, padding_mask=None):
    """Gradients of ``multi_head_attention(x, n_heads, params, padding_mask)[0]``.

    Returns ``(grad_x, grad_params)``: ``grad_params`` has the keys of
    ``params`` (``w_q`` ... ``b_o``), or is None when ``params`` is None.
    """
    x, n_heads, params, mask = mha_arguments(x, n_heads, params, padding_mask)
    kept = {}
    out, _ = _mha(x, n_heads, params, mask, kept)
    return _mha_grad(kept, params, _grad_out(grad_out, out.shape, out.dtype))


@_checks.public
def feed_forward_grad(x, params, grad_out, activation="relu"):
    """Gradients of ``feed_forward(x, params, activation)``: ``(grad_x, grad_params)``.

    ``grad_params`` has the keys ``w1, b1, w2, b2``. Where ReLU's input was
    negative no gradient passes; GELU passes ``Phi(z) + z phi(z)`` of it.
    """
    return _ffn_backward(x, params, grad_out, activation, gated=False)


def _ffn_backward(x, params, grad_out, activation, gated):
    """The plain or the gated FFN's gradients, its arguments checked: the forward pass keeps its tape, then back."""
    x = _checks.float_array(x, "x", min_ndim=1)
    activation = _checks.choice(activation, "activation", GATED_ACTIVATIONS if gated else ACTIVATIONS)
    params = (check_gated_params if gated else check_ffn_params)(params, x.shape[-1], x.dtype)
    kept = {}
    out = (_gated_ffn if gated else _ffn)(x, params, activation, kept)
    return (_gated_ffn_grad if gated else _ffn_grad)(kept, params, activation, _grad_out(grad_out, out.shape, out.dtype))


@_checks.public
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
    gamma, beta = _gamma_beta(gamma, beta, x.shape[-1], x.dtype)
    eps = _checks.positive_number(eps, "eps")
    grad_out = _grad_out(grad_out, x.shape, x.dtype)
    kept = {}
    _layer_norm(x, gamma, beta, eps, kept)
    return _layer_norm_grad(kept, gamma, grad_out)


@_checks.public
def rms_norm_grad(x, grad_out, gamma=None, eps=1e-5):
    """Gradients of ``rms_norm(x, gamma, eps)``: ``(grad_x, grad_gamma)``.

    ``grad_gamma`` is (d_model,), summed over every position (returned even
    when ``gamma`` is None). Unlike layer norm's, a row of ``grad_x`` need not
    sum to 0: RMSNorm does not remove the row's mean.

    >>> grad_x, grad_gamma = rms_norm_grad(np.array([3.0, 4.0]), np.array([1.0, 0.0]))
    >>> grad_x.round(4), grad_gamma.round(4)
    (array([ 0.181 , -0.1358]), array([0.8485, 0.    ]))
    """
    x = _checks.float_array(x, "x", min_ndim=1)
    gamma, _ = _gamma_beta(gamma, None, x.shape[-1], x.dtype)
    eps = _checks.positive_number(eps, "eps")
    kept = {}
    _rms_norm(x, gamma, eps, kept)
    return _rms_norm_grad(kept, gamma, _grad_out(grad_out, x.shape, x.dtype))


@_checks.public
def rope_grad(grad_out, base=10000.0, layout="half", positions=None):
    """The gradient for ``x`` of ``rope(x, base, layout, positions)``, from ``grad_out`` (..., seq, d_head).

    A rotation's gradient is the rotation back: ``rope`` with every position
    negated. It does not depend on ``x`` (the rotation is linear).

    >>> g = np.random.default_rng(0).standard_normal((4, 6))
    >>> bool(np.allclose(rope_grad(rope(g)), g))  # turning back undoes turning
    True
    """
    grad_out = _checks.float_array(grad_out, "grad_out", min_ndim=2)
    positions = _positions(positions, grad_out.shape[-2])
    return rope(grad_out, base, layout, -(np.arange(grad_out.shape[-2]) if positions is None else positions))


@_checks.public
def gated_feed_forward_grad(x, params, grad_out, activation="gelu"):
    """Gradients of ``gated_feed_forward(x, params, activation)``: ``(grad_x, grad_params)``, the params' keys.

    The product ``act(x w_in) * (x w_gate)`` passes each half the gradient
    times the other half; the activated half then passes it through the
    activation's derivative.

    >>> p = {"w_in": np.ones((2, 3)), "w_gate": np.ones((2, 3)), "w_out": np.ones((3, 2))}
    >>> grad_x, grad_p = gated_feed_forward_grad(np.array([1.0, 1.0]), p, np.array([1.0, 0.0]), "relu")
    >>> grad_x, sorted(grad_p)  # d/dx of 3 relu(2x) * 2x per output column: 3 * (2 * 2 + 2 * 2)
    (array([12., 12.]), ['w_gate', 'w_in', 'w_out'])
    """
    return _ffn_backward(x, params, grad_out, activation, gated=True)


@_checks.public(extremes=_checks.ATTENTION_EXTREMES)
def modern_attention_grad(x, params, config, grad_out, padding_mask=None):
    """Gradients of ``modern_attention(x, params, config, padding_mask)[0]``: ``(grad_x, grad_params)``.

    Read backwards: the output projection, attention, the rotation back (with
    ``rope``), the QK-norms (with ``qk_norm``), the q, k, v projections.
    ``grad_params`` has the keys of ``params``.

    >>> import encoder_lib as el
    >>> config = el.BlockConfig(2, norm="pre", bias=False, rope="half", qk_norm=True)
    >>> p = el.init_block_params(8, 16, np.random.default_rng(0), np.float64, config=config)
    >>> grad_x, grad_p = modern_attention_grad(np.ones((5, 8)), p["attn"], config, np.ones((5, 8)))
    >>> grad_x.shape, sorted(grad_p)
    ((5, 8), ['k_norm', 'q_norm', 'w_k', 'w_o', 'w_q', 'w_v'])
    """
    x, params, config, mask = modern_attention_arguments(x, params, config, padding_mask)
    kept = {}
    out, _ = _modern_mha(x, params, config, mask, kept)
    return _modern_mha_grad(kept, params, config, _grad_out(grad_out, out.shape, out.dtype))


def _needs_grad_out(grad_out, where):
    """A block's gradient needs ``grad_out`` (its fourth argument, after n_heads or the config)."""
    if grad_out is None:
        raise TypeError(f"grad_out (the gradient of the loss for the output) must be an array of floats, got None: "
                        f"{where} takes it as its fourth argument, after n_heads or the config")


def _without_dropout(config, where):
    """The backward passes have no dropout: a config with some is refused, not silently run without it."""
    if config.dropout:
        raise ValueError(f"{where} has no dropout, but the config's dropout is {config.dropout}: pass "
                         f"dataclasses.replace(config, dropout=0.0)")
    return config


def _backward_inputs(name, x, grad_out, padding_mask, n_heads, config, layers=None, **options):
    """``(x, mask, config, grad_out)`` of a backward pass through blocks, each checked (``name`` says whose); with
    ``layers`` (a stack's), ``config`` is the list of the blocks' configs."""
    if layers is None:
        config = _without_dropout(block_config(name, n_heads, config, **options), name)
    else:
        config = [_without_dropout(one, name) for one in stack_configs(name, layers, n_heads, config, **options)]
    _needs_grad_out(grad_out, name)
    x, mask = prepare(x, config, padding_mask)
    return x, mask, config, _grad_out(grad_out, x.shape, x.dtype)


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def encoder_block_grad(x, params, n_heads=None, grad_out=None, *, norm="post", padding_mask=None, activation="relu",
                       eps=1e-5, residual=True, config=None):
    """Gradients of ``encoder_block(x, params, n_heads, ...)`` for ``x`` and every parameter.

    Called as ``encoder_block``, with ``grad_out`` after ``n_heads`` (or the
    ``BlockConfig``): the gradient of the loss for the block's output
    (..., seq, d_model). Returns ``(grad_x, grad_params)``, ``grad_params``
    nested exactly as ``params`` (``"attn"`` None when ``params["attn"]`` is).
    Dropout is off (a config with dropout is refused). A padded position
    still gets a gradient through its own query's path (its output is
    computed, then usually ignored by the loss), but none through the keys
    and values of others: nobody attends to it.

    >>> import encoder_lib as el
    >>> p = el.init_block_params(8, 16, np.random.default_rng(0), dtype=np.float64)
    >>> grad_x, grad_p = encoder_block_grad(np.ones((5, 8)), p, 2, np.ones((5, 8)), norm="pre")
    >>> grad_x.shape, sorted(grad_p)
    ((5, 8), ['attn', 'ffn', 'norm1', 'norm2'])
    """
    x, mask, config, grad_out = _backward_inputs("encoder_block_grad", x, grad_out, padding_mask, n_heads, config,
                                                 norm=norm, activation=activation, eps=eps, residual=residual)
    params = check_block_params(params, x.shape[-1], x.dtype, config=config)
    tape = {}
    run_block(x, params, config, mask, tape)
    return run_block_grad(grad_out, params, config, tape)


@_checks.public(extremes=_checks.BLOCK_EXTREMES)
def encoder_grad(x, layers, n_heads=None, grad_out=None, *, norm="post", padding_mask=None, activation="relu",
                 eps=1e-5, residual=True, keep_layer_grads=False, config=None):
    """Gradients of ``encoder(x, layers, ...)``: ``(grad_x, grad_layers)``, one params-shaped dict per block.

    Called as ``encoder_block_grad``, with ``layers``. The forward pass keeps
    each block's intermediates; the backward pass runs the blocks in reverse,
    each block's input gradient being the previous block's output gradient.
    With ``keep_layer_grads=True`` a third value lists the gradient for each
    block's *input* (``[0]`` is ``grad_x``), to watch how the gradient's size
    changes with depth.

    >>> import encoder_lib as el
    >>> rng = np.random.default_rng(0)
    >>> layers = [el.init_block_params(8, 16, rng, dtype=np.float64) for _ in range(3)]
    >>> grad_x, grad_layers = encoder_grad(np.ones((5, 8)), layers, 2, np.ones((5, 8)))
    >>> grad_x.shape, len(grad_layers)
    ((5, 8), 3)
    """
    x, mask, configs, grad_out = _backward_inputs("encoder_grad", x, grad_out, padding_mask, n_heads, config, layers,
                                                  norm=norm, activation=activation, eps=eps, residual=residual)
    checked = check_layers(layers, x.shape[-1], x.dtype, configs)
    keep_layer_grads = _checks.boolean(keep_layer_grads, "keep_layer_grads")
    tapes = []
    for params, one in zip(checked, configs):
        tapes.append({})
        x = run_block(x, params, one, mask, tapes[-1])
    grad_layers, grad_inputs = [], []
    grad = grad_out
    for params, one, tape in reversed(list(zip(checked, configs, tapes))):
        grad, grad_params = run_block_grad(grad, params, one, tape)
        grad_layers.append(grad_params)
        grad_inputs.append(grad)
    grad_layers.reverse()
    grad_inputs.reverse()
    if keep_layer_grads:
        return grad, grad_layers, grad_inputs
    return grad, grad_layers
